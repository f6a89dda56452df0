"""An analysis' summary table from its samples alone (ead.analyses.summary_tables), and its options."""

import pytest

from ead.analyses.summary_tables import main as summarise_main
from tests.analyses.conftest import run_entropy


def test_the_summary_job_gives_the_one_go_table_from_the_samples_alone(tiny_model_dir, mmlu_like, tmp_path):
    """What the workflow runs (the job without summary options, then python -m ead.analyses.summary_tables) writes the
    table of a one-go run byte for byte."""
    run_entropy(tiny_model_dir, mmlu_like, tmp_path)
    alone = tmp_path / "alone"
    alone.mkdir()
    _, samples = run_entropy(tiny_model_dir, mmlu_like, alone, summary=())
    assert not (alone / "entropy.csv").exists() and len(samples) == 12
    summarise_main(["--analysis", "entropy_by_position", "--samples", str(alone / "entropy_samples.parquet"),
                    "--bootstrap", "100", "--seed", "0", "--out", str(alone / "entropy.csv")])
    assert (alone / "entropy.csv").read_bytes() == (tmp_path / "entropy.csv").read_bytes()


def test_summary_options_go_together(tiny_model_dir, mmlu_like, tmp_path, capsys):
    with pytest.raises(SystemExit):
        run_entropy(tiny_model_dir, mmlu_like, tmp_path, summary=("--seed", "0"))  # --out without --bootstrap
    assert "--out, --bootstrap go together (they make the summary table); got only --out" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        summarise_main(["--analysis", "forking", "--samples", "s.parquet", "--bootstrap", "100", "--seed", "0",
                        "--out", "f.csv"])
    assert "--k (K of Pass@K and Maj@K) is forking's summary option" in capsys.readouterr().err
    assert not (tmp_path / "entropy_samples.parquet").exists()  # refused before sampling
