"""Premise G4 ("RL learns here", ead.claims.rl_learns) on constructed tables checked against hand computations."""

import numpy as np
import pandas as pd
import pytest

from ead.claims import rl_learns
from ead.metrics import POWER_Z, two_way_bootstrap_means
from ead.tables import EVAL_PROBLEMS, RL_LEARNS, IncompleteTableError
from tests.claims.conftest import SAMPLES, THRESHOLDS, evaluation_rows


def learning_cells(start: np.ndarray, gains: np.ndarray, last: int = 16) -> pd.DataFrame:
    """tau1.0 cells whose seed s solves start[p] of 16 samples of problem p at step 0 and start[p] + gains[s, p] at
    ``last`` (every seed shares step 0: the policy's own evaluation)."""
    correct = {}
    for seed in range(gains.shape[0]):
        correct[(seed, 0)] = list(start)
        correct[(seed, last)] = list(start + gains[seed])
    return evaluation_rows("tau1.0", correct)


def g4_row(table: pd.DataFrame) -> dict:
    result = rl_learns.rl_learns_table(table, sampler="tau1.0", metric="pass@1", resamples=400, seed=1, **THRESHOLDS)
    assert len(result) == 1
    return result.iloc[0].to_dict()


START = np.array([2, 3, 1, 4, 2, 0, 5, 3, 2, 1] * 4)  # 40 problems, Pass@1 ~0.14 at step 0


def test_g4_effect_is_the_paired_last_minus_first_pass1_with_the_two_way_bootstrap():
    rng = np.random.default_rng(0)
    gains = rng.integers(1, 5, size=(3, START.size))  # +1..+4 of 16 samples per problem: ~+0.16 Pass@1
    row = g4_row(learning_cells(START, gains))
    hand = gains / SAMPLES  # Pass@1 = correct / samples, so last - first is the gain over 16
    assert row["effect"] == pytest.approx(hand.mean()) and row["step"] == 16
    draws = two_way_bootstrap_means(hand, resamples=400, seed=1)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((np.quantile(draws, 0.025), np.quantile(draws, 0.975)))
    assert row["mde"] == pytest.approx(POWER_Z * np.std(draws, ddof=1))
    assert (row["num_seeds"], row["num_problems"]) == (3, 40)
    assert row["verdict"] == "supported" and row["premise"] == "G4"
    RL_LEARNS.validate(pd.DataFrame([row]))


def test_g4_reads_contradicted_when_the_ci_lies_below_the_claimed_gain():
    """tiny1m_sharp's case: RL barely moves the policy (gains of -1..+1 of 16 samples: ~0)."""
    gains = np.tile(np.array([-1, 0, 1, 0, 1, 0, -1, 0, 0, 1]), (3, 4))
    gains = np.maximum(gains, -START)
    row = g4_row(learning_cells(START, gains))
    assert abs(row["effect"]) < 0.02 and row["ci_high"] < 0.08
    assert row["verdict"] == "contradicted" and "CI high < 0.08" in row["rule"]


def test_g4_reads_inconclusive_when_neither_rule_holds():
    # a mean gain of +0.09 whose CI reaches below +0.05: the seeds disagree (one gains 0.22, two ~0.03)
    gains = np.stack([np.full(START.size, 4), np.zeros(START.size, int), np.concatenate([np.ones(20, int),
                                                                                          np.zeros(20, int)])])
    row = g4_row(learning_cells(START, gains))
    assert row["effect"] == pytest.approx(gains.mean() / SAMPLES) and row["effect"] >= 0.08
    assert row["ci_low"] <= 0.05 and row["ci_high"] >= 0.08
    assert row["verdict"] == "inconclusive"


def test_g4_on_one_seed_is_inconclusive_whatever_its_problems_only_ci():
    row = g4_row(learning_cells(START, np.full((1, START.size), 6)))
    assert row["ci_low"] > 0.3 and row["num_seeds"] == 1
    assert row["verdict"] == "inconclusive" and row["rule"].startswith("one seed")


@pytest.mark.parametrize("effect, low, high, expected", [
    (0.08, 0.0501, 0.11, "supported"),      # the mean at the claimed gain, the CI just above +5 points
    (0.12, 0.05, 0.2, "inconclusive"),      # the lower bound must exceed min_ci_low, not equal it
    (0.079, 0.06, 0.1, "inconclusive"),     # the mean below +8 points although the CI clears +5
    (0.05, 0.02, 0.0799, "contradicted"),   # the whole CI below +8 points
    (0.06, 0.02, 0.08, "inconclusive"),     # the CI reaches +8 points
])
def test_g4_decision_rule_at_its_boundaries(effect, low, high, expected):
    assert rl_learns.decide_learns(effect, low, high, seeds=3, **THRESHOLDS).verdict == expected


def test_g4_refuses_unpaired_evaluations():
    table = learning_cells(START, np.ones((2, START.size), int))
    cut = table[~((table["seed"] == 1) & (table["step"] == 16) & (table["problem_id"] == "q03"))]
    with pytest.raises(ValueError, match=r"G4 in p/dapo/8 \(tau1.0 cells\): seed 1: step 0 and step 16 are not "):
        g4_row(cut)
    with pytest.raises(ValueError, match="no evaluation after step 0"):
        g4_row(table[table["step"] == 0])


