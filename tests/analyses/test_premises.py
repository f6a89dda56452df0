"""Premise probe: per-problem quantities against hand counts, common random numbers across samplers, verdict rows."""

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ead.analyses.premises import (
    main,
    paired_premise_table,
    per_problem_quantities,
    premise_verdicts,
    premises_by_group,
    step_dependent,
    table_task,
)
from ead.data.countdown import generate_countdown
from ead.io import write_table
from ead.schedule import build_schedule
from ead.settings import load_layered_config
from ead.settings.premises import ProbeSettings
from ead.tables import (
    PREMISE_VERDICTS,
    PREMISES,
    PREMISES_BY_GROUP,
)
from tests.analyses.conftest import measured_table

ROOT = Path(__file__).resolve().parents[2]


def test_the_premise_probe_samples_measured_samplers_with_the_measured_c_and_d0(tmp_path):
    from ead.analyses.premises import with_measured_schedules
    from ead.settings.premises import premise_settings

    config = load_layered_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "ablations" /
                                 "measured_schedule.yaml")
    settings = premise_settings(config)
    assert settings.measured == ("ead_measured_tis",)
    assert "measured" not in premise_settings(load_layered_config(ROOT / "configs" / "config.yaml")).to_document()
    out = measured_table(tmp_path)
    applied = with_measured_schedules(settings, str(out))
    sized = applied.samplers["ead_measured_tis"]
    assert (sized["warmup"], sized["d0"]) == (3, pytest.approx(16.5 / math.log(2.1)))
    assert applied.samplers["ead_measured_tis"]["tau_max"] == settings.samplers["ead"]["tau_max"]
    assert applied.samplers["ead"] == settings.samplers["ead"]  # the hand-sized EAD keeps the ead block's
    with pytest.raises(SystemExit, match=r"\['ead_measured_tis'\] are `measured: true`: pass"):
        with_measured_schedules(settings, None)
    with pytest.raises(SystemExit, match="no probed sampler is `measured: true`"):
        with_measured_schedules(premise_settings(load_layered_config(ROOT / "configs" / "config.yaml")), str(out))


PROBLEMS = pd.DataFrame({"id": ["a", "b"], "answer": ["5 6 7 12 -> 41", "3 4 5 -> 27"]})


GOOD_A = "7*5=35\n35+12=47\n47-6=41\n\\boxed{41}"


def samples(rows):
    """A sample table as sample_hf returns it (text and per-token log-probs)."""
    return pd.DataFrame([{"prompt_id": p, "text": t, "behaviour_logprobs": b, "target_logprobs": g}
                         for p, t, b, g in rows])


def test_per_problem_quantities_count_what_the_samples_hold():
    table = samples([
        ("a", GOOD_A, [-0.1, -0.2], [-0.1, -0.2]),                          # correct
        ("a", " 7*5=35\n35+12=47\n47-6=41\n\\boxed{41} ", [-0.5], [0.5]),   # the same chain (whitespace): 1 distinct
        ("a", "7*5=35\n35+12=48\n\\boxed{41}", [-1.0, -1.0], [-0.2, -3.0]),  # arithmetic
        ("b", "3+4=7\n7*5=35\n\\boxed{35}", [-2.0], [-1.0]),                 # 27 unreachable after 3+4: strategy
        ("b", "3*3=9\n\\boxed{9}", [0.0], [0.0]),                            # 3 used twice: rule
    ])
    q = per_problem_quantities(table, PROBLEMS, tis_cap=2.0, task="countdown")
    assert q.loc["a", ["num_samples", "num_correct", "distinct_correct"]].tolist() == [3, 2, 1]
    assert q.loc["a", ["failures_strategy", "failures_arithmetic", "failures_rule"]].tolist() == [0, 1, 0]
    assert q.loc["b", ["num_correct", "failures_strategy", "failures_rule"]].tolist() == [0, 1, 1]
    # log-ratios target - behaviour per token: a: 0, 0 | 1.0 | 0.8, -2.0
    assert q.loc["a", "token_log_ratio_sum"] == pytest.approx(-0.2) and q.loc["a", "num_tokens"] == 5
    # weights exp(ratio) above the cap 2 (ratio > log 2 = 0.69): tokens 1.0 and 0.8; sequences summing to 1.0
    assert q.loc["a", "tokens_capped"] == 2 and q.loc["a", "sequences_capped"] == 1
    assert q.loc["a", "sequence_log_ratio"] == pytest.approx((0.0 + 1.0 - 1.2) / 3)
    # effective sample size of the sequence weights e^0, e^1, e^-1.2 as a share of the 3 samples; b: e^1, e^0
    weights = np.exp([0.0, 1.0, -1.2])
    assert q.loc["a", "sequence_ess_fraction"] == pytest.approx(weights.sum() ** 2 / (3 * (weights ** 2).sum()))
    assert q.loc["b", "sequence_ess_fraction"] == pytest.approx((np.e + 1) ** 2 / (2 * (np.e ** 2 + 1)))
    on_policy = per_problem_quantities(table.assign(target_logprobs=table["behaviour_logprobs"]), PROBLEMS, 2.0,
                                       "countdown")
    assert (on_policy["sequence_ess_fraction"] == 1.0).all()


