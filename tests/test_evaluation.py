"""The step-0 evaluation job (ead.evaluation): n sampled completions per problem of the split, graded by the task's
grader, written as a per-problem table and a Pass@k / Worst@k / greedy summary whose estimates are those of the
counts, and the same completions counted by first mistake; the same seed gives the same table, and a request the
estimator cannot serve is refused."""

import json

import numpy as np
import pytest

from ead.data.strategy import StrategyProblem, reference_string, render_response
from ead.evaluation import failure_counts, main
from ead.metrics import pass_at_k
from ead.tables import BASE_FAILURES, BASE_PROBLEMS, BASE_SUMMARY


@pytest.fixture(scope="module")
def policy_and_table(tmp_path_factory):
    from ead.data.countdown import generate_countdown
    from ead.models import save_hf_model
    from ead.models.tiny_policy import TinyPolicyShape, build_model, build_tokenizer

    root = tmp_path_factory.mktemp("evaluation")
    tokenizer = build_tokenizer()
    save_hf_model(root / "policy", build_model(tokenizer, TinyPolicyShape(
        hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64), seed=0), tokenizer)
    generate_countdown(seed=0, n_train=4, n_val=3, n_test=1).to_parquet(root / "countdown.parquet")
    return root / "policy", root / "countdown.parquet"


def evaluate(policy_and_table, out, *extra):
    model, data = policy_and_table
    main(["--model", str(model), "--data", str(data), "--split", "val", "--task", "countdown", "--limit", "3",
          "--n", "4", "--k", "1", "4", "--schedule", json.dumps({"name": "fixed", "tau": 1.0}),
          "--max-new-tokens", "12", "--seed", "0", "--batch-size", "8", "--threads", "1",
          "--per-problem", str(out / "problems.csv"), "--out", str(out / "summary.csv"),
          "--failures", str(out / "failures.csv"), *extra])
    return BASE_PROBLEMS.read(out / "problems.csv"), BASE_SUMMARY.read(out / "summary.csv")


def test_the_summary_is_the_estimate_of_the_per_problem_counts_and_a_seed_repeats_itself(policy_and_table, tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    problems, summary = evaluate(policy_and_table, tmp_path / "a")
    again, _ = evaluate(policy_and_table, tmp_path / "b")
    assert len(problems) == 3 and (problems["num_samples"] == 4).all() and set(problems["split"]) == {"val"}
    assert problems.equals(again)  # the same seed draws the same completions
    by_metric = summary.set_index("metric")
    assert {"pass@1", "pass@4", "worst@4", "greedy_accuracy"} <= set(by_metric.index)
    expected = np.mean([pass_at_k(4, int(c), 1) for c in problems["num_correct"]])
    assert by_metric.loc["pass@1", "value"] == pytest.approx(expected)
    assert by_metric.loc["greedy_accuracy", "value"] == pytest.approx(problems["greedy_correct"].mean())
    # the same sampled completions (not the greedy one) by first mistake: every type of every problem, summing to its
    # samples, "ok" its correct ones
    failures = BASE_FAILURES.read(tmp_path / "a" / "failures.csv")
    assert len(failures) == 3 * 4  # ok and countdown's three failure types, per problem
    by_problem = failures.groupby("problem_id", sort=False)["num_samples"]
    assert list(by_problem.sum()) == list(problems["num_samples"])
    ok = failures[failures["failure"] == "ok"].set_index("problem_id")["num_samples"]
    assert list(ok.loc[problems["problem_id"]]) == list(problems["num_correct"])


def test_failure_counts_count_each_completion_by_its_first_mistake_with_every_type_present():
    first, second = StrategyProblem("*", "1234"), StrategyProblem("/", "5678")
    texts = [render_response("dub", "1234"),  # the key's strategy, exact: ok
             render_response("add", "1234"),  # another strategy, exactly executed: the fork went wrong
             "dub\n2469",  # the key's strategy, one digit wrong: execution
             "dub",  # the key's strategy and no output line: execution (its first line was right)
             "mul\n1234",  # no strategy's name: format
             render_response("rot", "5678")]  # the second problem solved
    ids = ["a", "a", "a", "a", "a", "b"]
    references = [reference_string(first)] * 5 + [reference_string(second)]
    counts = failure_counts(ids, texts, references, "strategy", order=["b", "a"])
    assert list(counts.columns) == ["problem_id", "failure", "num_samples"]
    assert list(counts["problem_id"]) == ["b"] * 4 + ["a"] * 4  # in the order asked, every type of each
    table = counts.set_index(["problem_id", "failure"])["num_samples"]
    assert table.loc["a"].to_dict() == {"ok": 1, "strategy": 1, "execution": 2, "format": 1}
    assert table.loc["b"].to_dict() == {"ok": 1, "strategy": 0, "execution": 0, "format": 0}
    BASE_FAILURES.validate(counts)
    assert failure_counts(["a"], ["x"], ["2 + 2"], "arithmetic").empty  # a task that classifies no failures
    with pytest.raises(ValueError, match=r"order lacks problems \['b'\]"):
        failure_counts(ids, texts, references, "strategy", order=["a"])
    with pytest.raises(ValueError, match="1 problem ids, 2 texts and 1 references"):
        failure_counts(["a"], ["x", "y"], [reference_string(first)], "strategy")


def test_an_n_below_the_largest_k_and_a_missing_split_are_refused(policy_and_table, tmp_path):
    with pytest.raises(SystemExit, match=r"--n 4 is smaller than the largest k 8"):
        evaluate(policy_and_table, tmp_path, "--k", "8")
    model, data = policy_and_table
    with pytest.raises(SystemExit, match=rf"{data}.*'dev'"):
        main(["--model", str(model), "--data", str(data), "--split", "dev", "--task", "countdown", "--limit", "3",
              "--n", "4", "--k", "1", "--schedule", json.dumps({"name": "fixed", "tau": 1.0}), "--max-new-tokens",
              "12", "--seed", "0", "--batch-size", "8", "--threads", "1", "--per-problem", str(tmp_path / "p.csv"),
              "--out", str(tmp_path / "s.csv")])
