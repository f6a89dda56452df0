"""The sampling CLI (ead.samplers.sample, HF engine): table shape, per-token consistency, seeding, input errors and
progress logging."""

import json

import numpy as np
import pandas as pd
import pytest

from ead.samplers.sample import main
from tests.conftest import float32_sum_tolerance


@pytest.fixture
def prompts_csv(tmp_path):
    path = tmp_path / "prompts.csv"
    pd.DataFrame({"id": ["a", "b", "c"], "prompt": ["1+2=", "numbers: 3 4\n", "x"]}).to_csv(path, index=False)
    return path


def run(tiny_model_dir, prompts_csv, out, *extra):
    schedule = json.dumps({"name": "ead", "tau_max": 1.2, "tau_min": 0.1, "d0": 25, "warmup": 3})
    main(["--model", str(tiny_model_dir), "--prompts", str(prompts_csv), "--schedule", schedule, "--n", "4",
          "--max-new-tokens", "24", "--seed", "7", "--batch-size", "5", "--step", "3", "--out", str(out), *extra])
    return pd.read_parquet(out)


def test_table_has_one_row_per_sample_with_consistent_per_token_columns(tiny_model_dir, prompts_csv, tmp_path):
    table = run(tiny_model_dir, prompts_csv, tmp_path / "samples.parquet")
    assert len(table) == 12
    assert sorted(zip(table.prompt_id, table.sample_id)) == [(p, k) for p in "abc" for k in range(4)]
    assert (table.num_tokens <= 24).all() and (table.num_tokens >= 1).all()
    for row in table.itertuples():
        assert len(row.token_ids) == len(row.behaviour_logprobs) == len(row.entropies) == row.num_tokens
        # the table's sum is torch's float32 sum; another order (numpy, another CPU kernel) rounds differently
        assert row.sum_behaviour_logprob == pytest.approx(float(np.sum(row.behaviour_logprobs)),
                                                          abs=float32_sum_tolerance(row.behaviour_logprobs))
        # warm-up c = 3: the first three tokens are sampled at tau = 1
        np.testing.assert_allclose(row.behaviour_logprobs[:3], row.target_logprobs[:3], atol=1e-6)
        assert row.finished == (row.num_tokens < 24 or row.token_ids[-1] == 2)
    settings = table.iloc[0]
    assert settings.engine == "hf" and settings.schedule == "ead" and settings.step == 3 and settings.seed == 7
    assert json.loads(settings.schedule_params)["warmup"] == 3


def test_same_seed_same_samples(tiny_model_dir, prompts_csv, tmp_path):
    first = run(tiny_model_dir, prompts_csv, tmp_path / "one.parquet")
    second = run(tiny_model_dir, prompts_csv, tmp_path / "two.parquet")
    pd.testing.assert_frame_equal(first, second)


def test_missing_prompt_column_is_named(tiny_model_dir, prompts_csv, tmp_path):
    with pytest.raises(SystemExit, match=r"no column 'question'"):
        run(tiny_model_dir, prompts_csv, tmp_path / "x.parquet", "--prompt-column", "question")
    assert not (tmp_path / "x.parquet").exists()


def test_sampling_logs_progress_in_tokens_with_rate_and_eta(tiny_model_dir, prompts_csv, tmp_path, capsys, monkeypatch):
    """One batch of 12 sequences (the entropy analysis' case: the whole job one batch) still reports its progress
    in token positions, with the rate and the remaining time, in a log (stderr not a terminal)."""
    import ead.io

    monkeypatch.setattr(ead.io, "LOG_PROGRESS_INTERVAL_S", 0.0)  # a line per position instead of one per 20 s
    schedule = json.dumps({"name": "fixed", "tau": 1.0})
    main(["--model", str(tiny_model_dir), "--prompts", str(prompts_csv), "--schedule", schedule, "--n", "4",
          "--max-new-tokens", "24", "--seed", "7", "--batch-size", "12", "--step", "0", "--out",
          str(tmp_path / "s.parquet")])
    lines = [line for line in capsys.readouterr().err.splitlines() if "sampling (hf, 12 sequences)" in line]
    assert len(lines) > 2  # progress inside the one batch, not only 0/1 and 1/1
    assert "/288 tok" in lines[-1] and "288/288 tok" in lines[-1]  # 12 sequences x 24 positions, all done
    assert "tok/s" in lines[-1] and "<" in lines[-1]  # rate and elapsed<remaining