def test_summarise_pairs_every_sampler_with_the_baseline_on_the_same_problems():
    base = samples([("a", GOOD_A, [0.0], [0.0]), ("a", "x", [0.0], [0.0]),
                    ("b", "x", [0.0], [0.0]), ("b", "x", [0.0], [0.0])])
    hot = samples([("a", GOOD_A, [0.0], [0.0]), ("a", GOOD_A, [0.0], [0.0]),
                   ("b", "x", [0.0], [0.0]), ("b", "x", [0.0], [0.0])])
    quantities = {("tau1.0", 1): per_problem_quantities(base, PROBLEMS, 2.0, "countdown"),
                  ("hot", 1): per_problem_quantities(hot.iloc[::-1], PROBLEMS, 2.0, "countdown")}  # other problem order
    table = paired_premise_table(quantities, ("tau1.0", 1), 2, [2], resamples=200, seed=0)
    table = table.set_index(["sampler", "metric"])
    assert table.loc[("tau1.0", "pass@1"), "value"] == pytest.approx(0.25)
    assert table.loc[("hot", "pass@1"), "diff"] == pytest.approx(0.25)  # problem a: 1.0 - 0.5, b: 0 - 0
    assert table.loc[("tau1.0", "pass@1"), ["diff", "diff_ci_low", "diff_ci_high"]].tolist() == [0, 0, 0]
    assert table.loc[("hot", "informative@2"), "diff"] == pytest.approx(-0.5)  # a: 0 - 1, b: 0 - 0
    assert table.loc[("tau1.0", "failure_share_rule"), "value"] == pytest.approx(1.0)


def counts(correct: dict[str, int], n: int = 4) -> pd.DataFrame:
    """Per-problem quantities as the probe computes them, reduced to what Pass@1 and informative@k read."""
    return pd.DataFrame({"num_samples": n, "num_correct": pd.Series(correct)}).rename_axis("problem_id")


def test_the_probe_by_group_averages_each_value_of_the_column_over_its_problems_paired_with_the_baseline(tmp_path):
    # four problems, keys + + * * ; the baseline solves a 4/4, b 1/4, c 0/4, d 2/4; the hot sampler a 3/4, b 1/4,
    # c 1/4, d 2/4 (listed in another order: the pairing is by problem)
    quantities = {("tau1.0", 1): counts({"a": 4, "b": 1, "c": 0, "d": 2}),
                  ("hot", 1): counts({"d": 2, "c": 1, "b": 1, "a": 3}),
                  ("ead", 16): counts({"a": 4, "b": 4, "c": 4, "d": 4})}
    keys = pd.Series({"a": "+", "b": "+", "c": "*", "d": "*", "unprobed": "/"})
    table = premises_by_group(quantities, ("tau1.0", 1), keys, "key", 2, resamples=200, seed=0)
    assert len(table) == 3 * 2 * 2  # (sampler, step) x metric x key: no row for a key without probed problems
    PREMISES_BY_GROUP.write(table.assign(model="m", n=4, baseline="tau1.0", seed=0), tmp_path / "by_key.csv")
    rows = PREMISES_BY_GROUP.read(tmp_path / "by_key.csv").set_index(["sampler", "step", "metric", "group"])
    # Pass@1 on key +: (4/4 + 1/4) / 2; informative@2 = 1 - C(c,2)/C(4,2) - C(4-c,2)/C(4,2): c=1 -> 1/2, c=2 -> 2/3
    assert rows.loc[("tau1.0", 1, "pass@1", "+"), "value"] == pytest.approx(0.625)
    assert rows.loc[("tau1.0", 1, "informative@2", "+"), "value"] == pytest.approx((0 + 0.5) / 2)
    assert rows.loc[("tau1.0", 1, "informative@2", "*"), "value"] == pytest.approx((0 + 2 / 3) / 2)
    assert rows.loc[("hot", 1, "pass@1", "+"), ["value", "diff"]].tolist() == pytest.approx([0.5, -0.125])
    # c 1/4 (informative 1/2) against the baseline's 0/4; d unchanged
    assert rows.loc[("hot", 1, "informative@2", "*"), "diff"] == pytest.approx(0.25)
    assert rows.loc[("ead", 16, "informative@2", "*"), ["value", "diff"]].tolist() == pytest.approx([0, -1 / 3])
    # the CI is over the group's problems: an exact 0 difference on both problems has no spread
    assert rows.loc[("tau1.0", 1, "pass@1", "*"), ["diff", "diff_ci_low", "diff_ci_high"]].tolist() == [0, 0, 0]
    low, high = rows.loc[("tau1.0", 1, "pass@1", "+"), ["ci_low", "ci_high"]]
    assert 0.25 <= low <= 0.625 <= high <= 1.0
    assert (table["num_problems"] == 2).all() and set(table["group_by"]) == {"key"}
    with pytest.raises(ValueError, match=r"1 probed problems have no 'key' value \(e.g. \['d'\]\)"):
        premises_by_group(quantities, ("tau1.0", 1), keys.drop("d"), "key", 2, resamples=200, seed=0)


