"""The dataset job (ead.data.build): it writes countdown's table and names the settings a synthetic task lacks."""

from __future__ import annotations

import pandas as pd
import pytest

from ead.data.build import main as build_main


def test_build_cli_writes_countdown_parquet(tmp_path):
    out = tmp_path / "data" / "countdown.parquet"
    build_main(["--dataset", "countdown", "--out", str(out), "--seed", "1", "--n-train", "20", "--n-val", "5",
                "--n-test", "5", "--min-solutions", "2", "--p-four-numbers", "0.5"])
    table = pd.read_parquet(out)
    assert len(table) == 30 and set(table["split"]) == {"train", "val", "test"}
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".")]  # no temporary file left behind


def test_build_cli_names_the_settings_a_synthetic_task_lacks(tmp_path, capsys):
    with pytest.raises(SystemExit):
        build_main(["--dataset", "strategy", "--out", str(tmp_path / "s.parquet"), "--seed", "0", "--n-train", "4"])
    assert "--dataset strategy needs --n-val, --n-test, --n-digits (its data.strategy settings)" in \
        capsys.readouterr().err
    with pytest.raises(SystemExit):
        build_main(["--dataset", "gsm8k", "--out", str(tmp_path / "g.parquet")])
    assert "--dataset gsm8k needs --cache-dir" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())
