"""The claims table (ead.claims.rl): paired effects against brute force, their CIs and power, the verdict rule,
threshold and curve-mean claims, claims against the best of several baselines (chosen on a selection split of the
problems, reported on the rest), and the G4 verdict every claim carries."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ead.claims import comparison_label, rl_learns
from ead.claims.rl import claim_row, main, selection_split
from ead.claims.rl import main as compare_main
from ead.metrics import POWER_Z, pass_at_k, two_way_bootstrap_means
from ead.tables import CLAIMS, EVAL_PROBLEMS, RL_LEARNS, SETTINGS_COLUMNS, STEPS, TRAIN_METRICS
from tests.claims.conftest import THRESHOLDS, evaluation_rows
from tests.conftest import CELL, CLAIM, COUNTS, FILLER, problems_table, steps_table

IDS = [f"q{i}" for i in range(8)]


CANDIDATES = ["tau0.6", "tau1.0", "tau1.2"]


BEST_OF_CLAIM = dict(id="D7", figure="d_max", statement="d0 = d_max beats the best fixed temperature",
                     sampler="ead_cap", best_of=CANDIDATES, selection={"metric": "pass@4", "fraction": 0.5, "seed": 0},
                     metric="pass@4", **CELL)


def best_of_problems_table(correct: dict, seeds=(0, 1), step=16) -> pd.DataFrame:
    """correct[(sampler, problem_id)] -> correct draws of 8, the same in every seed; step 0 all wrong."""
    rows = [dict(**CELL, sampler=sampler, seed=seed, step=s, evaluated_with="eval_tau", problem_id=problem,
                 num_samples=8, num_correct=count if s == step else 0, greedy_correct=0.0)
            for (sampler, problem), count in correct.items() for seed in seeds for s in (0, step)]
    return pd.DataFrame(rows).assign(**{c: FILLER[k] for c, k in SETTINGS_COLUMNS.items()})


def best_of_steps_table() -> pd.DataFrame:
    rows = [{**CELL, "sampler": "ead_cap", "seed": 0, "step": 1, **{m: 0.0 for m in TRAIN_METRICS}}]
    return pd.DataFrame(rows).assign(**{c: FILLER[k] for c, k in SETTINGS_COLUMNS.items()})


def test_the_selection_split_is_a_seeded_disjoint_cover_of_the_problems():
    select, report = selection_split(reversed(IDS), 0.5, 0)
    assert set(select).isdisjoint(report) and sorted(select + report) == IDS and len(select) == 4
    assert (select, report) == selection_split(IDS, 0.5, 0)  # the ids' order does not matter, only the seed
    assert any(selection_split(IDS, 0.5, seed)[0] != select for seed in range(1, 6))
    assert len(selection_split(IDS, 0.25, 0)[0]) == 2
    with pytest.raises(SystemExit, match="leaves a part empty"):
        selection_split(IDS[:1], 0.5, 0)


def test_the_baseline_is_the_best_candidate_on_the_selection_problems_and_the_effect_is_on_the_others():
    select, report = selection_split(IDS, 0.5, 0)
    # tau0.6 is best where the choice is made; tau1.2 is best where it is reported (and over all problems), so a
    # choice made on every problem, or on the report problems, would pick tau1.2
    correct = {}
    for problem in IDS:
        on_select = problem in select
        correct.update({("tau0.6", problem): 5 if on_select else 0, ("tau1.0", problem): 3,
                        ("tau1.2", problem): 4 if on_select else 8, ("ead_cap", problem): 6 if on_select else 2})
    table = best_of_problems_table(correct)
    row = claim_row(BEST_OF_CLAIM, table, best_of_steps_table(), window=4, resamples=400, seed=3)
    assert row["baseline"] == "tau0.6" and row["best_of"] == "tau0.6 tau1.0 tau1.2"
    per_problem = {key: float(pass_at_k([8], [count], 4)[0]) for key, count in correct.items()}
    matrix = np.array([[per_problem[("ead_cap", q)] - per_problem[("tau0.6", q)] for q in report]] * 2)
    assert row["effect"] == pytest.approx(matrix.mean()) and row["step"] == 16
    draws = two_way_bootstrap_means(matrix, resamples=400, seed=3)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((np.quantile(draws, 0.025), np.quantile(draws, 0.975)))
    assert (row["num_seeds"], row["num_units"]) == (2, 2 * len(report))  # report problems only
    scores = {name: np.mean([per_problem[(name, q)] for q in select]) for name in CANDIDATES}
    assert row["selection"].startswith(f"best pass@4 on {len(select)} selection problems (fraction 0.5, seed 0; "
                                       "seeds [0, 1]): " + ", ".join(f"{n} {s:.4f}" for n, s in scores.items())
                                       + f" -> tau0.6; reported on the other {len(report)}")
    # the report problems decide nothing about the choice, the selection problems nothing about the effect
    moved = {**correct, **{("tau1.0", q): 8 for q in report}, **{("ead_cap", q): 0 for q in select}}
    again = claim_row(BEST_OF_CLAIM, best_of_problems_table(moved), best_of_steps_table(), window=4, resamples=400,
                      seed=3)
    assert again["baseline"] == "tau0.6" and again["effect"] == pytest.approx(row["effect"])
    # ties go to the first listed candidate
    tied = {**{("ead_cap", q): 4 for q in IDS}, **{(name, q): 4 for name in CANDIDATES for q in IDS}}
    for order in (CANDIDATES, CANDIDATES[::-1]):
        chosen = claim_row({**BEST_OF_CLAIM, "best_of": order}, best_of_problems_table(tied), best_of_steps_table(),
                           window=4, resamples=50, seed=0)
        assert chosen["baseline"] == order[0] and chosen["effect"] == 0.0
    # the table declares the columns and the label names the candidates and the choice
    written = CLAIMS.read(_write(row))
    label = comparison_label(next(written.itertuples()))
    assert label == "ead_cap - best of {tau0.6, tau1.0, tau1.2} = tau0.6"


def _write(row: dict) -> Path:
    import tempfile

    path = Path(tempfile.mkdtemp()) / "claims.csv"
    CLAIMS.write(pd.DataFrame([row]), path)
    return path


def test_best_of_chooses_on_the_seeds_every_cell_ran_and_refuses_unpaired_or_ambiguous_claims():
    correct = {(name, q): 4 for name in [*CANDIDATES, "ead_cap"] for q in IDS}
    extra = best_of_problems_table({("tau1.0", q): 8 for q in IDS}, seeds=(2,))  # a seed the others lack: left out
    table = pd.concat([best_of_problems_table(correct), extra], ignore_index=True)
    row = claim_row(BEST_OF_CLAIM, table, best_of_steps_table(), window=4, resamples=50, seed=0)
    assert row["num_seeds"] == 2 and row["baseline"] == "tau0.6"
    missing = best_of_problems_table(correct)
    missing = missing[~((missing["sampler"] == "tau1.2") & (missing["problem_id"] == "q3"))]
    with pytest.raises(SystemExit, match="tau1.2 and ead_cap were not evaluated on the same problems"):
        claim_row(BEST_OF_CLAIM, missing, best_of_steps_table(), window=4, resamples=50, seed=0)
    with pytest.raises(SystemExit, match=r"no cell \(p, dapo, tau0.7, n8\)"):
        claim_row({**BEST_OF_CLAIM, "best_of": ["tau0.7", "tau1.0"]}, table, best_of_steps_table(), window=4,
                  resamples=50, seed=0)
    with pytest.raises(SystemExit, match="chooses its baseline .*baseline = 'tau1.0'"):
        claim_row({**BEST_OF_CLAIM, "baseline": "tau1.0"}, table, best_of_steps_table(), window=4, resamples=50, seed=0)
    with pytest.raises(SystemExit, match="'entropy' is a training metric"):
        claim_row({**BEST_OF_CLAIM, "metric": "entropy"}, table, best_of_steps_table(), window=4, resamples=50, seed=0)


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


def test_a_claim_reads_negligible_when_its_ci_lies_inside_its_declared_smallest_effect():
    row = claim_row(CLAIM, problems_table(), steps_table(), window=4, resamples=500, seed=3)
    assert np.isnan(row["smallest_effect"])  # declared by none: never negligible
    half_range = max(abs(row["ci_low"]), abs(row["ci_high"]))
    wide = claim_row({**CLAIM, "smallest_effect": half_range * 1.01}, problems_table(), steps_table(), window=4,
                     resamples=500, seed=3)
    assert (wide["verdict"], wide["smallest_effect"]) == ("negligible", half_range * 1.01)
    assert (wide["effect"], wide["ci_low"], wide["ci_high"]) == (row["effect"], row["ci_low"], row["ci_high"])
    narrow = claim_row({**CLAIM, "smallest_effect": half_range * 0.99}, problems_table(), steps_table(), window=4,
                       resamples=500, seed=3)
    assert narrow["verdict"] == row["verdict"]
    CLAIMS.validate(pd.DataFrame([row, {**wide, "claim": "C1-wide"}]))
    same = {("ead", 0): [2, 1, 0], ("ead", 1): [5, 0, 1], ("tau1.0", 0): [2, 1, 0], ("tau1.0", 1): [5, 0, 1]}
    flat = claim_row({**CLAIM, "smallest_effect": 0.02}, problems_table(same), steps_table(), window=4,
                     resamples=200, seed=0)
    assert (flat["ci_low"], flat["ci_high"], flat["verdict"]) == (0.0, 0.0, "inconclusive")  # no spread, no bound


def test_a_pre_registered_prediction_travels_into_the_claims_table_beside_the_result():
    predicted = claim_row({**CLAIM, "prediction": {"verdict": "supported", "effect": 0.03}}, problems_table(),
                          steps_table(), window=4, resamples=200, seed=0)
    plain = claim_row(CLAIM, problems_table(), steps_table(), window=4, resamples=200, seed=0)
    assert (predicted["predicted_verdict"], predicted["predicted_effect"]) == ("supported", 0.03)
    assert {k: v for k, v in predicted.items() if not k.startswith("predicted_")} == plain  # the result is unchanged
    table = CLAIMS.validate(pd.DataFrame([predicted, {**plain, "claim": "C1-plain"}]))
    assert table["predicted_verdict"].tolist()[0] == "supported" and pd.isna(table["predicted_effect"].iloc[1])


def test_a_threshold_claim_does_not_read_a_smallest_effect():
    shares = {0: [0.008] * 4, 1: [0.009] * 4, 2: [0.012] * 4}
    row = claim_row({**THRESHOLD_CLAIM, "smallest_effect": 0.5}, problems_table(), capped_steps_table(shares),
                    window=2, resamples=500, seed=1)
    assert row["verdict"] == "inconclusive" and np.isnan(row["smallest_effect"])
    CLAIMS.validate(pd.DataFrame([row]))


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
    two = claim_row(CLAIM, problems_table({**counts, ("ead", 1): [8, 8, 8], ("tau1.0", 1): [2, 0, 0]}), steps_table(),
                    window=4, resamples=200, seed=0)
    assert two["verdict"] == "supported"
    assert two["scope"] == (f"2 seeds x 3 problems: detects a difference in pass@4 of {two['mde']:.3g} or more with "
                            f"80% power; a smaller true effect usually reads inconclusive here, which is not evidence "
                            f"against it")



def test_the_scope_of_a_training_metric_on_one_seed_and_of_a_grid_with_no_spread():
    """A training metric has one value per seed (no evaluation problems to count), and a grid whose paired differences
    are all equal has no power to state (smoke size), so neither reads "1 evaluation problems" or "MDE 0"."""
    from ead.claims.rl import scope

    assert scope("entropy", float("nan"), 1, 1) == (
        "one seed: the CI covers one training-metric value but not the training noise between seeds, so the row "
        "cannot test the claim; add seeds (configs/full.yaml)")
    assert scope("pass@1", 0.0, 2, 6) == ("2 seeds x 3 problems: every paired difference in pass@1 is the same, so "
                                          "no power can be stated (the MDE of 0 says nothing); a grid with spread "
                                          "between seeds and problems is needed to size one")
    claim = {**CLAIM, "metric": "entropy", "statement": "EAD keeps entropy higher"}
    one_seed = steps_table()[lambda table: table["seed"] == 0]
    row = claim_row(claim, problems_table(), one_seed, window=4, resamples=100, seed=0)
    assert row["scope"].startswith("one seed: the CI covers one training-metric value")

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


def test_a_claim_with_seeds_reads_only_those_seeds_and_refuses_a_missing_one():
    """A replication on fresh seeds of cells an earlier claim compared: ``seeds`` picks its seeds out of the cells
    (the same row as on tables holding only them); the claim without it reads every seed; a listed seed a cell lacks
    is an error naming the cell and the seed."""
    counts = {**COUNTS, ("ead", 2): [8, 8, 8], ("tau1.0", 2): [0, 0, 0], ("ead", 3): [7, 7, 6],
              ("tau1.0", 3): [1, 0, 2]}
    replication = {**CLAIM, "id": "C1-replication", "seeds": [2, 3]}
    row = claim_row(replication, problems_table(counts), steps_table(), window=4, resamples=200, seed=0)
    fresh_only = {key: value for key, value in counts.items() if key[1] in (2, 3)}
    alone = claim_row({**CLAIM, "id": "C1-replication"}, problems_table(fresh_only), steps_table(), window=4,
                      resamples=200, seed=0)
    assert row == alone and row["num_seeds"] == 2 and row["effect"] > 0.5
    every = claim_row(CLAIM, problems_table(counts), steps_table(), window=4, resamples=200, seed=0)
    assert every["num_seeds"] == 4 and every["effect"] != row["effect"]
    with pytest.raises(SystemExit, match=r"claim C1-replication: cell tau1\.0 has no seeds \[4\] of the claim's "
                                         r"seeds \[2, 3, 4\]"):
        claim_row({**replication, "seeds": [2, 3, 4]}, problems_table({**counts, ("ead", 4): [1, 1, 1]}),
                  steps_table(), window=4, resamples=100, seed=0)
    training = claim_row({**CLAIM, "metric": "entropy", "seeds": [1, 2]}, problems_table(), steps_table(), window=4,
                         resamples=100, seed=0)
    assert training["num_seeds"] == 2


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


# --- curve-mean claims (over: curve) -------------------------------------------------------------------------------
STEPS_EVALUATED = (0, 4, 8, 12, 16)


CURVE_CLAIM = dict(id="C15-curve", figure="none", statement="EAD + TIS raises Pass@1 over the learning curve",
             sampler="ead_tis", baseline="tau1.0", metric="pass@1", over="curve", **CELL)


def curve_counts(base: int, slope: int, seeds=(0, 1, 2), problems=6) -> dict:
    """correct[(seed, step)]: base + slope x (step / 4) + seed + problem index (mod 17), a rising curve."""
    return {(seed, step): [min(16, base + slope * step // 4 + seed + p) for p in range(problems)]
            for seed in seeds for step in STEPS_EVALUATED}


def curve_steps_table(samplers=("ead_tis", "tau1.0")) -> pd.DataFrame:
    rows = [{**CELL, "sampler": sampler, "seed": seed, "step": step, **{m: 0.0 for m in TRAIN_METRICS}}
            for sampler in samplers for seed in (0, 1, 2) for step in range(1, 17)]
    return pd.DataFrame(rows).assign(**{c: FILLER[k] for c, k in SETTINGS_COLUMNS.items()})


def test_curve_claim_is_the_paired_mean_over_the_evaluated_steps_after_step_0():
    ead, tau = curve_counts(1, 2), curve_counts(1, 1)
    table = pd.concat([evaluation_rows("ead_tis", ead), evaluation_rows("tau1.0", tau)], ignore_index=True)
    row = claim_row(CURVE_CLAIM, table, curve_steps_table(), window=4, resamples=300, seed=2)
    # by hand: per (seed, problem), the mean over steps 4, 8, 12, 16 of (ead - tau) correct / 16
    hand = np.array([[np.mean([(ead[(s, t)][p] - tau[(s, t)][p]) / 16 for t in STEPS_EVALUATED[1:]])
                      for p in range(6)] for s in (0, 1, 2)])
    assert row["effect"] == pytest.approx(hand.mean()) and row["step"] == 16 and row["over"] == "curve"
    draws = two_way_bootstrap_means(hand, resamples=300, seed=2)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((np.quantile(draws, 0.025), np.quantile(draws, 0.975)))
    assert row["mde"] == pytest.approx(POWER_Z * np.std(draws, ddof=1))
    # hand value: slopes differ by 1 per evaluation (steps 4..16 -> 1, 2, 3, 4), capped at 16 correct for no row here
    assert row["effect"] == pytest.approx(np.mean([1, 2, 3, 4]) / 16)
    last = claim_row({**CURVE_CLAIM, "over": "last"}, table, curve_steps_table(), window=4, resamples=300, seed=2)
    assert last["effect"] == pytest.approx(4 / 16) and last["over"] == "last"
    default = claim_row({k: v for k, v in CURVE_CLAIM.items() if k != "over"}, table, curve_steps_table(), window=4,
                        resamples=300, seed=2)
    assert default == last  # over: last is the default reading
    CLAIMS.validate(pd.DataFrame([row, {**last, "claim": "C15"}]))


def test_curve_claim_reads_the_steps_both_cells_evaluated_and_one_footing():
    ead, tau = curve_counts(1, 2), curve_counts(1, 1)
    extra = {(seed, 2): [16] * 6 for seed in (0, 1, 2)}  # a step the baseline did not evaluate: left out
    table = pd.concat([evaluation_rows("ead_tis", {**ead, **extra}), evaluation_rows("tau1.0", tau)],
                      ignore_index=True)
    plain = pd.concat([evaluation_rows("ead_tis", ead), evaluation_rows("tau1.0", tau)], ignore_index=True)
    assert claim_row(CURVE_CLAIM, table, curve_steps_table(), window=4, resamples=100, seed=0)["effect"] == \
        pytest.approx(claim_row(CURVE_CLAIM, plain, curve_steps_table(), window=4, resamples=100, seed=0)["effect"])
    # an intermediate evaluation of other problems (in both cells, so paired) would mix footings: refused
    shifted = plain.copy()
    at_8 = shifted["step"] == 8
    shifted.loc[at_8, "problem_id"] = shifted.loc[at_8, "problem_id"].str.replace("q", "r")
    with pytest.raises(SystemExit, match="at step 8 holds other problems than the one at step 4"):
        claim_row(CURVE_CLAIM, shifted, curve_steps_table(), window=4, resamples=100, seed=0)
    only_start = plain[plain["step"] == 0]
    with pytest.raises(SystemExit, match="needs an evaluated step after step 0"):
        claim_row(CURVE_CLAIM, only_start, curve_steps_table(), window=4, resamples=100, seed=0)


# --- the claims table's rl_learns column ---------------------------------------------------------------------------
def test_every_rl_claim_carries_the_g4_verdict_of_its_setting(tmp_path):
    ead, tau = curve_counts(1, 2), curve_counts(1, 1)
    table = pd.concat([evaluation_rows("ead_tis", ead), evaluation_rows("tau1.0", tau)], ignore_index=True)
    EVAL_PROBLEMS.write(table, tmp_path / "eval_problems.csv")
    STEPS.write(curve_steps_table(), tmp_path / "steps.csv")
    g4 = rl_learns.rl_learns_table(table, sampler="tau1.0", metric="pass@1", resamples=200, seed=0, **THRESHOLDS)
    RL_LEARNS.write(g4, tmp_path / "rl_learns.csv")
    other_setting = pd.DataFrame([{**g4.iloc[0].to_dict(), "n": 4, "verdict": "contradicted"}])
    RL_LEARNS.write(pd.concat([g4, other_setting], ignore_index=True), tmp_path / "rl_learns.csv")
    claims = [CURVE_CLAIM, {**CURVE_CLAIM, "id": "C15", "over": "last"},
              {**CURVE_CLAIM, "id": "C7", "metric": "entropy", "over": "last"}]
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
    compare_main(["--claims", json.dumps([CURVE_CLAIM]), "--analysis-claims", str(tmp_path / "analysis_claims.csv"),
                  "--rl-learns", str(tmp_path / "rl_learns_q.csv"), *common])
    both = CLAIMS.read(out)
    assert both["claim"].tolist() == ["C15-curve", "F1"]
    assert both["rl_learns"].iloc[0] == "untested" and pd.isna(both["rl_learns"].iloc[1])
    # without G4's table (a grid that does not run its sampler) the column is empty
    compare_main(["--claims", json.dumps([CURVE_CLAIM]), "--analysis-claims", *common])
    assert CLAIMS.read(out)["rl_learns"].isna().all()


def test_a_claim_on_the_training_pool_carries_g4_measured_on_the_pool(tmp_path):
    """A cell with a fixed training pool holds two evaluations; a claim on the pool (evaluated_with: train_pool) reads
    the pool's rows and carries G4's rule on the pool, a held-out claim the held-out G4."""
    ead, tau = curve_counts(1, 2), curve_counts(1, 1)
    held_out = pd.concat([evaluation_rows("ead_tis", tau), evaluation_rows("tau1.0", tau)], ignore_index=True)
    pool = pd.concat([evaluation_rows("ead_tis", ead), evaluation_rows("tau1.0", tau)],
                     ignore_index=True).assign(evaluated_with="train_pool")
    table = pd.concat([held_out, pool], ignore_index=True)
    EVAL_PROBLEMS.write(table, tmp_path / "eval_problems.csv")
    STEPS.write(curve_steps_table(), tmp_path / "steps.csv")
    g4 = rl_learns.rl_learns_table(table, sampler="tau1.0", metric="pass@1", resamples=200, seed=0, **THRESHOLDS)
    RL_LEARNS.write(g4.assign(verdict="contradicted"), tmp_path / "g4.csv")  # a stand-in verdict, told apart below
    RL_LEARNS.write(g4, tmp_path / "g4_pool.csv")
    claims = [CURVE_CLAIM, {**CURVE_CLAIM, "id": "Q1", "evaluated_with": "train_pool"}]
    out = tmp_path / "claims.csv"
    compare_main(["--claims", json.dumps(claims), "--analysis-claims", "--rl-learns", str(tmp_path / "g4.csv"),
                  "--rl-learns-train-pool", str(tmp_path / "g4_pool.csv"), "--eval-problems",
                  str(tmp_path / "eval_problems.csv"), "--steps", str(tmp_path / "steps.csv"), "--window", "4",
                  "--resamples", "200", "--seed", "0", "--out", str(out)])
    written = CLAIMS.read(out).set_index("claim")
    assert written.loc["C15-curve", "effect"] == pytest.approx(0.0)  # held out: the same counts on both sides
    assert written.loc["Q1", "effect"] > 0 and written.loc["Q1", "evaluated_with"] == "train_pool"
    assert written["rl_learns"].to_dict() == {"C15-curve": "contradicted", "Q1": "supported"}
    # without the pool's table, a pool claim's setting is untested
    compare_main(["--claims", json.dumps(claims), "--analysis-claims", "--rl-learns", str(tmp_path / "g4.csv"),
                  "--eval-problems", str(tmp_path / "eval_problems.csv"), "--steps", str(tmp_path / "steps.csv"),
                  "--window", "4", "--resamples", "200", "--seed", "0", "--out", str(out)])
    assert CLAIMS.read(out).set_index("claim")["rl_learns"].to_dict() == {"C15-curve": "contradicted",
                                                                          "Q1": "untested"}