def test_step_dependence_is_read_off_the_schedule():
    assert step_dependent(build_schedule({"name": "ead", "tau_max": 1.2, "tau_min": 0.1, "d0": 25}), [1, 16])
    assert not step_dependent(build_schedule({"name": "fixed", "tau": 1.0}), [1, 16])
    assert not step_dependent(build_schedule({"name": "two_stage", "tau_early": 1.5, "tau_late": 1.0, "switch": 8}),
                              [1, 16])


def verdict_input(hot_diff, cold_diff, strategy_share, ead_diffs):
    rows = [dict(sampler="hot", step=1, metric="pass@4", diff=hot_diff[0], diff_ci_low=hot_diff[1],
                 diff_ci_high=hot_diff[2], mde=0.01),
            dict(sampler="cold", step=1, metric="pass@1", diff=cold_diff[0], diff_ci_low=cold_diff[1],
                 diff_ci_high=cold_diff[2], mde=0.01),
            dict(sampler="tau1.0", step=1, metric="failure_share_strategy", value=strategy_share[0],
                 ci_low=strategy_share[1], ci_high=strategy_share[2])]
    rows += [dict(sampler="ead", step=step, metric="informative@4", diff=d[0], diff_ci_low=d[1], diff_ci_high=d[2],
                  mde=0.01) for step, d in zip((1, 16), ead_diffs)]
    settings = ProbeSettings.from_document({
        "split": "val", "limit": 2, "n": 4, "max_new_tokens": 8, "seed": 0, "batch_size": 8, "bootstrap": 10,
        "steps": [1, 16], "baseline": "tau1.0", "group_sizes": [4], "tis_cap": 2.0, "samplers": {},
        "premises": {"hot": "hot", "cold": "cold", "strategy_share_min": 0.3, "ead": "ead", "informative_k": 4}})
    return premise_verdicts(pd.DataFrame(rows), settings)


def test_premise_verdicts_follow_the_decision_rule():
    verdicts = verdict_input((0.05, 0.01, 0.09), (0.03, 0.01, 0.05), (0.4, 0.35, 0.45),
                             [(0.02, 0.01, 0.03), (0.01, -0.01, 0.03)]).set_index(["premise", "part"])
    assert verdicts.loc[("G1", "a trade-off exists (both parts)"), "verdict"] == "supported"
    assert verdicts.loc[("G2", "strategy errors are a large share of failures"), "verdict"] == "supported"
    assert verdicts.loc[("G3", "EAD raises informative groups at step 1"), "verdict"] == "supported"
    assert verdicts.loc[("G3", "EAD raises informative groups (every probed step)"), "verdict"] == "inconclusive"
    against = verdict_input((-0.05, -0.09, -0.01), (0.03, 0.01, 0.05), (0.1, 0.05, 0.2),
                            [(0.0, -0.01, 0.01)] * 2).set_index(["premise", "part"])
    assert against.loc[("G1", "heat early raises coverage"), "verdict"] == "contradicted"
    assert against.loc[("G1", "a trade-off exists (both parts)"), "verdict"] == "contradicted"
    assert against.loc[("G2", "strategy errors are a large share of failures"), "verdict"] == "contradicted"


