"""Premise G4 ("RL learns here", ead.claims.rl_learns), the curve-mean claims (``over: curve``, ead.claims.rl) and the
claims table's ``rl_learns`` column, on constructed tables checked against hand computations."""

import json

import numpy as np
import pandas as pd
import pytest

from ead.claims import rl_learns
from ead.claims.rl import claim_row
from ead.claims.rl import main as compare_main
from ead.metrics import POWER_Z, two_way_bootstrap_means
from ead.settings import ConfigError
from ead.settings.rl import check_claims, check_rl_learns
from ead.tables import CLAIMS, EVAL_PROBLEMS, RL_LEARNS, SETTINGS_COLUMNS, STEPS, TRAIN_METRICS, IncompleteTableError

CELL = dict(policy="p", algorithm="dapo", n=8)
FILLER = {"int": 0, "float": 0.0, "str": "x", "id": "x"}
SAMPLES = 16
THRESHOLDS = dict(min_effect=0.08, min_ci_low=0.05)


def evaluation_rows(sampler: str, correct: dict[tuple[int, int], list[int]], **cell) -> pd.DataFrame:
    """eval_problems rows of one sampler: ``correct[(seed, step)]`` is the correct count (of 16) per problem."""
    rows = [dict(**{**CELL, **cell}, sampler=sampler, seed=seed, step=step, evaluated_with="eval_tau",
                 problem_id=f"q{i:02d}", num_samples=SAMPLES, num_correct=c, greedy_correct=0.0)
            for (seed, step), counts in correct.items() for i, c in enumerate(counts)]
    return pd.DataFrame(rows).assign(**{c: FILLER[k] for c, k in SETTINGS_COLUMNS.items()})


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


# --- curve-mean claims (over: curve) -------------------------------------------------------------------------------
STEPS_EVALUATED = (0, 4, 8, 12, 16)
CLAIM = dict(id="C15-curve", figure="none", statement="EAD + TIS raises Pass@1 over the learning curve",
             sampler="ead_tis", baseline="tau1.0", metric="pass@1", over="curve", **CELL)


