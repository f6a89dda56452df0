"""The claims table: paired effects against brute force, their CIs and power, and the verdict rule."""

import json

import numpy as np
import pandas as pd
import pytest

from ead.claims.rl import claim_row, main
from ead.metrics import POWER_Z, pass_at_k, two_way_bootstrap_means
from ead.tables import CLAIMS, EVAL_PROBLEMS, SETTINGS_COLUMNS, STEPS, TRAIN_METRICS

CELL = dict(policy="p", algorithm="dapo", n=8)
CLAIM = dict(id="C1", figure="fig04", statement="EAD raises Pass@4", sampler="ead", baseline="tau1.0",
             metric="pass@4", **CELL)
FILLER = {"int": 0, "float": 0.0, "str": "x", "id": "x"}
COUNTS = {("ead", 0): [4, 1, 0], ("ead", 1): [6, 2, 1], ("tau1.0", 0): [2, 1, 0], ("tau1.0", 1): [5, 0, 1]}


def problems_table(counts=COUNTS, step=16):
    rows = [dict(**CELL, sampler=sampler, seed=seed, step=s, evaluated_with="eval_tau", problem_id=f"q{i}",
                 num_samples=8, num_correct=c if s == step else 0, greedy_correct=0.0)
            for (sampler, seed), cs in counts.items() for i, c in enumerate(cs) for s in (0, step)]
    table = pd.DataFrame(rows)
    return table.assign(**{c: FILLER[k] for c, k in SETTINGS_COLUMNS.items()})


def steps_table():
    rows = [{**CELL, "sampler": sampler, "seed": seed, "step": step, **{m: 0.0 for m in TRAIN_METRICS},
             "entropy": (0.3 if sampler == "ead" else 0.2) + 0.01 * seed - 0.001 * step}
            for sampler in ("ead", "tau1.0") for seed in (0, 1, 2) for step in range(1, 9)]
    return pd.DataFrame(rows).assign(**{c: FILLER[k] for c, k in SETTINGS_COLUMNS.items()})


def test_evaluation_claim_is_the_paired_mean_difference_with_a_two_way_bootstrap():
    row = claim_row(CLAIM, problems_table(), steps_table(), window=4, resamples=500, seed=3)
    per_problem = {key: pass_at_k([8] * 3, counts, 4) for key, counts in COUNTS.items()}
    matrix = np.stack([per_problem[("ead", s)] - per_problem[("tau1.0", s)] for s in (0, 1)])
    assert row["effect"] == pytest.approx(matrix.mean()) and row["step"] == 16
    draws = two_way_bootstrap_means(matrix, resamples=500, seed=3)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((np.quantile(draws, 0.025), np.quantile(draws, 0.975)))
    assert row["mde"] == pytest.approx(POWER_Z * np.std(draws, ddof=1))
    assert (row["num_seeds"], row["num_units"]) == (2, 6)
    assert row["verdict"] in ("supported", "inconclusive")


def test_training_claim_compares_per_seed_means_over_the_last_window():
    claim = {**CLAIM, "metric": "entropy", "statement": "EAD keeps entropy higher"}
    row = claim_row(claim, problems_table(), steps_table(), window=4, resamples=500, seed=0)
    assert row["effect"] == pytest.approx(0.1) and row["step"] == 8 and row["num_seeds"] == 3
    assert row["verdict"] == "supported"  # the difference is 0.1 in every seed
    less = claim_row({**claim, "direction": "less"}, problems_table(), steps_table(), window=4, resamples=500, seed=0)
    assert less["verdict"] == "contradicted"


def test_a_claim_on_one_seed_is_inconclusive_whatever_its_problems_only_ci():
    counts = {("ead", 0): [8, 8, 8], ("tau1.0", 0): [0, 0, 0]}  # every problem far better: the CI is far above 0
    row = claim_row(CLAIM, problems_table(counts), steps_table(), window=4, resamples=200, seed=0)
    assert row["ci_low"] > 0.5 and row["num_seeds"] == 1
    assert row["verdict"] == "inconclusive" and row["rule"].startswith("one seed: the training noise")
    assert row["scope"].startswith("one seed: the CI covers 3 evaluation problems but not the training noise")
    two = claim_row(CLAIM, problems_table({**counts, ("ead", 1): [8, 8, 8], ("tau1.0", 1): [0, 0, 0]}), steps_table(),
                    window=4, resamples=200, seed=0)
    assert two["verdict"] == "supported"
    assert two["scope"] == (f"2 seeds x 3 problems: detects a difference in pass@4 of {two['mde']:.3g} or more with "
                            f"80% power; a smaller true effect usually reads inconclusive here, which is not evidence "
                            f"against it")