def test_probe_job_pairs_samplers_with_common_random_numbers(tiny_model_dir, tmp_path):
    data = tmp_path / "countdown.parquet"
    write_table(generate_countdown(seed=3, n_train=20, n_val=6, n_test=2), data)
    fixed = {"name": "fixed", "tau": 1.0}
    settings = {"split": "val", "limit": 6, "n": 4, "max_new_tokens": 24, "seed": 5, "batch_size": 5, "bootstrap": 100,
                "steps": [1, 8], "baseline": "tau1.0", "group_sizes": [2, 4], "tis_cap": 2.0,
                "samplers": {"tau1.0": fixed, "tau1.0_again": fixed, "hot": {"name": "two_stage", "tau_early": 2.0,
                                                                            "tau_late": 1.0, "switch": 4},
                             "cold": {"name": "two_stage", "tau_early": 1.0, "tau_late": 0.3, "switch": 4},
                             "ead": {"name": "ead", "tau_max": 1.5, "tau_min": 0.3, "d0": 5, "warmup": 2}},
                "premises": {"hot": "hot", "cold": "cold", "strategy_share_min": 0.3, "ead": "ead",
                             "informative_k": 4}}
    out, verdicts, groups = tmp_path / "premises.csv", tmp_path / "verdicts.csv", tmp_path / "by_group.csv"
    command = ["--model", str(tiny_model_dir), "--data", str(data), "--threads", "1", "--out", str(out),
               "--verdicts", str(verdicts)]
    with pytest.raises(SystemExit):  # a table by group is asked for by the settings and written where told, or neither
        main([*command, "--settings", json.dumps(settings), "--groups-out", str(groups)])
    with pytest.raises(SystemExit):
        main([*command, "--settings", json.dumps({**settings, "group_by": "num_solutions"})])
    with pytest.raises(SystemExit, match=r"premises.group_by = 'key' is not a column of the task's data table"):
        main([*command, "--settings", json.dumps({**settings, "group_by": "key"}), "--groups-out", str(groups)])
    main([*command, "--settings", json.dumps({**settings, "group_by": "num_solutions"}), "--groups-out", str(groups)])
    table = PREMISES.read(out)
    # by group: each value's problems; weighted by their counts, the groups give back the probe's own means
    by_group = PREMISES_BY_GROUP.read(groups)
    assert set(by_group.metric) == {"pass@1", "informative@4"} and set(by_group.group_by) == {"num_solutions"}
    assert by_group.groupby(["sampler", "step", "metric"])["num_problems"].sum().eq(6).all()
    pooled = (by_group.assign(total=by_group["value"] * by_group["num_problems"])
              .groupby(["sampler", "step", "metric"])["total"].sum() / 6)
    overall = table.set_index(["sampler", "step", "metric"])["value"]
    assert pooled.to_numpy() == pytest.approx(overall.loc[pooled.index].to_numpy())
    assert (by_group.loc[by_group.sampler == "tau1.0_again", ["diff", "diff_ci_low", "diff_ci_high"]] == 0).all().all()
    # the same schedule under the same random numbers draws the same samples: every paired difference is exactly 0
    again = table[table.sampler == "tau1.0_again"]
    assert len(again) > 5 and (again[["diff", "diff_ci_low", "diff_ci_high"]].fillna(0) == 0).all().all()
    assert set(table.loc[table.sampler == "ead", "step"]) == {1, 8}  # EAD changes with the step: probed at both
    assert set(table.loc[table.sampler == "hot", "step"]) == {1}
    assert {"greedy_accuracy", "pass@1", "pass@4", "informative@2", "token_log_ratio"} <= set(table.metric)
    off_policy = table.set_index(["sampler", "step", "metric"])
    assert off_policy.loc[("tau1.0", 1, "token_log_ratio"), "value"] == 0  # tau 1 is the policy itself
    assert off_policy.loc[("ead", 1, "token_log_ratio"), "value"] != 0
    rows = PREMISE_VERDICTS.read(verdicts)
    assert set(rows.premise) == {"G1", "G2", "G3"}
    assert set(rows.verdict) <= {"supported", "contradicted", "inconclusive"}
    assert np.isfinite(table["value"]).all()


STRATEGY_PROBLEMS = pd.DataFrame({"id": ["a", "b"], "answer": ["* 1234567890123456", "/ 9876"]})
GOOD_STRATEGY_A = "dub\n2468024680246802"  # every digit doubled, mod 10


def strategy_samples(texts):
    return pd.DataFrame([{"prompt_id": p, "text": t, "behaviour_logprobs": [0.0], "target_logprobs": [0.0]}
                         for p, t in texts])


def test_strategy_failures_are_counted_by_first_mistake():
    table = strategy_samples([
        ("a", GOOD_STRATEGY_A), ("a", f" {GOOD_STRATEGY_A}\n"),         # correct twice, one distinct solution
        ("a", "add\n2345678901234567"),               # another strategy, exactly executed: strategy
        ("a", "dub\n2468024680246803"),               # the key's strategy, one digit wrong: execution
        ("b", "rot\n8769"), ("b", "rot\n8769\n1"),    # ok; the right output then a further line: execution
        ("b", "sub\n8765"), ("b", "xyz\n8769"),       # another strategy (strategy); no strategy name (format)
    ])
    q = per_problem_quantities(table, STRATEGY_PROBLEMS, tis_cap=2.0, task="strategy")
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
