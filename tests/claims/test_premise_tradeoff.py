"""G1's heat effect against G4's gain across policies (ead.claims.premise_tradeoff): Spearman's rho and its exact
permutation p-value against hand computations, and the table read from runs' premise directories."""

import itertools

import numpy as np
import pandas as pd
import pytest

from ead.claims.premise_tradeoff import main, permutation_p_value, spearman_rho, tradeoff_correlation, tradeoff_rows
from ead.tables import PREMISE_TRADEOFF, PREMISE_TRADEOFF_RHO, PREMISE_VERDICTS, RL_LEARNS


def test_spearman_rho_is_the_correlation_of_average_ranks():
    assert spearman_rho([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman_rho([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    # ranks 1..5 against 2, 1, 4, 3, 5: 1 - 6 * sum(d^2) / (n (n^2 - 1)) = 1 - 6 * 4 / 120 = 0.8 (no ties)
    assert spearman_rho([0.1, 0.2, 0.3, 0.4, 0.5], [2.0, 1.0, 4.0, 3.0, 5.0]) == pytest.approx(0.8)
    # ties take the average rank: y ranks 1.5, 1.5, 3 against 1, 2, 3
    assert spearman_rho([1, 2, 3], [5, 5, 7]) == pytest.approx(np.corrcoef([1, 2, 3], [1.5, 1.5, 3])[0, 1])
    assert np.isnan(spearman_rho([1, 2, 3], [4, 4, 4]))


def test_the_exact_p_value_counts_the_permutations_at_least_as_extreme():
    # 3 points in perfect anti-order: of the 6 orders, only the two monotone ones reach |rho| = 1
    p, how = permutation_p_value([1, 2, 3], [3, 2, 1], resamples=0, seed=0)
    assert p == pytest.approx(2 / 6) and how == "exact, 6 permutations"
    x, y = [0.3, -0.1, 0.7, 0.2], [0.01, 0.05, -0.02, 0.03]
    observed = abs(spearman_rho(x, y))
    hand = np.mean([abs(spearman_rho(x, [y[i] for i in order])) >= observed - 1e-12
                    for order in itertools.permutations(range(4))])
    assert permutation_p_value(x, y, resamples=0, seed=0)[0] == pytest.approx(hand)
    many = np.arange(10.0)
    p, how = permutation_p_value(many, -many, resamples=500, seed=3)
    assert "500 random permutations, seed 3" in how and 0 < p < 0.01


def write_run(directory, heat: dict[str, float], gains: dict[str, float], extra_g4=()):
    """A premises directory: each policy's verdicts (G1's heat half = heat[policy]) and a G4 table."""
    directory.mkdir(parents=True)
    for policy, effect in heat.items():
        rows = [{"premise": "G1", "part": "heat early raises coverage", "sampler": "hot_early", "step": 1,
                 "metric": "pass@16 - baseline", "effect": effect, "ci_low": effect - 0.03, "ci_high": effect + 0.03,
                 "threshold": 0.0, "verdict": "supported" if effect > 0.03 else "inconclusive", "rule": "r"},
                {"premise": "G1", "part": "cold late raises accuracy", "sampler": "cold_late", "step": 1,
                 "metric": "pass@1 - baseline", "effect": 0.5, "ci_low": 0.4, "ci_high": 0.6, "threshold": 0.0,
                 "verdict": "supported", "rule": "r"}]
        PREMISE_VERDICTS.write(pd.DataFrame(rows).assign(model=f"results/models/{policy}", num_problems=256, n=16,
                                                         baseline="tau1.0", seed=0),
                               directory / f"{policy}_verdicts.csv")
    rows = [{"premise": "G4", "part": "p", "policy": policy, "algorithm": algorithm, "n": 8, "sampler": "tau1.0",
             "metric": "pass@1", "step": 16, "effect": effect, "ci_low": effect - 0.02, "ci_high": effect + 0.02,
             "standard_error": 0.01, "mde": 0.028, "min_effect": 0.08, "min_ci_low": 0.05, "num_seeds": 3,
             "num_problems": 96, "verdict": "contradicted", "rule": "r"}
            for policy, effect, algorithm in [*((p, e, "dapo") for p, e in gains.items()), *extra_g4]]
    RL_LEARNS.write(pd.DataFrame(rows), directory / "rl_learns.csv")


def test_the_table_pairs_each_runs_policies_and_the_correlation_covers_every_row(tmp_path):
    write_run(tmp_path / "a", {"sharp": 0.07, "calibrated": -0.06}, {"sharp": 0.026, "calibrated": 0.018, "other": 0.1},
              extra_g4=[("sharp", 0.5, "grpo")])  # a G4 row of another algorithm and one without verdicts: ignored
    write_run(tmp_path / "b", {"fork": 0.008, "sharp": 0.07}, {"fork": 0.03, "sharp": 0.01})
    table = tradeoff_rows([("a", str(tmp_path / "a")), ("b", str(tmp_path / "b"))], algorithm="dapo", n=8,
                          sampler="tau1.0")
    PREMISE_TRADEOFF.validate(table)
    assert list(zip(table["source"], table["policy"])) == [("a", "calibrated"), ("a", "sharp"), ("b", "fork"),
                                                           ("b", "sharp")]
    assert table.set_index(["source", "policy"]).loc[("a", "sharp"), "gain_effect"] == pytest.approx(0.026)
    assert table.set_index(["source", "policy"]).loc[("b", "fork"), "heat_effect"] == pytest.approx(0.008)
    assert list(table["heat_rank"]) == [1.0, 3.5, 2.0, 3.5]
    correlation = tradeoff_correlation(table, resamples=0, seed=0).iloc[0]
    assert correlation["rho"] == pytest.approx(spearman_rho(table["heat_effect"], table["gain_effect"]))
    assert (correlation["num_points"], correlation["num_policies"]) == (4, 3)
    assert "exact, 24 permutations" in correlation["p_method"]
    assert correlation["points"] == "a/calibrated; a/sharp; b/fork; b/sharp"

    with pytest.raises(ValueError, match=r"run 'a' .*no policy has both"):
        tradeoff_rows([("a", str(tmp_path / "a"))], algorithm="dapo", n=16, sampler="tau1.0")


def test_the_job_writes_both_declared_tables(tmp_path):
    write_run(tmp_path / "a", {"p1": 0.07, "p2": -0.06, "p3": 0.0}, {"p1": 0.0, "p2": 0.05, "p3": 0.02})
    main(["--run", "a", str(tmp_path / "a"), "--algorithm", "dapo", "--n", "8", "--sampler", "tau1.0",
          "--resamples", "100", "--seed", "0", "--out", str(tmp_path / "t.csv"),
          "--out-correlation", str(tmp_path / "rho.csv")])
    assert len(PREMISE_TRADEOFF.read(tmp_path / "t.csv")) == 3
    rho = PREMISE_TRADEOFF_RHO.read(tmp_path / "rho.csv").iloc[0]
    assert rho["rho"] == pytest.approx(-1.0) and rho["p_value"] == pytest.approx(2 / 6)