def test_claims_pair_on_the_seeds_both_samplers_ran_and_unpaired_cells_are_errors():
    counts = dict(COUNTS)
    counts[("tau1.0", 2)] = [1, 1, 1]  # a seed the sampler does not have: left out, not an error
    row = claim_row(CLAIM, problems_table(counts), steps_table(), window=4, resamples=100, seed=0)
    assert row == claim_row(CLAIM, problems_table(), steps_table(), window=4, resamples=100, seed=0)
    with pytest.raises(SystemExit, match="share no seed"):
        claim_row(CLAIM, problems_table({("ead", 0): [1, 1, 1], ("tau1.0", 1): [1, 1, 1]}), steps_table(), window=4,
                  resamples=100, seed=0)
    other_problems = problems_table()
    other_problems.loc[(other_problems.sampler == "ead") & (other_problems.problem_id == "q2"), "problem_id"] = "q9"
    with pytest.raises(SystemExit, match="not evaluated on the same problems"):
        claim_row(CLAIM, other_problems, steps_table(), window=4, resamples=100, seed=0)
    with pytest.raises(SystemExit, match=r"no cell \(p, dapo, ead_tis, n8\)"):
        claim_row({**CLAIM, "sampler": "ead_tis"}, problems_table(), steps_table(), window=4, resamples=100, seed=0)


def test_a_claim_may_compare_cells_of_two_algorithms_paired_by_seed():
    """baseline_algorithm: e.g. forking-token training against the loss on every token, same sampler and seeds."""
    forking = problems_table().assign(algorithm="dapo_fork")
    table = pd.concat([problems_table(), forking], ignore_index=True)
    claim = {**CLAIM, "algorithm": "dapo_fork", "baseline_algorithm": "dapo", "sampler": "ead", "baseline": "ead"}
    row = claim_row(claim, table, steps_table(), window=4, resamples=200, seed=0)
    assert row["effect"] == 0.0 and row["baseline_algorithm"] == "dapo" and row["algorithm"] == "dapo_fork"
    across = claim_row({**claim, "baseline": "tau1.0"}, table, steps_table(), window=4, resamples=200, seed=0)
    assert across["effect"] == pytest.approx(claim_row(CLAIM, table, steps_table(), window=4, resamples=200,
                                                       seed=0)["effect"])
    with pytest.raises(SystemExit, match=r"no cell \(p, grpo, ead, n8\)"):
        claim_row({**claim, "baseline_algorithm": "grpo"}, table, steps_table(), window=4, resamples=200, seed=0)


def test_job_writes_the_declared_claims_table(tmp_path):
    EVAL_PROBLEMS.write(problems_table(), tmp_path / "eval_problems.csv")
    STEPS.write(steps_table(), tmp_path / "steps.csv")
    out = tmp_path / "claims.csv"
    main(["--claims", json.dumps([CLAIM, {**CLAIM, "id": "C7", "metric": "entropy"}]), "--eval-problems",
          str(tmp_path / "eval_problems.csv"), "--steps", str(tmp_path / "steps.csv"), "--window", "4",
          "--resamples", "200", "--seed", "0", "--analysis-claims", "--out", str(out)])
    table = CLAIMS.read(out)
    assert list(table["claim"]) == ["C1", "C7"] and set(table["verdict"]) <= {"supported", "contradicted",
                                                                             "inconclusive"}
    # the analyses' claims (ead.claims.analyses, same table) follow the RL claims unchanged
    analysis = table.iloc[[0]].assign(claim="F1", figure="fig01", algorithm="none (no RL)", effect=0.25)
    CLAIMS.write(analysis, tmp_path / "analysis_claims.csv")
    main(["--claims", json.dumps([CLAIM]), "--eval-problems", str(tmp_path / "eval_problems.csv"), "--steps",
          str(tmp_path / "steps.csv"), "--window", "4", "--resamples", "200", "--seed", "0", "--analysis-claims",
          str(tmp_path / "analysis_claims.csv"), "--out", str(out)])
    both = CLAIMS.read(out)
    assert list(both["claim"]) == ["C1", "F1"] and both.iloc[1]["effect"] == 0.25
    assert both.iloc[0].drop("claim").equals(table.iloc[0].drop("claim"))


