"""Fig. 2's job (ead.analyses.forking): prefix selection (random and per distinct answer), its summary's k, and
Pass@k of forks on countdown."""

import logging

import numpy as np
import pandas as pd
import pytest

from ead.analyses import forking
from ead.analyses.forking import select_references
from tests.analyses.conftest import majority_samples
from tests.conftest import fork_samples


def _pool():
    return pd.DataFrame({
        "prompt_id": ["q1"] * 4 + ["q2"] * 2 + ["q3"],
        "sample_id": [0, 1, 2, 3, 0, 1, 0],
        "num_tokens": [50, 80, 90, 70, 10, 80, 20],
        "predicted": ["A", "B", "A", None, "C", "C", "D"],
    })


def test_random_prefix_selection_takes_one_eligible_reference_per_question_reproducibly():
    chosen = select_references(_pool(), "random", min_tokens=60, seed=0, task="mmlu")
    assert list(chosen["prompt_id"]) == ["q1", "q2"]  # q3 has no reference longer than 60 tokens
    assert (chosen["num_tokens"] > 60).all()
    assert chosen.equals(select_references(_pool(), "random", min_tokens=60, seed=0, task="mmlu"))
    picks = {int(select_references(_pool(), "random", 60, seed, "mmlu").iloc[0]["sample_id"]) for seed in range(20)}
    assert picks == {1, 2, 3}  # every eligible q1 reference can be drawn


def test_per_answer_prefix_selection_takes_one_reference_per_distinct_answer():
    chosen = select_references(_pool(), "per_answer", min_tokens=60, seed=0, task="mmlu")
    assert list(zip(chosen["prompt_id"], chosen["sample_id"])) == [("q1", 1), ("q1", 2), ("q1", 3), ("q2", 1)]
    with pytest.raises(ValueError, match="Unknown prefix selection 'first'"):
        select_references(_pool(), "first", 60, 0, "mmlu")


def test_forking_summary_keeps_the_requested_k_and_refuses_a_k_beyond_the_continuations(tmp_path):
    # each (sampler, question) of the Maj@N table becomes one reference's prefix: tau 0.6's cut at p = 0, 1.0's at 16
    samples = majority_samples().rename(columns={"prompt_id": "question_id"}).drop(columns="schedule_params")
    samples = samples.assign(unit=samples.question_id + "#" + samples.sampler,
                             fork_point=np.where(samples.sampler == "tau = 0.6", 0, 16)).drop(columns="sampler")
    table = forking.write_summary(samples, tmp_path / "f.csv", k=[1, 3], resamples=100, seed=0,
                                  log=logging.getLogger("test"))
    assert set(zip(table.fork_point, table.k)) == {(0, 1), (0, 3), (16, 1), (16, 3)}
    assert set(table.metric) == {"maj@k", "pass@k"}  # MMLU letters are unique answers: both metrics
    assert (table.num_units == 4).all() and set(table.model_name) == {"m"}
    # Pass@k per reference is the unbiased estimator over its 3 continuations: with 3 of 3 drawn, any correct one
    pass3 = table[(table.metric == "pass@k") & (table.k == 3)].set_index("fork_point")["value"]
    any_correct = samples.groupby(["fork_point", "unit"])["correct"].max().groupby("fork_point").mean()
    assert pass3.to_dict() == pytest.approx(any_correct.to_dict())
    pass1 = table[(table.metric == "pass@k") & (table.k == 1)].set_index("fork_point")["value"]
    assert pass1.to_dict() == pytest.approx(samples.groupby("fork_point")["correct"].mean().to_dict())
    with pytest.raises(ValueError, match="Pass@8 and Maj@8 need 8 continuations per prefix; the samples have 3"):
        forking.write_summary(samples, tmp_path / "f.csv", k=[1, 8], resamples=100, seed=0, log=logging.getLogger())


def test_forking_on_countdown_reports_pass_at_k_only():
    per_unit = forking.per_unit_metrics(fork_samples(), [1, 2, 4])
    assert set(per_unit["metric"]) == {"pass@k"}  # countdown answers are not unique: no Maj@k
    values = per_unit.set_index(["unit", "fork_point", "k"])["value"]
    # r0 at p = 0: 2 of 4 correct -> pass@1 = 0.5, pass@2 = 1 - C(2,2)/C(4,2) = 5/6, pass@4 = 1
    assert values[("r0", 0, 1)] == pytest.approx(0.5) and values[("r0", 0, 2)] == pytest.approx(5 / 6)
    assert values[("r0", 0, 4)] == 1.0 and values[("r0", 8, 4)] == 0.0 and values[("r2", 8, 2)] == pytest.approx(0.5)
