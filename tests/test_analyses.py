"""Sampling analyses: entropy-by-position aggregation against a direct computation, prefix selection for forking,
per-question Maj@N curves with equivalent answers grouped, question selection, and the entropy job on the HF engine
(its recorded entropies = the teacher-forced rescoring the vLLM engine relies on). The vLLM engine's runs of all three
analyses are in tests/vllm/test_vllm_analyses.py."""

import numpy as np
import pandas as pd
import pytest
import torch
from transformers import AutoTokenizer

from ead.analyses.common import cot_prompt, maj_curves, select_questions, solution_steps, summarise
from ead.analyses.entropy_by_position import entropy_by_position, rescore_entropies
from ead.analyses.entropy_by_position import main as entropy_main
from ead.samplers.engines import encode_prompts
from ead.analyses.forking import select_references
from ead.metrics import bootstrap_mean_ci
from tests.conftest import LOGIT_ATOL, entropy_tolerance


def direct_entropy_by_position(prompt_ids, entropies):
    """Plain loops over a padded array with an explicit mask: per question, then across questions."""
    questions = sorted(set(prompt_ids), key=list(prompt_ids).index)
    width = max(len(e) for e in entropies)
    padded = np.zeros((len(entropies), width))
    mask = np.zeros((len(entropies), width), dtype=bool)
    for row, e in enumerate(entropies):
        padded[row, : len(e)] = e
        mask[row, : len(e)] = True
    means, counts = [], []
    for t in range(width):
        per_question = []
        for q in questions:
            rows = [r for r, p in enumerate(prompt_ids) if p == q and mask[r, t]]
            if rows:
                per_question.append(np.mean(padded[rows, t]))
        means.append(np.mean(per_question))
        counts.append(len(per_question))
    return np.array(means), np.array(counts), mask.sum(0)


def test_entropy_aggregation_equals_direct_computation_on_ragged_responses():
    rng = np.random.default_rng(0)
    prompt_ids, entropies = [], []
    for q in range(5):
        for _ in range(int(rng.integers(1, 4))):  # a different number of responses per question
            prompt_ids.append(f"q{q}")
            entropies.append(rng.gamma(2.0, 0.5, size=int(rng.integers(1, 30))))  # ragged lengths
    table = entropy_by_position(prompt_ids, entropies, resamples=200, seed=3)
    means, questions_alive, responses_alive = direct_entropy_by_position(prompt_ids, entropies)
    assert list(table["position"]) == list(range(len(means)))
    np.testing.assert_allclose(table["mean_entropy"], means, rtol=1e-12)
    np.testing.assert_array_equal(table["num_questions"], questions_alive)
    np.testing.assert_array_equal(table["num_responses"], responses_alive)
    np.testing.assert_allclose(table["fraction_alive"], responses_alive / len(entropies))
    assert (table["ci_low"] <= table["mean_entropy"] + 1e-12).all()
    assert (table["mean_entropy"] <= table["ci_high"] + 1e-12).all()


def test_entropy_aggregation_weights_questions_not_tokens():
    # question a: two responses (entropy 1 and 3) -> 2; question b: one response (entropy 10) -> overall (2 + 10) / 2
    table = entropy_by_position(["a", "a", "b"], [[1.0], [3.0], [10.0]], resamples=100)
    assert table.loc[0, "mean_entropy"] == pytest.approx(6.0)
    # a bootstrap CI over one question is a point
    single = entropy_by_position(["a"], [[0.5, 0.25]], resamples=100)
    assert list(single["ci_low"]) == list(single["ci_high"]) == [0.5, 0.25]


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


def test_maj_curves_group_math_verify_equivalent_answers():
    samples = pd.DataFrame({
        "sampler": ["s"] * 5, "prompt_id": ["q"] * 5, "sample_id": range(5),
        "predicted": ["3", "1/2", "0.5", "3", "\\frac{1}{2}"],
        "correct": [0.0, 1.0, 1.0, 0.0, 1.0],
    })
    curves = maj_curves(samples, ["sampler", "prompt_id"], "gsm8k").set_index("n")
    assert curves.loc[5, "maj_at_n"] == 1.0  # three spellings of 1/2 beat two votes for 3
    assert curves.loc[5, "num_vote_groups"] == 2
    letters = maj_curves(samples.assign(predicted=["B", "A", "A", "B", None]), ["prompt_id"], "mmlu")
    assert letters.set_index("n").loc[5, "maj_at_n"] == 0.0  # A-B tie: the first sample's answer (B) wins


