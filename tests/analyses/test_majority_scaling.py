"""Fig. 9's job (ead.analyses.majority_scaling): the summary is the exact Maj@N with a bootstrap CI over
questions, and the job refuses countdown."""

import logging

import pytest

from ead.analyses import majority_scaling
from ead.analyses.majority_scaling import main as majority_main
from ead.metrics import bootstrap_mean_ci, maj_at_n_brute_force
from ead.tables import MAJORITY_SAMPLES, MAJORITY_SCALING
from tests.analyses.conftest import majority_samples


def test_majority_summary_is_exact_maj_at_n_with_a_bootstrap_ci_over_questions(tmp_path):
    samples = MAJORITY_SAMPLES.validate(majority_samples())
    table = majority_scaling.write_summary(samples, tmp_path / "m.csv", resamples=200, seed=3,
                                           log=logging.getLogger("test"))
    assert MAJORITY_SCALING.read(tmp_path / "m.csv")[["sampler", "n", "maj_at_n"]].equals(
        table[["sampler", "n", "maj_at_n"]])
    assert len(table) == 2 * 3 and set(table.samples_per_question) == {3} and set(table.model_name) == {"m"}
    for row in table.itertuples():
        unit = samples[samples.sampler == row.sampler]
        per_question = [maj_at_n_brute_force(group.sort_values("sample_id").vote_group, group.sort_values(
            "sample_id").correct, row.n) for _, group in unit.groupby("prompt_id")]
        assert (row.maj_at_n, row.ci_low, row.ci_high) == pytest.approx(
            bootstrap_mean_ci(per_question, resamples=200, seed=3))
        assert row.num_units == 4 and row.accuracy == pytest.approx(unit.correct.mean())
        assert row.no_answer_rate == pytest.approx(unit.predicted.isna().mean())
        assert row.schedule_params == unit.schedule_params.iloc[0]


def test_majority_job_refuses_countdown(tiny_policy, tmp_path, capsys):
    model, data = tiny_policy
    with pytest.raises(SystemExit):
        majority_main(["--model", str(model), "--data", str(data), "--task", "countdown", "--num-questions", "1",
                       "--engine", "hf", "--dtype", "float32", "--question-seed", "0", "--seed", "0", "--batch-size",
                       "8",
                       "--samples", "2", "--max-new-tokens", "8", "--threads", "1", "--schedules",
                       '{"name": "fixed", "tau": 1.0}', "--samples-out", str(tmp_path / "m.parquet")])
    message = "Maj@N votes on answers, and countdown's correct responses do not share one answer"
    assert message in capsys.readouterr().err
