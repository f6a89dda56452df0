"""The grid broken down by training phase and by a data column (ead.rl.breakdown), on small hand-built cells."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ead.io import write_table
from ead.rl.breakdown import eval_by_group, main, phase_of_step, signal_by_phase
from ead.tables import (
    EVAL_BY_GROUP,
    EVAL_FAILURES,
    EVAL_PROBLEMS,
    SETTINGS_COLUMNS,
    SIGNAL_BY_PHASE,
    STEPS,
    TRAIN_METRICS,
)
from tests.conftest import FILLER

CELL = dict(policy="tiny_strategy", algorithm="dapo", n=8)


def steps_table(samplers=("ead", "tau1.0"), seeds=(0, 1), last_step=4) -> pd.DataFrame:
    """informative_group_fraction = 0.1 * step + 0.01 * seed (+ 0.5 for ead); first_token_entropy = 1 - 0.1 step."""
    rows = [{**CELL, "sampler": sampler, "seed": seed, "step": step, **{m: 0.0 for m in TRAIN_METRICS},
             "informative_group_fraction": 0.1 * step + 0.01 * seed + (0.5 if sampler == "ead" else 0.0),
             "first_token_entropy": 1.0 - 0.1 * step}
            for sampler in samplers for seed in seeds for step in range(1, last_step + 1)]
    return pd.DataFrame(rows).assign(**{c: FILLER[k] for c, k in SETTINGS_COLUMNS.items()})


def test_a_step_falls_in_one_of_the_equal_phases():
    assert list(phase_of_step(np.arange(1, 17), 16, 4)) == [1] * 4 + [2] * 4 + [3] * 4 + [4] * 4
    assert list(phase_of_step(np.arange(1, 6), 5, 2)) == [1, 1, 2, 2, 2]  # unequal by at most one step
    assert list(phase_of_step([1, 2], 2, 1)) == [1, 1]
    with pytest.raises(ValueError, match="need 1 <= phases <= the last training step"):
        phase_of_step([1], 4, 5)


def test_signal_by_phase_averages_each_seeds_phase_then_the_seeds():
    table = signal_by_phase(steps_table(), ["informative_group_fraction", "first_token_entropy", "absent_metric"],
                            2, resamples=200, seed=0)
    table = SIGNAL_BY_PHASE.validate(table.assign(profile="p", config_files=""), "signal_by_phase")
    row = table.set_index(["sampler", "metric", "phase"])
    # ead, phase 1 (steps 1-2): seed 0 mean 0.65, seed 1 mean 0.66 -> 0.655; a CI over the two seeds
    ead = row.loc[("ead", "informative_group_fraction", 1)]
    assert ead["value"] == pytest.approx(0.655)
    assert (ead["first_step"], ead["last_step"], ead["num_seeds"]) == (1, 2, 2)
    assert 0.65 - 1e-9 <= ead["ci_low"] <= ead["value"] <= ead["ci_high"] <= 0.66 + 1e-9
    assert row.loc[("tau1.0", "informative_group_fraction", 2), "value"] == pytest.approx(0.355)  # steps 3-4
    assert row.loc[("tau1.0", "first_token_entropy", 2), "value"] == pytest.approx(0.65)
    assert "absent_metric" not in set(table["metric"])  # a column no cell records gives no row
    assert len(table) == 2 * 2 * 2  # samplers x metrics x phases


def test_a_metric_a_cell_leaves_empty_gives_no_row():
    steps = steps_table()
    steps.loc[steps["sampler"] == "tau1.0", "first_token_entropy"] = np.nan  # e.g. a backend that does not record it
    table = signal_by_phase(steps, ["first_token_entropy"], 2, resamples=100, seed=0)
    assert set(table["sampler"]) == {"ead"}


def problems_table() -> pd.DataFrame:
    """Two keys of two problems each; Pass@1 = num_correct / 4 per problem, per seed and step."""
    correct = {("a", 0): [1, 3], ("a", 1): [2, 2], ("b", 0): [0, 0], ("b", 1): [4, 0]}  # (key, seed) -> at step 4
    rows = []
    for seed in (0, 1):
        for key, problems in (("a", ["p0", "p1"]), ("b", ["p2", "p3"])):
            for index, problem in enumerate(problems):
                for step in (0, 4):
                    rows.append({**CELL, "sampler": "ead", "seed": seed, "step": step, "evaluated_with": "eval_tau",
                                 "problem_id": problem, "num_samples": 4, "greedy_correct": 0.0,
                                 "num_correct": 0 if step == 0 else correct[(key, seed)][index]})
                rows.append({**rows[-1], "evaluated_with": "own_sampler", "num_correct": 4})  # not read
    return pd.DataFrame(rows).assign(**{c: FILLER[k] for c, k in SETTINGS_COLUMNS.items()})


DATA = pd.DataFrame({"id": ["p0", "p1", "p2", "p3", "p9"], "key": ["a", "a", "b", "b", "b"]})


def test_eval_by_group_is_the_declared_evaluation_over_each_groups_problems():
    table = eval_by_group(problems_table(), DATA, "key", "pass@1", resamples=200, seed=0)
    table = EVAL_BY_GROUP.validate(table.assign(profile="p", config_files=""), "eval_by_group")
    row = table.set_index(["group", "step"])
    # key a at step 4: seed 0 (1 + 3) / 8, seed 1 (2 + 2) / 8 -> 0.5 (the own-sampler rows, all correct, are not read)
    assert row.loc[("a", 4), "value"] == pytest.approx(0.5)
    assert row.loc[("b", 4), "value"] == pytest.approx(0.25)  # (0 + 0 + 4 + 0) / 16
    assert row.loc[("b", 0), "value"] == 0.0
    assert (row.loc[("a", 4), "num_seeds"], row.loc[("a", 4), "num_problems"]) == (2, 2)
    assert row.loc[("b", 4), "ci_low"] <= 0.25 <= row.loc[("b", 4), "ci_high"]
    assert set(table["group_by"]) == {"key"} and set(table["metric"]) == {"pass@1"}


def failures_table(problems: pd.DataFrame) -> pd.DataFrame:
    """Each problem's samples by first mistake: its correct ones ok, of the others one an execution failure (where
    there is one) and the rest strategy failures; none of format."""
    rows = []
    for row in problems.to_dict("records"):
        wrong = row["num_samples"] - row["num_correct"]
        execution = min(wrong, 1)
        for failure, count in (("ok", row["num_correct"]), ("execution", execution),
                               ("strategy", wrong - execution), ("format", 0)):
            rows.append({**{c: row[c] for c in (*CELL, "sampler", "seed", "step", "evaluated_with", "problem_id")},
                         "failure": failure, "num_samples": count})
    return pd.DataFrame(rows).assign(**{c: FILLER[k] for c, k in SETTINGS_COLUMNS.items()})


def test_eval_by_group_gives_each_failure_types_share_over_each_groups_problems():
    problems = problems_table()
    failures = failures_table(problems)
    table = eval_by_group(problems, DATA, "key", "pass@1", resamples=200, seed=0, failures=failures)
    EVAL_BY_GROUP.validate(table.assign(profile="p", config_files=""), "eval_by_group")
    assert set(table["metric"]) == {"pass@1", "failure:execution", "failure:format", "failure:strategy"}
    row = table.set_index(["group", "step", "metric"])
    # key a at step 4, 4 samples per problem: correct 1, 3 (seed 0), 2, 2 (seed 1) -> one execution failure each
    # (1/4), strategy 2, 0, 1, 1 of 4 -> 0.25
    assert row.loc[("a", 4, "failure:execution"), "value"] == pytest.approx(0.25)
    assert row.loc[("a", 4, "failure:strategy"), "value"] == pytest.approx(0.25)
    assert row.loc[("b", 0, "failure:strategy"), "value"] == pytest.approx(0.75)  # nothing right: 1 execution, 3
    assert row.loc[("a", 4, "failure:format"), "value"] == 0.0
    # with pass@1 (the "ok" share) the shares of a group sum to one
    for _, rows in table[table["group"] != "(all)"].groupby(["group", "step"]):
        assert rows["value"].sum() == pytest.approx(1.0)
    # and over every problem (group "(all)", the failure shares only): keys a and b pooled, 2 x 2 problems
    pooled = table[table["group"] == "(all)"].set_index(["step", "metric"])
    assert set(pooled.index.get_level_values("metric")) == {"failure:execution", "failure:format", "failure:strategy"}
    # key a 0.25 (above); key b: 3 of 4 wrong strategies in three of its four (seed, problem) pairs, 0 in one
    assert pooled.loc[(4, "failure:strategy"), "value"] == pytest.approx((0.25 + 3 * 0.75 / 4) / 2)
    assert pooled.loc[(4, "failure:strategy"), "num_problems"] == 4
    # a problem whose counts are missing, or do not sum to its samples, names its cell
    with pytest.raises(ValueError, match=r"problem p1 at step 4 \(eval_tau\) has no failure counts"):
        eval_by_group(problems, DATA, "key", "pass@1", resamples=10, seed=0,
                      failures=failures[~((failures["problem_id"] == "p1") & (failures["step"] == 4))])
    inflated = failures.assign(num_samples=failures["num_samples"] + (failures["failure"] == "format"))
    with pytest.raises(ValueError, match=r"do not sum to its 4 samples"):
        eval_by_group(problems, DATA, "key", "pass@1", resamples=10, seed=0, failures=inflated)


def test_eval_by_group_refuses_a_missing_column_or_problems_of_another_table():
    with pytest.raises(ValueError, match=r"the data table has no column 'strategy'"):
        eval_by_group(problems_table(), DATA, "strategy", "pass@1", resamples=10, seed=0)
    with pytest.raises(ValueError, match=r"evaluated problems are not in the data table"):
        eval_by_group(problems_table(), DATA[DATA["id"] != "p3"], "key", "pass@1", resamples=10, seed=0)


def test_the_job_writes_both_tables(tmp_path):
    steps_paths, problem_paths, failure_paths = [], [], []
    problems = problems_table()
    failures = failures_table(problems)
    steps = steps_table(samplers=("ead",), last_step=4)
    for seed in (0, 1):
        directory = tmp_path / f"seed{seed}"
        directory.mkdir()
        STEPS.write(steps[steps["seed"] == seed], directory / "steps.csv")
        EVAL_PROBLEMS.write(problems[problems["seed"] == seed], directory / "eval_problems.csv")
        EVAL_FAILURES.write(failures[failures["seed"] == seed], directory / "eval_failures.csv")
        steps_paths.append(str(directory / "steps.csv"))
        problem_paths.append(str(directory / "eval_problems.csv"))
        failure_paths.append(str(directory / "eval_failures.csv"))
    write_table(DATA, tmp_path / "data.parquet")
    main(["--steps", *steps_paths, "--eval-problems", *problem_paths, "--eval-failures",
          "--data", str(tmp_path / "data.parquet"), "--phases", "2", "--train-metrics", "informative_group_fraction",
          "--group-by", "key", "--metric", "pass@1", "--resamples", "100", "--seed", "0", "--expect-steps", "4",
          "--eval-every", "4", "--own-sampler", "--signal-out", str(tmp_path / "signal.csv"),
          "--groups-out", str(tmp_path / "groups.csv")])
    signal = SIGNAL_BY_PHASE.read(tmp_path / "signal.csv")
    assert list(signal["phase"]) == [1, 2] and signal["value"].tolist() == pytest.approx([0.655, 0.855])
    assert len(EVAL_BY_GROUP.read(tmp_path / "groups.csv")) == 4  # 2 keys x steps 0 and 4
    main(["--steps", *steps_paths, "--eval-problems", *problem_paths, "--eval-failures", *failure_paths,
          "--data", str(tmp_path / "data.parquet"), "--phases", "2", "--train-metrics", "informative_group_fraction",
          "--group-by", "key", "--metric", "pass@1", "--resamples", "100", "--seed", "0", "--expect-steps", "4",
          "--eval-every", "4", "--own-sampler", "--signal-out", str(tmp_path / "signal.csv"),
          "--groups-out", str(tmp_path / "groups.csv")])
    # and each of the 3 failure types, by key and over all problems
    assert len(EVAL_BY_GROUP.read(tmp_path / "groups.csv")) == 4 * 4 + 2 * 3
    with pytest.raises(SystemExit, match="no cell records any of"):
        main(["--steps", *steps_paths, "--eval-problems", *problem_paths, "--eval-failures",
              "--data", str(tmp_path / "data.parquet"), "--phases", "2", "--train-metrics", "sequence_ess_fraction",
              "--group-by", "key", "--metric", "pass@1", "--resamples", "100", "--seed", "0",
              "--signal-out", str(tmp_path / "s.csv"), "--groups-out", str(tmp_path / "g.csv")])