def test_summarise_is_mean_with_bootstrap_ci_over_units():
    per_unit = pd.DataFrame({"cell": ["x"] * 4 + ["y"] * 2, "v": [1.0, 0.0, 0.5, 0.5, 0.2, 0.4]})
    table = summarise(per_unit, ["cell"], "v", resamples=300, seed=1).set_index("cell")
    assert table.loc["x", "value"] == pytest.approx(0.5) and table.loc["y", "num_units"] == 2
    assert table.loc["x", ["value", "ci_low", "ci_high"]].tolist() == pytest.approx(
        list(bootstrap_mean_ci([1.0, 0.0, 0.5, 0.5], resamples=300, seed=1)))


def test_question_selection_and_prompts():
    table = pd.DataFrame({"id": [f"q{i}" for i in range(10)], "question": ["?"] * 10, "answer": ["1"] * 10,
                          "solution": ["a\nb\n#### 1"] * 5 + ["a\nb\nc\n#### 1"] * 5})
    subset = select_questions(table, 3, seed=0, source="t")
    assert len(subset) == 3 and subset.equals(select_questions(table, 3, seed=0, source="t"))
    easy = select_questions(table, 10, seed=0, source="t", max_solution_steps=2)
    assert list(easy["id"]) == [f"q{i}" for i in range(5)] and solution_steps("a\nb\n#### 1") == 2
    assert cot_prompt("2+2?", "gsm8k").endswith("\\boxed{}.") and "The answer is (X)" in cot_prompt("Q", "mmlu")
    with pytest.raises(ValueError, match="No chain-of-thought prompt for task 'countdown'"):
        cot_prompt("Q", "countdown")


@pytest.fixture
def mmlu_like(tmp_path):
    path = tmp_path / "mmlu.parquet"
    pd.DataFrame({"id": [f"q{i}" for i in range(6)], "question": [f"what is {i} + 1 ? (a) {i} (b) {i + 1}" for i in range(6)],
                  "answer": ["B"] * 6, "subject": ["astronomy", "anatomy"] * 3}).to_parquet(path)
    return path


def run_entropy(model_dir, data, tmp_path, *extra):
    out, samples = tmp_path / "entropy.csv", tmp_path / "entropy_samples.parquet"
    entropy_main(["--model", str(model_dir), "--data", str(data), "--task", "mmlu", "--num-questions", "10",
                  "--samples", "2", "--max-new-tokens", "16", "--prompt-format", "plain", "--batch-size", "3",
                  "--bootstrap", "100", "--threads", "1", "--samples-out", str(samples), "--out", str(out), *extra])
    return pd.read_csv(out), pd.read_parquet(samples)


def test_entropy_job_on_the_hf_engine_matches_rescoring_and_keeps_only_chosen_subjects(tiny_model_dir, mmlu_like,
                                                                                       tmp_path):
    table, samples = run_entropy(tiny_model_dir, mmlu_like, tmp_path, "--subjects", "astronomy")
    assert sorted(samples.prompt_id.unique()) == ["q0", "q2", "q4"] and len(samples) == 6
    assert set(table.model_name) == {tiny_model_dir.name} and set(table.engine) == {"hf"}
    assert set(table.subjects) == {"astronomy"} and table.position.max() < 16
    # the vLLM engine gets its entropies from this rescoring: it must reproduce what the HF sampler recorded
    questions = pd.read_parquet(mmlu_like).set_index("id")
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir, local_files_only=True)
    prompt_tokens = {q: encode_prompts(tokenizer, [cot_prompt(questions.loc[q, "question"], "mmlu")], False)[0]
                     for q in samples.prompt_id.unique()}
    rescored = rescore_entropies(samples.assign(entropies=None), prompt_tokens, str(tiny_model_dir), "float32", 4)
    for recorded, again, mean in zip(samples.entropies, rescored.entropies, rescored.mean_entropy):
        assert len(recorded) == len(again) > 0
        # the rescoring pass pads and groups differently: logits round apart by up to LOGIT_ATOL (see conftest)
        tolerance = entropy_tolerance(torch.tensor(recorded), LOGIT_ATOL).numpy()
        assert (np.abs(np.asarray(again) - recorded) <= tolerance).all()
        assert abs(mean - float(np.mean(recorded))) <= tolerance.max()


def test_unknown_subject_and_bad_engine_options_are_named(tiny_model_dir, mmlu_like, tmp_path):
    with pytest.raises(SystemExit, match=r"unknown subject\(s\) \['astronmy'\]; known: \['anatomy', 'astronomy'\]"):
        run_entropy(tiny_model_dir, mmlu_like, tmp_path, "--subjects", "astronmy")
    with pytest.raises(SystemExit, match=r"--vllm-options is not JSON"):
        run_entropy(tiny_model_dir, mmlu_like, tmp_path, "--engine", "vllm", "--vllm-options", "{tensor_parallel_size: 2}")
    assert not (tmp_path / "entropy.csv").exists()
