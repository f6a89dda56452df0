"""The premise probe on the strategy task: failures counted by their first mistake, the task read from the table."""

import pandas as pd
import pytest

from ead.analyses.premises import paired_premise_table, per_problem_quantities, table_task

PROBLEMS = pd.DataFrame({"id": ["a", "b"], "answer": ["* 1234567890123456", "/ 9876"]})
GOOD_A = "dub\n2468024680246802"  # every digit doubled, mod 10


def samples(texts):
    return pd.DataFrame([{"prompt_id": p, "text": t, "behaviour_logprobs": [0.0], "target_logprobs": [0.0]}
                         for p, t in texts])


def test_strategy_failures_are_counted_by_first_mistake():
    table = samples([
        ("a", GOOD_A), ("a", f" {GOOD_A}\n"),         # correct twice, one distinct solution
        ("a", "add\n2345678901234567"),               # another strategy, exactly executed: strategy
        ("a", "dub\n2468024680246803"),               # the key's strategy, one digit wrong: execution
        ("b", "rot\n8769"), ("b", "rot\n8769\n1"),    # ok; the right output then a further line: execution
        ("b", "sub\n8765"), ("b", "xyz\n8769"),       # another strategy (strategy); no strategy name (format)
    ])
    q = per_problem_quantities(table, PROBLEMS, tis_cap=2.0, task="strategy")
    assert q.loc["a", ["num_samples", "num_correct", "distinct_correct"]].tolist() == [4, 2, 1]
    columns = ["failures_strategy", "failures_execution", "failures_format"]
    assert q.loc["a", columns].tolist() == [1, 1, 0]
    assert q.loc["b", ["num_correct", *columns]].tolist() == [1, 1, 1, 1]
    shares = paired_premise_table({("tau1.0", 1): q}, ("tau1.0", 1), 2, [2], resamples=200, seed=0)
    shares = shares.set_index("metric")["value"]
    assert shares["failure_share_strategy"] == pytest.approx(2 / 5)  # pooled over the 5 failures
    assert shares["failure_share_execution"] == pytest.approx(2 / 5)
    assert shares["failure_share_format"] == pytest.approx(1 / 5)
    assert "failure_share_arithmetic" not in shares.index  # countdown's kinds are not the strategy task's


def test_the_probed_task_is_the_tables_source():
    assert table_task(pd.DataFrame({"source": ["strategy"] * 3}), "t.parquet") == "strategy"
    assert table_task(pd.DataFrame({"source": ["countdown"]}), "t.parquet") == "countdown"
    for source in (["arithmetic"], ["countdown", "strategy"]):
        with pytest.raises(SystemExit, match="one task of"):
            table_task(pd.DataFrame({"source": source}), "t.parquet")
    with pytest.raises(SystemExit, match="t.parquet"):
        table_task(pd.DataFrame({"question": ["x"]}), "t.parquet")