def curve_counts(base: int, slope: int, seeds=(0, 1, 2), problems=6) -> dict:
    """correct[(seed, step)]: base + slope x (step / 4) + seed + problem index (mod 17), a rising curve."""
    return {(seed, step): [min(16, base + slope * step // 4 + seed + p) for p in range(problems)]
            for seed in seeds for step in STEPS_EVALUATED}


def steps_table(samplers=("ead_tis", "tau1.0")) -> pd.DataFrame:
    rows = [{**CELL, "sampler": sampler, "seed": seed, "step": step, **{m: 0.0 for m in TRAIN_METRICS}}
            for sampler in samplers for seed in (0, 1, 2) for step in range(1, 17)]
    return pd.DataFrame(rows).assign(**{c: FILLER[k] for c, k in SETTINGS_COLUMNS.items()})


def test_curve_claim_is_the_paired_mean_over_the_evaluated_steps_after_step_0():
    ead, tau = curve_counts(1, 2), curve_counts(1, 1)
    table = pd.concat([evaluation_rows("ead_tis", ead), evaluation_rows("tau1.0", tau)], ignore_index=True)
    row = claim_row(CLAIM, table, steps_table(), window=4, resamples=300, seed=2)
    # by hand: per (seed, problem), the mean over steps 4, 8, 12, 16 of (ead - tau) correct / 16
    hand = np.array([[np.mean([(ead[(s, t)][p] - tau[(s, t)][p]) / 16 for t in STEPS_EVALUATED[1:]])
                      for p in range(6)] for s in (0, 1, 2)])
    assert row["effect"] == pytest.approx(hand.mean()) and row["step"] == 16 and row["over"] == "curve"
    draws = two_way_bootstrap_means(hand, resamples=300, seed=2)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((np.quantile(draws, 0.025), np.quantile(draws, 0.975)))
    assert row["mde"] == pytest.approx(POWER_Z * np.std(draws, ddof=1))
    # hand value: slopes differ by 1 per evaluation (steps 4..16 -> 1, 2, 3, 4), capped at 16 correct for no row here
    assert row["effect"] == pytest.approx(np.mean([1, 2, 3, 4]) / 16)
    last = claim_row({**CLAIM, "over": "last"}, table, steps_table(), window=4, resamples=300, seed=2)
    assert last["effect"] == pytest.approx(4 / 16) and last["over"] == "last"
    default = claim_row({k: v for k, v in CLAIM.items() if k != "over"}, table, steps_table(), window=4,
                        resamples=300, seed=2)
    assert default == last  # over: last is the default reading
    CLAIMS.validate(pd.DataFrame([row, {**last, "claim": "C15"}]))


def test_curve_claim_reads_the_steps_both_cells_evaluated_and_one_footing():
    ead, tau = curve_counts(1, 2), curve_counts(1, 1)
    extra = {(seed, 2): [16] * 6 for seed in (0, 1, 2)}  # a step the baseline did not evaluate: left out
    table = pd.concat([evaluation_rows("ead_tis", {**ead, **extra}), evaluation_rows("tau1.0", tau)],
                      ignore_index=True)
    plain = pd.concat([evaluation_rows("ead_tis", ead), evaluation_rows("tau1.0", tau)], ignore_index=True)
    assert claim_row(CLAIM, table, steps_table(), window=4, resamples=100, seed=0)["effect"] == pytest.approx(
        claim_row(CLAIM, plain, steps_table(), window=4, resamples=100, seed=0)["effect"])
    # an intermediate evaluation of other problems (in both cells, so paired) would mix footings: refused
    shifted = plain.copy()
    at_8 = shifted["step"] == 8
    shifted.loc[at_8, "problem_id"] = shifted.loc[at_8, "problem_id"].str.replace("q", "r")
    with pytest.raises(SystemExit, match="at step 8 holds other problems than the one at step 4"):
        claim_row(CLAIM, shifted, steps_table(), window=4, resamples=100, seed=0)
    only_start = plain[plain["step"] == 0]
    with pytest.raises(SystemExit, match="needs an evaluated step after step 0"):
        claim_row(CLAIM, only_start, steps_table(), window=4, resamples=100, seed=0)


def test_config_refuses_a_curve_claim_that_has_no_curve():
    from pathlib import Path

    from ead.settings.layering import layer_config

    config = layer_config(Path(__file__).resolve().parents[1] / "configs" / "config.yaml").config
    check_claims(config)
    claims = config["claims"]
    for bad, message in ((dict(metric="entropy"), "is a training metric"),
                         (dict(evaluated_with="own_sampler"), "exists at the last step only")):
        config["claims"] = [{**claims[0], "over": "curve", **bad}]
        with pytest.raises(ConfigError, match=message):
            check_claims(config)
    config["claims"] = claims
    check_rl_learns(config)
    for bad, message in ((dict(sampler="tau9"), "not defined in rl.samplers"), (dict(metric="entropy"), "not pass@k"),
                         (dict(min_ci_low=0.1), "exceeds rl_learns.min_effect")):
        with pytest.raises(ConfigError, match=message):
            check_rl_learns({**config, "rl_learns": {**config["rl_learns"], **bad}})


# --- the claims table's rl_learns column ---------------------------------------------------------------------------
def test_every_rl_claim_carries_the_g4_verdict_of_its_setting(tmp_path):
    ead, tau = curve_counts(1, 2), curve_counts(1, 1)
    table = pd.concat([evaluation_rows("ead_tis", ead), evaluation_rows("tau1.0", tau)], ignore_index=True)
    EVAL_PROBLEMS.write(table, tmp_path / "eval_problems.csv")
    STEPS.write(steps_table(), tmp_path / "steps.csv")
    g4 = rl_learns.rl_learns_table(table, sampler="tau1.0", metric="pass@1", resamples=200, seed=0, **THRESHOLDS)
    RL_LEARNS.write(g4, tmp_path / "rl_learns.csv")
    other_setting = pd.DataFrame([{**g4.iloc[0].to_dict(), "n": 4, "verdict": "contradicted"}])
    RL_LEARNS.write(pd.concat([g4, other_setting], ignore_index=True), tmp_path / "rl_learns.csv")
    claims = [CLAIM, {**CLAIM, "id": "C15", "over": "last"},
              {**CLAIM, "id": "C7", "metric": "entropy", "over": "last"}]
    out = tmp_path / "claims.csv"
    common = ["--eval-problems", str(tmp_path / "eval_problems.csv"), "--steps", str(tmp_path / "steps.csv"),
              "--window", "4", "--resamples", "200", "--seed", "0", "--out", str(out)]
    compare_main(["--claims", json.dumps(claims), "--analysis-claims", "--rl-learns", str(tmp_path / "rl_learns.csv"),
                  *common])
    written = CLAIMS.read(out)
    # tau 1.0 gains 4 / 16 per evaluation: +1.0 Pass@1 at step 16 on 3 seeds -> supported in (p, dapo, 8)
    assert g4.iloc[0]["verdict"] == "supported"
    assert written["rl_learns"].tolist() == ["supported"] * 3
    assert written["over"].tolist()[:2] == ["curve", "last"] and pd.isna(written["over"].iloc[2])
    # a claim in a setting G4 has no row for reads "untested"; the analyses' rows keep an empty column
    analysis = written.iloc[[0]].assign(claim="F1", figure="fig01", rl_learns=None, over=None)
    CLAIMS.write(analysis, tmp_path / "analysis_claims.csv")
    untested = rl_learns.rl_learns_table(table.assign(policy="q"), sampler="tau1.0", metric="pass@1", resamples=50,
                                      seed=0, **THRESHOLDS)
    RL_LEARNS.write(untested, tmp_path / "rl_learns_q.csv")
    compare_main(["--claims", json.dumps([CLAIM]), "--analysis-claims", str(tmp_path / "analysis_claims.csv"),
                  "--rl-learns", str(tmp_path / "rl_learns_q.csv"), *common])
    both = CLAIMS.read(out)
    assert both["claim"].tolist() == ["C15-curve", "F1"]
    assert both["rl_learns"].iloc[0] == "untested" and pd.isna(both["rl_learns"].iloc[1])
    # without G4's table (a grid that does not run its sampler) the column is empty
    compare_main(["--claims", json.dumps([CLAIM]), "--analysis-claims", *common])
    assert CLAIMS.read(out)["rl_learns"].isna().all()