def test_g4_job_writes_one_row_per_setting_of_its_sampler(tmp_path):
    sharp = learning_cells(START, np.ones((2, START.size), int))
    other = learning_cells(START, np.full((2, START.size), 3)).assign(policy="q")
    ead = evaluation_rows("ead", {(0, 0): list(START), (0, 16): list(START + 5)})
    paths = []
    for index, frame in enumerate((sharp, other, ead)):
        for (policy, seed), rows in frame.groupby(["policy", "seed"]):
            paths.append(tmp_path / f"{index}_{policy}_{seed}" / "eval_problems.csv")
            EVAL_PROBLEMS.write(rows, paths[-1])
    out = tmp_path / "rl_learns.csv"
    args = ["--eval-problems", *map(str, paths), "--metric", "pass@1", "--min-effect", "0.08", "--min-ci-low", "0.05",
            "--resamples", "200", "--seed", "0", "--out", str(out)]
    rl_learns.main([*args, "--sampler", "tau1.0"])
    table = RL_LEARNS.read(out)
    assert list(table["policy"]) == ["p", "q"] and list(table["sampler"]) == ["tau1.0"] * 2
    assert table["effect"].tolist() == pytest.approx([1 / 16, 3 / 16])
    assert table["verdict"].tolist() == ["contradicted", "supported"]
    with pytest.raises(SystemExit, match="no cell of sampler 'tau0.6'"):
        rl_learns.main([*args, "--sampler", "tau0.6"])
    # with the config's extent, a cell cut before its last step is refused (its step 8 is not the end of training)
    extent = ["--expect-steps", "16", "--eval-every", "16", "--no-own-sampler"]
    rl_learns.main([*args, "--sampler", "tau1.0", *extent])
    cut = sharp[(sharp["seed"] == 1)].assign(step=lambda t: t["step"].where(t["step"] == 0, 8))
    EVAL_PROBLEMS.write(cut, paths[1])
    with pytest.raises(IncompleteTableError, match=rf"{paths[1]} .*has no row for step 16"):
        rl_learns.main([*args, "--sampler", "tau1.0", *extent])


def test_g4_reads_the_held_out_rows_and_measures_the_training_pool_only_when_asked():
    """A cell with a fixed training pool (ead.rl.train) also holds train_pool rows: G4 ignores them, and the same rule
    measured on them (evaluated_with="train_pool") reads their gain alone, labelled as the pool's."""
    held_out = learning_cells(START, np.zeros((3, START.size), int))
    pool = learning_cells(START, np.full((3, START.size), 4)).assign(evaluated_with="train_pool")
    both = pd.concat([held_out, pool], ignore_index=True)
    assert g4_row(both)["effect"] == pytest.approx(0.0) and "training pool" not in g4_row(both)["part"]
    on_pool = rl_learns.rl_learns_table(both, sampler="tau1.0", metric="pass@1", resamples=400, seed=1,
                                        evaluated_with="train_pool", **THRESHOLDS).iloc[0]
    assert on_pool["effect"] == pytest.approx(4 / SAMPLES) and on_pool["verdict"] == "supported"
    assert on_pool["part"].endswith("(training pool)")
    with pytest.raises(ValueError, match="no evaluation rows with evaluated_with = 'train_pool'"):
        rl_learns.rl_learns_table(held_out, sampler="tau1.0", metric="pass@1", resamples=10, seed=1,
                                  evaluated_with="train_pool", **THRESHOLDS)


def test_g4_job_writes_the_training_pool_table_when_asked_and_refuses_cells_without_a_pool(tmp_path):
    held_out = learning_cells(START, np.zeros((2, START.size), int))
    pool = learning_cells(START, np.full((2, START.size), 4)).assign(evaluated_with="train_pool")
    paths = []
    for seed, rows in pd.concat([held_out, pool], ignore_index=True).groupby("seed"):
        paths.append(tmp_path / f"seed{seed}" / "eval_problems.csv")
        EVAL_PROBLEMS.write(rows, paths[-1])
    args = ["--eval-problems", *map(str, paths), "--sampler", "tau1.0", "--metric", "pass@1", "--min-effect", "0.08",
            "--min-ci-low", "0.05", "--resamples", "200", "--seed", "0", "--out", str(tmp_path / "g4.csv")]
    rl_learns.main([*args, "--train-pool-out", str(tmp_path / "g4_pool.csv")])
    held, on_pool = RL_LEARNS.read(tmp_path / "g4.csv"), RL_LEARNS.read(tmp_path / "g4_pool.csv")
    assert held["effect"].tolist() == pytest.approx([0.0]) and held["verdict"].tolist() == ["contradicted"]
    assert on_pool["effect"].tolist() == pytest.approx([4 / SAMPLES]) and on_pool["verdict"].tolist() == ["supported"]
    assert on_pool["part"].iloc[0].endswith("(training pool)")
    for path in paths:  # cells without a pool: the pool's table is refused, naming the flag
        EVAL_PROBLEMS.write(EVAL_PROBLEMS.read(path).query("evaluated_with == 'eval_tau'"), path)
    with pytest.raises(SystemExit, match="--train-pool-out .*no cell has an evaluation of a training pool"):
        rl_learns.main([*args, "--train-pool-out", str(tmp_path / "g4_pool.csv")])