def test_own_sampler_claims_compare_the_own_sampler_rows_and_need_them():
    """A claim with evaluated_with = own_sampler reads each cell's last-step evaluation with its own sampler, not the
    declared-tau rows (which here say the opposite); cells without such rows are an error naming the setting."""
    declared = problems_table()
    own_counts = {("ead", 0): [8, 8, 8], ("ead", 1): [8, 8, 7], ("tau1.0", 0): [0, 1, 0], ("tau1.0", 1): [1, 0, 0]}
    own = problems_table(own_counts)
    own = own[own["step"] == 16].assign(evaluated_with="own_sampler", greedy_correct=np.nan)
    table = pd.concat([declared, own], ignore_index=True)
    claim = {**CLAIM, "evaluated_with": "own_sampler"}
    row = claim_row(claim, table, steps_table(), window=4, resamples=200, seed=0)
    per_problem = {key: pass_at_k([8] * 3, counts, 4) for key, counts in own_counts.items()}
    expected = np.mean([per_problem[("ead", s)] - per_problem[("tau1.0", s)] for s in (0, 1)])
    assert row["effect"] == pytest.approx(expected) and row["evaluated_with"] == "own_sampler"
    assert claim_row(CLAIM, table, steps_table(), window=4, resamples=200, seed=0) == claim_row(
        CLAIM, declared, steps_table(), window=4, resamples=200, seed=0)  # the default reads the declared rows only
    with pytest.raises(SystemExit, match="rl.eval.own_sampler: true"):
        claim_row(claim, declared, steps_table(), window=4, resamples=200, seed=0)


def test_claims_forest_draws_one_row_per_claim_of_its_figure(tmp_path):
    from ead.plots import claims_forest

    EVAL_PROBLEMS.write(problems_table(), tmp_path / "eval_problems.csv")
    STEPS.write(steps_table(), tmp_path / "steps.csv")
    out = tmp_path / "claims.csv"
    beyond = [{**CLAIM, "id": "B1", "figure": "beyond"}, {**CLAIM, "id": "B2", "figure": "beyond", "metric": "pass@1"},
              {**CLAIM, "id": "B3", "figure": "beyond", "metric": "pass@1"}]
    main(["--claims", json.dumps([CLAIM, *beyond]), "--eval-problems", str(tmp_path / "eval_problems.csv"),
          "--steps", str(tmp_path / "steps.csv"), "--window", "4", "--resamples", "200", "--seed", "0",
          "--analysis-claims", "--out", str(out)])
    fig = claims_forest.plot(CLAIMS.read(out), "beyond")
    panels = {ax.get_xlabel(): [tick.get_text() for tick in ax.get_yticklabels()] for ax in fig.axes}
    assert [len(labels) for labels in panels.values()] == [1, 2]  # B1 on pass@4; B2, B3 on pass@1; C1 (fig04) not drawn
    assert all(label.startswith(("B2:", "B3:")) for label in list(panels.values())[1])
    with pytest.raises(ValueError, match=r"no claim with figure = 'fig99'"):
        claims_forest.plot(CLAIMS.read(out), "fig99")
    claims_forest.main(["--claims", str(out), "--figure", "beyond", "--png", str(tmp_path / "b.png"), "--pdf",
                        str(tmp_path / "b.pdf")])
    assert (tmp_path / "b.png").stat().st_size > 0 and (tmp_path / "b.pdf").stat().st_size > 0


def test_off_policy_cost_figure_draws_the_tis_statistics_of_each_sampler(tmp_path):
    from ead.plots import beyond_off_policy_cost
    from ead.rl.aggregate import train_curves

    steps = steps_table().assign(behaviour_target_log_ratio=lambda t: np.where(t.sampler == "ead", 0.05, 0.0),
                                 tis_weight_mean=1.0, tis_weight_max=lambda t: np.where(t.sampler == "ead", 2.0, 1.0),
                                 tis_capped_fraction=lambda t: np.where(t.sampler == "ead", 0.01, 0.0),
                                 tis_ess_fraction=lambda t: np.where(t.sampler == "ead", 0.97, 1.0),
                                 sequence_ess_fraction=lambda t: np.where(t.sampler == "ead", 0.6, 1.0),
                                 tis_capped_sequence_fraction=lambda t: np.where(t.sampler == "ead", 0.004, 0.0))
    experiment = {"policies": [CELL["policy"]], "algorithms": [CELL["algorithm"]], "samplers": ["tau1.0", "ead"],
                  "n": [CELL["n"]], "seeds": [0, 1, 2]}
    fig = beyond_off_policy_cost.plot(None, train_curves(steps), experiment, 16)
    assert [ax.get_ylabel() for ax in fig.axes] == list(beyond_off_policy_cost.PANELS.values())
    log_ratio = fig.axes[0].get_lines()  # one line per sampler, at its (constant) value over steps
    assert [line.get_label() for line in log_ratio] == ["$\\tau$ = 1.0", "EAD"]
    assert [line.get_ydata()[0] for line in log_ratio] == pytest.approx([0.0, 0.05])
    sequence_ess = fig.axes[list(beyond_off_policy_cost.PANELS).index("sequence_ess_fraction")].get_lines()
    assert [line.get_ydata()[0] for line in sequence_ess] == pytest.approx([1.0, 0.6])
    capped = fig.axes[list(beyond_off_policy_cost.PANELS).index("tis_capped_sequence_fraction")].get_lines()
    assert [line.get_ydata()[0] for line in capped] == pytest.approx([0.0, 0.004])


