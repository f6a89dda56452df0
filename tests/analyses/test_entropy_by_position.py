"""Fig. 1's job (ead.analyses.entropy_by_position): entropy by position against a direct computation, questions
weighted equally, the job on the HF engine (its entropies = the teacher-forced rescoring), entropy by token role,
its errors, and the job on a tiny countdown policy."""


import numpy as np
import pandas as pd
import pytest
import torch
from transformers import AutoTokenizer

from ead.analyses.common import (
    task_prompt,
)
from ead.analyses.entropy_by_position import (
    entropy_by_position,
    entropy_by_role,
    rescore_entropies,
    token_roles,
    write_role_summary,
)
from ead.analyses.entropy_by_position import main as entropy_main
from ead.analyses.forking import main as forking_main
from ead.metrics import bootstrap_mean_ci
from ead.samplers.engines import encode_prompts
from ead.tables import ENTROPY_BY_ROLE, ENTROPY_SAMPLES
from tests.analyses.conftest import run_entropy
from tests.conftest import LOG, LOGIT_ATOL, entropy_tolerance, role_samples


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


def test_token_roles_add_the_end_token_and_refuse_a_broken_count():
    text = "1+2=3\n\\boxed{3}"
    assert token_roles(text, len(text) + 1, True, "countdown")[-1] == "end"
    assert token_roles(text, len(text), False, "countdown")[-1] == "syntax"
    # a special token sampled inside the response decodes to nothing: tokens no longer map onto characters
    assert token_roles(text, len(text) + 2, True, "countdown") is None


def test_entropy_by_role_is_a_mean_over_questions_of_per_question_token_means(tmp_path):
    samples = role_samples()
    table = write_role_summary(samples, tmp_path / "roles.csv", resamples=200, seed=0, log=LOG)
    by_role = ENTROPY_BY_ROLE.read(tmp_path / "roles.csv").set_index("role")
    assert list(table["role"]) == ["operand", "operator", "result", "answer", "syntax", "other", "end"]
    # operator: q0 has two tokens at 2.0, q1 one at 4.0 -> per-question means 2 and 4 -> 3, not the token mean 8/3
    assert by_role.loc["operator", "mean_entropy"] == pytest.approx(3.0)
    assert by_role.loc["operator", ["ci_low", "ci_high"]].tolist() == pytest.approx(
        list(bootstrap_mean_ci([2.0, 4.0], resamples=200, seed=0))[1:])
    assert by_role.loc["operand", "num_tokens"] == 2 + 3 + 2 and by_role.loc["operand", "mean_entropy"] == 1.0
    # the unfinished line "3" is other; the broken response is left out and counted; only q0's responses end
    assert by_role.loc["other", "num_questions"] == 1 and by_role.loc["end", "num_tokens"] == 2
    assert (by_role["responses_left_out"] == 1).all() and set(by_role["task"]) == {"countdown"}


def test_entropy_by_role_refuses_other_tasks_and_other_tokenizers(tmp_path):
    with pytest.raises(ValueError, match=r"token roles are defined on the responses of one task with character roles "
                                         r"\(\['countdown', 'strategy'\]\); these are \['mmlu'\]"):
        write_role_summary(role_samples().assign(task="mmlu"), tmp_path / "r.csv", resamples=100, seed=0, log=LOG)
    broken = role_samples().assign(num_tokens=lambda t: t["num_tokens"] + 5)
    with pytest.raises(ValueError, match="none of the 4 responses has one token per character"):
        entropy_by_role(broken)


def test_entropy_and_forking_jobs_run_a_tiny_policy_on_countdown(tiny_policy, tmp_path):
    model, data = tiny_policy
    common = ["--model", str(model), "--data", str(data), "--task", "countdown", "--split", "test", "--prompt-format",
              "plain", "--threads", "1", "--max-new-tokens", "12", "--batch-size", "8", "--engine", "hf", "--dtype",
              "float32", "--seed", "0", "--tau", "1.0"]
    entropy_main([*common, "--question-seed", "0", "--num-questions", "3", "--samples", "2", "--samples-out",
                  str(tmp_path / "e.parquet")])
    samples = ENTROPY_SAMPLES.read(tmp_path / "e.parquet")
    assert len(samples) == 6 and set(samples["split"]) == {"test"} and set(samples["task"]) == {"countdown"}
    assert set(samples["prompt_id"]) <= {f"countdown/s0/test/{i}" for i in range(6)}
    # every token of every response with token roles has exactly one role (a random policy may sample <pad> inside)
    kept = [token_roles(t, n, f, "countdown") is not None
            for t, n, f in zip(samples.text, samples.num_tokens, samples.finished)]
    roles = entropy_by_role(samples, resamples=100)
    assert roles["num_tokens"].sum() == samples.loc[kept, "num_tokens"].sum()
    assert (roles["responses_left_out"] == len(samples) - sum(kept)).all()
    forking_main([*common, "--question-seed", "1", "--prefix-selection", "random", "--num-questions", "2",
                  "--reference-samples", "1", "--fork-points", "0", "2",
                  "--continuations", "2", "--samples-out", str(tmp_path / "f.parquet"), "--k", "1", "2",
                  "--bootstrap", "100", "--out", str(tmp_path / "f.csv")])
    assert set(pd.read_csv(tmp_path / "f.csv")["metric"]) == {"pass@k"}
    with pytest.raises(SystemExit, match="--task countdown needs --prompt-format plain"):
        entropy_main([*common, "--question-seed", "0", "--prompt-format", "chat", "--num-questions", "1", "--samples",
                      "1", "--samples-out",
                      str(tmp_path / "x.parquet")])
