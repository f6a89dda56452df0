"""Sampling analyses: entropy-by-position aggregation against a direct computation, prefix selection for forking,
per-question Maj@N curves with equivalent answers grouped, question selection, the summaries of a fixed samples table
against a direct bootstrap, and the entropy job on the HF engine (its recorded entropies = the teacher-forced
rescoring the vLLM engine relies on; its summary job gives the table of a one-go run). The vLLM engine's runs of all
three analyses are in tests/vllm/test_vllm_analyses.py."""

import logging

import numpy as np
import pandas as pd
import pytest
import torch
from transformers import AutoTokenizer

from ead.analyses import forking, majority_scaling
from ead.analyses.common import (
    add_vote_groups,
    bootstrap_cell_means,
    maj_curves,
    sample_questions,
    solution_steps,
    task_prompt,
)
from ead.analyses.entropy_by_position import entropy_by_position, rescore_entropies
from ead.analyses.entropy_by_position import main as entropy_main
from ead.analyses.forking import select_references
from ead.analyses.summary_tables import main as summarise_main
from ead.metrics import bootstrap_mean_ci, maj_at_n_brute_force
from ead.rewards import answers_unique
from ead.samplers.engines import encode_prompts
from ead.tables import ENTROPY_SAMPLES, MAJORITY_SAMPLES, MAJORITY_SCALING
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


def majority_samples():
    """A graded Maj@N samples table: 2 samplers x 4 questions x 3 samples, letter answers, with the settings columns."""
    rng = np.random.default_rng(7)
    rows = [{"sampler": sampler, "schedule_params": f'{{"tau": {tau}}}', "prompt_id": f"q{q}", "sample_id": i,
             "text": "", "num_tokens": int(rng.integers(1, 20)), "finished": True,
             "predicted": rng.choice(["A", "B", None]), "correct": 0.0}
            for sampler, tau in (("tau = 0.6", 0.6), ("tau = 1.0", 1.0)) for q in range(4) for i in range(3)]
    samples = pd.DataFrame(rows)
    samples["correct"] = (samples["predicted"] == "A").astype(float)  # the reference answer is A
    samples = add_vote_groups(samples, majority_scaling.UNIT, "mmlu")
    return samples.assign(model_name="m", engine="hf", task="mmlu", samples_per_question=3, sampling_seed=0)


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
    assert answers_unique("mmlu") and answers_unique("gsm8k") and not answers_unique("countdown")


@pytest.fixture
def mmlu_like(tmp_path):
    path = tmp_path / "mmlu.parquet"
    pd.DataFrame({"id": [f"q{i}" for i in range(6)],
                  "question": [f"what is {i} + 1 ? (a) {i} (b) {i + 1}" for i in range(6)],
                  "answer": ["B"] * 6, "subject": ["astronomy", "anatomy"] * 3}).to_parquet(path)
    return path


def run_entropy(model_dir, data, tmp_path, *extra, summary=("--bootstrap", "100")):
    """The entropy job, by default in one go (samples and summary); ``summary=()`` writes the samples only."""
    out, samples = tmp_path / "entropy.csv", tmp_path / "entropy_samples.parquet"
    summary = [*summary, "--out", str(out)] if summary else []
    entropy_main(["--model", str(model_dir), "--data", str(data), "--task", "mmlu", "--num-questions", "10",
                  "--engine", "hf", "--dtype", "float32", "--question-seed", "0", "--seed", "0", "--tau", "1.0",
                  "--samples", "2", "--max-new-tokens", "16", "--prompt-format", "plain", "--batch-size", "3",
                  "--threads", "1", "--samples-out", str(samples), *summary, *extra])
    return (pd.read_csv(out) if summary else None), ENTROPY_SAMPLES.read(samples)


def test_entropy_job_on_the_hf_engine_matches_rescoring_and_keeps_only_chosen_subjects(tiny_model_dir, mmlu_like,
                                                                                       tmp_path):
    table, samples = run_entropy(tiny_model_dir, mmlu_like, tmp_path, "--subjects", "astronomy")
    assert sorted(samples.prompt_id.unique()) == ["q0", "q2", "q4"] and len(samples) == 6
    assert set(table.model_name) == {tiny_model_dir.name} and set(table.engine) == {"hf"}
    assert set(table.subjects) == {"astronomy"} and table.position.max() < 16
    # the vLLM engine gets its entropies from this rescoring: it must reproduce what the HF sampler recorded
    questions = pd.read_parquet(mmlu_like).set_index("id")
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir, local_files_only=True)
    prompt_tokens = {q: encode_prompts(tokenizer, [task_prompt(questions.loc[q, "question"], "mmlu")], False)[0]
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
        run_entropy(tiny_model_dir, mmlu_like, tmp_path, "--engine", "vllm",
                    "--vllm-options", "{tensor_parallel_size: 2}")
    assert not (tmp_path / "entropy.csv").exists()


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