def capped_steps_table(shares: dict[int, list[float]]) -> pd.DataFrame:
    """The EAD + sequence-TIS cell's tis_capped_sequence_fraction by seed and step (steps 1..len)."""
    table = steps_table()
    rows = [{**table.iloc[0].to_dict(), "sampler": "ead_seq_tis", "seed": seed, "step": step + 1,
             "tis_capped_sequence_fraction": share}
            for seed, per_step in shares.items() for step, share in enumerate(per_step)]
    return pd.concat([table, pd.DataFrame(rows)], ignore_index=True)


THRESHOLD_CLAIM = dict(id="R3", figure="revised", statement="Fewer than 1% of sequences hit the TIS cap",
                       sampler="ead_seq_tis", metric="tis_capped_sequence_fraction", threshold=0.01,
                       direction="less", **CELL)


def test_threshold_claim_tests_one_cells_metric_over_the_whole_run_against_the_threshold():
    # per seed, the mean share over every step: 0.004, 0.002, 0.006 (not over the last window, which would be 0.0)
    shares = {0: [0.008, 0.008, 0.0, 0.0], 1: [0.004, 0.004, 0.0, 0.0], 2: [0.012, 0.012, 0.0, 0.0]}
    row = claim_row(THRESHOLD_CLAIM, problems_table(), capped_steps_table(shares), window=2, resamples=500, seed=1)
    assert row["effect"] == pytest.approx(0.004 - 0.01) and row["num_seeds"] == 3 and row["step"] == 4
    assert row["baseline"] == "0.01" and row["threshold"] == 0.01
    assert row["ci_high"] == pytest.approx(0.006 - 0.01) and row["ci_low"] == pytest.approx(0.002 - 0.01)
    assert row["verdict"] == "supported" and row["rule"].startswith("tis_capped_sequence_fraction minus 0.01: 95% CI")
    above = {0: [0.02] * 4, 1: [0.03] * 4, 2: [0.015] * 4}
    assert claim_row(THRESHOLD_CLAIM, problems_table(), capped_steps_table(above), window=2, resamples=500,
                     seed=1)["verdict"] == "contradicted"
    straddling = {0: [0.005] * 4, 1: [0.02] * 4, 2: [0.012] * 4}
    assert claim_row(THRESHOLD_CLAIM, problems_table(), capped_steps_table(straddling), window=2, resamples=500,
                     seed=1)["verdict"] == "inconclusive"
    one_seed = claim_row(THRESHOLD_CLAIM, problems_table(), capped_steps_table({0: [0.0] * 4}), window=2,
                         resamples=100, seed=1)
    assert one_seed["verdict"] == "inconclusive" and one_seed["num_seeds"] == 1
    CLAIMS.validate(pd.DataFrame([row]))


def test_threshold_claim_on_an_evaluation_metric_and_its_errors():
    claim = {**THRESHOLD_CLAIM, "sampler": "ead", "metric": "pass@4", "threshold": 0.2, "direction": "greater",
             "statement": "EAD's Pass@4 exceeds 0.2"}
    row = claim_row(claim, problems_table(), steps_table(), window=4, resamples=500, seed=3)
    per_problem = np.stack([pass_at_k([8] * 3, COUNTS[("ead", s)], 4) for s in (0, 1)])
    assert row["effect"] == pytest.approx(per_problem.mean() - 0.2) and row["num_units"] == 6
    with pytest.raises(SystemExit, match="a threshold claim has no baseline"):
        claim_row({**THRESHOLD_CLAIM, "baseline": "tau1.0"}, problems_table(), capped_steps_table({0: [0.0]}),
                  window=2, resamples=10, seed=0)
    verl_token_level = capped_steps_table({0: [float("nan")] * 2, 1: [0.0, 0.0]})
    with pytest.raises(SystemExit, match=r"has no tis_capped_sequence_fraction in seeds \[0\]"):
        claim_row(THRESHOLD_CLAIM, problems_table(), verl_token_level, window=2, resamples=10, seed=0)
