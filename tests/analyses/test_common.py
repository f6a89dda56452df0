"""What the sampling analyses share (ead.analyses.common): per-question Maj@N curves with equivalent answers
grouped, the summaries' bootstrap over units, question selection and prompts, and graded samples' statuses."""

import pandas as pd
import pytest

from ead.analyses.common import (
    add_vote_groups,
    bootstrap_cell_means,
    maj_curves,
    sample_questions,
    solution_steps,
    task_prompt,
)
from ead.data.tasks import get_task
from ead.metrics import bootstrap_mean_ci


def test_maj_curves_group_math_verify_equivalent_answers():
    samples = pd.DataFrame({
        "sampler": ["s"] * 5, "prompt_id": ["q"] * 5, "sample_id": range(5),
        "predicted": ["3", "1/2", "0.5", "3", "\\frac{1}{2}"],
        "correct": [0.0, 1.0, 1.0, 0.0, 1.0],
    })
    grouped = add_vote_groups(samples, ["sampler", "prompt_id"], "gsm8k")
    assert list(grouped["vote_group"]) == [0, 1, 1, 0, 1]
    curves = maj_curves(grouped, ["sampler", "prompt_id"]).set_index("n")
    assert curves.loc[5, "maj_at_n"] == 1.0  # three spellings of 1/2 beat two votes for 3
    assert curves.loc[5, "num_vote_groups"] == 2
    letters = add_vote_groups(samples.assign(predicted=["B", "A", "A", "B", None]), ["prompt_id"], "mmlu")
    assert list(letters["vote_group"]) == [0, 1, 1, 0, -1]  # no answer, no vote
    assert maj_curves(letters, ["prompt_id"]).set_index("n").loc[5, "maj_at_n"] == 0.0  # A-B tie: the first (B) wins


def test_summarise_is_mean_with_bootstrap_ci_over_units():
    per_unit = pd.DataFrame({"cell": ["x"] * 4 + ["y"] * 2, "v": [1.0, 0.0, 0.5, 0.5, 0.2, 0.4]})
    table = bootstrap_cell_means(per_unit, ["cell"], "v", resamples=300, seed=1).set_index("cell")
    assert table.loc["x", "value"] == pytest.approx(0.5) and table.loc["y", "num_units"] == 2
    assert table.loc["x", ["value", "ci_low", "ci_high"]].tolist() == pytest.approx(
        list(bootstrap_mean_ci([1.0, 0.0, 0.5, 0.5], resamples=300, seed=1)))


def test_question_selection_and_prompts():
    table = pd.DataFrame({"id": [f"q{i}" for i in range(10)], "question": ["?"] * 10, "answer": ["1"] * 10,
                          "solution": ["a\nb\n#### 1"] * 5 + ["a\nb\nc\n#### 1"] * 5})
    subset = sample_questions(table, 3, seed=0, source="t")
    assert len(subset) == 3 and subset.equals(sample_questions(table, 3, seed=0, source="t"))
    easy = sample_questions(table, 10, seed=0, source="t", max_solution_steps=2)
    assert list(easy["id"]) == [f"q{i}" for i in range(5)] and solution_steps("a\nb\n#### 1") == 2
    assert task_prompt("2+2?", "gsm8k").endswith("\\boxed{}.") and "The answer is (X)" in task_prompt("Q", "mmlu")
    # countdown: the bare problem the tiny policies were trained on, no instruction
    assert task_prompt("Numbers: 2 9 14\nTarget: 2\n", "countdown") == "Numbers: 2 9 14\nTarget: 2\n"
    with pytest.raises(ValueError, match="No chain-of-thought prompt for task 'arc'"):
        task_prompt("Q", "arc")
    splits = table.assign(split=["train"] * 6 + ["test"] * 4)
    assert list(sample_questions(splits, 10, seed=0, source="t", split="test")["id"]) == ["q6", "q7", "q8", "q9"]
    with pytest.raises(SystemExit, match="t: no rows of split 'val'; splits: \\['test', 'train'\\]"):
        sample_questions(splits, 2, seed=0, source="t", split="val")
    assert get_task("mmlu").answers_unique and get_task("gsm8k").answers_unique
    assert not get_task("countdown").answers_unique


def test_graded_samples_carry_the_graders_status(monkeypatch):
    """A timeout scores 0 like a wrong answer; the samples table says which it was, and too many fail the job."""
    import ead.analyses.common as common
    from ead.rewards import Grade, TooManyTimeouts, configure_grader

    samples = pd.DataFrame({"text": ["so \\boxed{4}", "so \\boxed{5}", "no idea", "\\boxed{(x+1)^2}"]})
    timed_out = {"\\boxed{(x+1)^2}"}
    real = common.grade_many
    monkeypatch.setattr(common, "grade_many", lambda texts, refs, task: [
        Grade(0.0, "(x+1)^2", "timeout") if text in timed_out else grade
        for text, grade in zip(texts, real(texts, refs, task))])
    configure_grader(max_timeout_share=0.25)
    try:
        graded = common.grade_samples(samples.copy(), ["4"] * 4, "math", "test job")
        assert graded["grade_status"].tolist() == ["correct", "wrong", "no_answer", "timeout"]
        assert graded["correct"].tolist() == [1.0, 0.0, 0.0, 0.0]
        timed_out.add("so \\boxed{5}")
        with pytest.raises(TooManyTimeouts, match=r"test job: 2 of 4 answers \(50\.0%\) timed out"):
            common.grade_samples(samples.copy(), ["4"] * 4, "math", "test job")
    finally:
        configure_grader()
