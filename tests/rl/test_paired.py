"""Paired-difference curves (ead.rl.paired): the claims' estimator at every evaluated step, and the figures' paired
panels drawn from that table only."""

import numpy as np
import pytest

from ead.claims.rl import claim_row
from ead.metrics import POWER_Z, pass_at_k, two_way_bootstrap_means, worst_at_k
from ead.rl.paired import main, paired_curves
from ead.tables import PAIRED_CURVES
from tests.conftest import CLAIM, COUNTS, problems_table, steps_table


def test_each_step_is_the_mean_paired_difference_with_the_claims_bootstrap():
    table = paired_curves(problems_table(), ["tau1.0"], [1, 4], resamples=400, seed=3)
    assert set(table["sampler"]) == {"ead"} and set(table["step"]) == {0, 16}  # the baseline is not its own row
    last = table[(table["step"] == 16) & (table["metric"] == "pass@4")].iloc[0]
    per_problem = {key: pass_at_k([8] * 3, counts, 4) for key, counts in COUNTS.items()}
    matrix = np.stack([per_problem[("ead", s)] - per_problem[("tau1.0", s)] for s in (0, 1)])
    draws = two_way_bootstrap_means(matrix, resamples=400, seed=3)
    assert last["effect"] == pytest.approx(matrix.mean())
    assert (last["ci_low"], last["ci_high"]) == pytest.approx((np.quantile(draws, 0.025), np.quantile(draws, 0.975)))
    assert last["mde"] == pytest.approx(POWER_Z * np.std(draws, ddof=1))
    assert (last["num_seeds"], last["num_problems"]) == (2, 3)
    # the last step's row is exactly the claims row of the same comparison
    row = claim_row(CLAIM, problems_table(), steps_table(), window=4, resamples=400, seed=3)
    assert (last["effect"], last["ci_low"], last["ci_high"]) == pytest.approx((row["effect"], row["ci_low"],
                                                                              row["ci_high"]))
    worst = table[(table["step"] == 16) & (table["metric"] == "worst@4")].iloc[0]
    expected = np.mean([worst_at_k([8] * 3, COUNTS[("ead", s)], 4) - worst_at_k([8] * 3, COUNTS[("tau1.0", s)], 4)
                        for s in (0, 1)])
    assert worst["effect"] == pytest.approx(expected)
    first = table[(table["step"] == 0) & (table["metric"] == "pass@4")].iloc[0]
    assert (first["effect"], first["ci_low"], first["ci_high"]) == (0.0, 0.0, 0.0)  # the shared step-0 evaluation


def test_differences_pair_on_common_seeds_and_refuse_different_problems():
    counts = {**COUNTS, ("ead", 2): [8, 8, 8]}  # a seed the baseline did not run is left out
    table = paired_curves(problems_table(counts), ["tau1.0"], [4], resamples=50, seed=0)
    assert set(table["num_seeds"]) == {2}
    broken = problems_table()
    broken.loc[(broken["sampler"] == "ead") & (broken["problem_id"] == "q2"), "problem_id"] = "q9"
    with pytest.raises(ValueError, match="not evaluated on the same problems"):
        paired_curves(broken, ["tau1.0"], [4], resamples=50, seed=0)


def test_the_job_writes_the_declared_table(tmp_path):
    problems = tmp_path / "eval_problems.csv"
    problems_table().to_csv(problems, index=False)
    out = tmp_path / "paired.csv"
    main(["--eval-problems", str(problems), "--baselines", "tau1.0", "--k", "1", "4", "--resamples", "100",
          "--seed", "0", "--out", str(out)])
    table = PAIRED_CURVES.read(out)
    assert sorted(set(table["metric"])) == ["pass@1", "pass@4", "worst@1", "worst@4"]


def test_a_cell_with_a_dropped_problem_row_is_refused_naming_its_file(tmp_path):
    """One problem's row deleted at one step of one cell: the job refuses, naming the file, instead of pairing (or
    failing on) what is left."""
    paths = []
    for (sampler, seed), cell in problems_table().groupby(["sampler", "seed"]):
        paths.append(tmp_path / f"{sampler}_{seed}.csv")
        cell.to_csv(paths[-1], index=False)
    dropped = problems_table().query("sampler == 'ead' and seed == 1")
    dropped[~((dropped["step"] == 16) & (dropped["problem_id"] == "q1"))].to_csv(tmp_path / "ead_1.csv", index=False)
    with pytest.raises(ValueError, match=r"ead_1\.csv.*problem_id.*q1"):
        main(["--eval-problems", *map(str, paths), "--baselines", "tau1.0", "--k", "1", "--resamples", "10",
              "--seed", "0", "--out", str(tmp_path / "paired.csv")])
    assert not (tmp_path / "paired.csv").exists()
