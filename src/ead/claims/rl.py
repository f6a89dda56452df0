"""The paper's RL claims tested on the grid: paired comparisons of cells, with CIs, power and computed verdicts.

Each claim (config ``claims:``) compares a sampler with a baseline sampler in one (policy, algorithm, n) of the grid,
or, with ``baseline_algorithm``, with a cell of another algorithm (e.g. forking-token training against its loss on
every token, same sampler).
The comparison is *paired*: cells of one seed train on the same prompts with the same rollout random numbers, and
every cell is evaluated on the same problems with the same evaluation draws (``ead.rl.train``), so the effect is
the mean over (seed, problem) of the per-problem difference at the last evaluated step, on the seeds both samplers
ran, with a 95% CI from the two-way bootstrap over seeds and problems (``ead.metrics.two_way_bootstrap_means``).
A claim's ``evaluated_with`` picks the evaluation at the declared ``rl.eval.tau`` (default, what the figures draw),
each cell's last-step evaluation with its own sampler (``rl.eval.own_sampler``) or, for a claim about the training
distribution, the evaluation of the cells' fixed pool of training problems (``rl.train_pool``). Training metrics (e.g.
``entropy``) are compared per seed, averaged over the last ``window`` steps, with a bootstrap
over seeds. The minimum detectable effect (80% power, two-sided 5%) is (z_0.975 + z_0.8) x the bootstrap standard
error. The verdict is ``ead.verdicts.decide`` on the CI (threshold 0, in the claimed direction), and inconclusive
whatever the CI for a claim run on one seed (its CI covers the evaluation problems, not the training noise between
seeds). The ``scope`` column says in words what the row can show at that power.

A claim with a ``threshold`` and no ``baseline`` is a threshold claim on one cell: "the metric lies below (``direction:
less``) or above (``greater``) this value", e.g. the revised paper's "fewer than 1% of sequences hit the truncation
threshold" (``metric: tis_capped_sequence_fraction, threshold: 0.01, direction: less``). Its effect is the cell's
metric minus the threshold (so the verdict, the forest plot and the summary read it as every other row: against 0),
its ``baseline`` column the threshold, and the per-seed value of a training metric is its mean over *every* step of
the run (the share of all the run's sequences, the steps having equal batches), not over the last ``window``; an
evaluation metric's is the per-problem value at the last evaluated step, with the two-way bootstrap.

A claim with ``best_of`` (a list of candidate samplers, e.g. the fixed temperatures) and no ``baseline`` compares its
sampler with the *best* candidate, chosen on held-out problems as the inference-only headline does
(``ead.analyses.inference_only``): the evaluation problems are split once by ``selection`` (``fraction`` of them, a
seeded permutation of the sorted problem ids, ``seed``) into a selection part and a disjoint report part; the
candidate with the highest mean ``selection.metric`` on the selection part (over the seeds every cell ran, at the last
step all evaluated; ties go to the first listed) is the baseline, and the paired comparison is computed on the report
part only (:func:`best_of_difference`). Choosing on the problems it is reported on would bias the baseline's score
upward (a best-of-m over noisy means), so a claim "beats the best fixed temperature" would be tested against a
baseline flattered by selection noise. The seeds are shared by both parts: a seed in which a candidate happened to
train well helps it on both, which can only favour the chosen baseline (conservative for the claim). The row's
``baseline`` is the chosen candidate, ``best_of`` the candidates and ``selection`` the rule with each candidate's
selection score; ``num_units`` counts (seed, report problem) pairs.

Run:
    python -m ead.claims.rl --claims '<claims JSON>' --eval-problems results/rl/*/*/*/*/*/eval_problems.csv \
        --steps results/rl/*/*/*/*/*/steps.csv --window 4 --resamples 1000 --seed 1234 \
        --analysis-claims results/analyses/claims.csv --out results/claims.csv
(``--analysis-claims``: the claims of Figs. 1 and 2, tested by ``ead.claims.analyses``, appended after the RL rows;
``--rl-learns results/premises/rl_learns.csv``: premise G4's verdicts, ``ead.claims.rl_learns``, copied into each RL
row's ``rl_learns`` column by the row's (policy, algorithm, n).)

A claim's ``over`` chooses what an evaluation metric's effect averages over time: ``last`` (default) the last step both
cells evaluated, ``curve`` the mean over every step after 0 both evaluated (the area under the learning curve, what
sample efficiency means), per (seed, problem) before the paired bootstrap, so a curve row has the same CI, MDE and
verdict machinery as a last-step row.
"""

from __future__ import annotations

import argparse
import json
import math

import numpy as np
import pandas as pd

from ead.claims import Verdict, decide
from ead.io import setup_logging
from ead.metrics import POWER_Z, bootstrap_means, per_problem_metric, two_way_bootstrap_means
from ead.rl.cells import add_completeness_arguments, read_cells
from ead.settings.claims import baseline_algorithm, claim_evaluation, claim_over
from ead.tables import ALL_TRAIN_METRICS, CLAIMS, RL_LEARNS


def _cell_rows(table: pd.DataFrame, claim: dict, role: str) -> pd.DataFrame:
    """The rows of the claim's ``role`` cell ("sampler" or "baseline"), all seeds."""
    algorithm = baseline_algorithm(claim) if role == "baseline" else claim["algorithm"]
    rows = table[(table["policy"] == claim["policy"]) & (table["algorithm"] == algorithm)
                 & (table["n"] == claim["n"]) & (table["sampler"] == claim[role])]
    if rows.empty:
        raise SystemExit(f"claim {claim['id']}: no cell ({claim['policy']}, {algorithm}, {claim[role]}, "
                         f"n{claim['n']}) in the tables given")
    return rows


def _seed_problem_matrix(rows: pd.DataFrame, metric: str) -> tuple[list, list, np.ndarray]:
    """(seeds, per-seed problem ids, seeds x problems matrix of ``metric``) of one cell's rows at one step."""
    by_seed = {seed: group.sort_values("problem_id") for seed, group in rows.groupby("seed", sort=True)}
    return (sorted(by_seed), [list(g["problem_id"]) for g in by_seed.values()],
            np.stack([per_problem_metric(g, metric) for g in by_seed.values()]))


def evaluation_difference(problems: pd.DataFrame, claim: dict) -> tuple[np.ndarray, int]:
    """(seeds x problems) matrix of sampler - baseline and the last step both evaluated.

    ``over: last`` (default): the metric at that step. ``over: curve``: per (seed, problem) the mean of the metric
    over every step after 0 that both cells evaluated up to that step (the area under the learning curve divided by
    the number of evaluations, what sample efficiency means), on the same problems and sample count at every step
    (a cell whose evaluations differ in problems is refused: the curve mean would mix footings)."""
    evaluated_with = claim_evaluation(claim)
    over = claim_over(claim)
    sides = {}
    for role in ("sampler", "baseline"):
        rows = _cell_rows(problems, claim, role)
        sides[role] = rows[rows["evaluated_with"] == evaluated_with]
        if sides[role].empty:
            raise SystemExit(f"claim {claim['id']}: cell {claim[role]} has no evaluation with evaluated_with = "
                             f"{evaluated_with!r}" + (" (set rl.eval.own_sampler: true; the CPU backend only)"
                                                      if evaluated_with == "own_sampler" else
                                                      " (set rl.train_pool)" if evaluated_with == "train_pool" else ""))
    step = min(int(sides["sampler"]["step"].max()), int(sides["baseline"]["step"].max()))
    # paired on the seeds both ran (an experiment may give one sampler more seeds than another)
    common = sorted(set(sides["sampler"]["seed"]) & set(sides["baseline"]["seed"]))
    if not common:
        raise SystemExit(f"claim {claim['id']}: {claim['sampler']} and {claim['baseline']} share no seed; the "
                         f"comparison must be paired")
    if over == "last":
        read_steps = [step]
    elif over == "curve":
        read_steps = sorted(s for s in set(sides["sampler"]["step"]) & set(sides["baseline"]["step"]) if 0 < s <= step)
        if not read_steps:
            raise SystemExit(f"claim {claim['id']}: over = 'curve' needs an evaluated step after step 0 in both cells")
    else:
        raise SystemExit(f"claim {claim['id']}: over = {over!r}; use 'last' or 'curve'")
    difference, footing = 0.0, None
    for read_step in read_steps:
        matrices = {role: _seed_problem_matrix(rows[(rows["step"] == read_step) & rows["seed"].isin(common)],
                                               claim["metric"]) for role, rows in sides.items()}
        (seeds_a, problems_a, a), (seeds_b, problems_b, b) = matrices["sampler"], matrices["baseline"]
        if seeds_a != seeds_b or problems_a != problems_b:
            raise SystemExit(f"claim {claim['id']}: {claim['sampler']} and {claim['baseline']} were not evaluated on "
                             f"the same problems (or steps) in seeds {common} at step {read_step}; the comparison "
                             "must be paired")
        if footing is not None and footing != (seeds_a, problems_a):
            raise SystemExit(f"claim {claim['id']}: the evaluation at step {read_step} holds other problems than the "
                             f"one at step {read_steps[0]}; a curve mean needs the same problems at every step")
        footing = (seeds_a, problems_a)
        difference = difference + (a - b) / len(read_steps)
    return difference, step


def training_difference(steps: pd.DataFrame, claim: dict, window: int) -> tuple[np.ndarray, int]:
    """Per-seed difference of a training metric averaged over the last ``window`` steps, and the last step."""
    means = {}
    for role in ("sampler", "baseline"):
        rows = _cell_rows(steps, claim, role)
        last = int(rows["step"].max())
        recent = rows[rows["step"] > last - window]
        means[role] = recent.groupby("seed")[claim["metric"]].mean()
    common = means["sampler"].index.intersection(means["baseline"].index)
    if common.empty:
        raise SystemExit(f"claim {claim['id']}: the two samplers share no seed")
    return (means["sampler"][common] - means["baseline"][common]).to_numpy(), last


def threshold_distance(problems: pd.DataFrame, steps: pd.DataFrame, claim: dict) -> tuple[np.ndarray, int]:
    """A threshold claim's cell minus its threshold: per seed (training metric: the mean over every step of the run)
    or per (seed, problem) at the last evaluated step (evaluation metric), and that last step."""
    if "baseline" in claim:
        raise SystemExit(f"claim {claim['id']}: a threshold claim has no baseline (got baseline = "
                         f"{claim['baseline']!r} and threshold = {claim['threshold']!r}); drop one")
    threshold, metric = float(claim["threshold"]), claim["metric"]
    if metric in ALL_TRAIN_METRICS:
        rows = _cell_rows(steps, claim, "sampler")
        per_seed = rows.groupby("seed")[metric].mean()
        if per_seed.isna().any():
            raise SystemExit(f"claim {claim['id']}: cell {claim['sampler']} has no {metric} in seeds "
                             f"{per_seed.index[per_seed.isna()].tolist()} (the verl backend records "
                             "tis_capped_sequence_fraction in sequence-level TIS cells only)")
        return per_seed.to_numpy() - threshold, int(rows["step"].max())
    rows = _cell_rows(problems, claim, "sampler")
    rows = rows[rows["evaluated_with"] == claim_evaluation(claim)]
    if rows.empty:
        raise SystemExit(f"claim {claim['id']}: cell {claim['sampler']} has no evaluation with evaluated_with = "
                         f"{claim_evaluation(claim)!r}")
    step = int(rows["step"].max())
    by_seed = {seed: group.sort_values("problem_id") for seed, group in rows[rows["step"] == step].groupby("seed")}
    return np.stack([per_problem_metric(g, metric) for g in by_seed.values()]) - threshold, step


def selection_split(problem_ids, fraction: float, seed: int) -> tuple[list, list]:
    """The (selection, report) parts of the evaluation problems: a permutation of the sorted ids by ``seed``, the
    first round(fraction x count) selecting; both parts non-empty and disjoint."""
    ids = sorted(set(problem_ids))
    size = round(fraction * len(ids))
    if not 0 < size < len(ids):
        raise SystemExit(f"selection fraction {fraction:g} of {len(ids)} evaluation problems leaves a part empty; "
                         "a best_of claim needs problems to select on and problems to report on")
    order = np.random.default_rng(seed).permutation(len(ids))
    return sorted(ids[i] for i in order[:size]), sorted(ids[i] for i in order[size:])


def best_of_difference(problems: pd.DataFrame, claim: dict) -> tuple[np.ndarray, int, str, dict]:
    """A ``best_of`` claim: the candidate with the best ``selection.metric`` on the selection problems, and the
    (seeds x report problems) matrix of sampler - that candidate at the last step every cell evaluated.

    Returns (matrix, step, chosen candidate, details: the selection and report problem ids, the seeds and each
    candidate's selection score)."""
    for other in ("baseline", "threshold"):
        if other in claim:
            raise SystemExit(f"claim {claim['id']}: a best_of claim chooses its baseline (got {other} = "
                             f"{claim[other]!r} and best_of = {claim['best_of']!r}); drop one")
    selection, evaluated_with = claim["selection"], claim_evaluation(claim)
    cells = {}
    for name in [claim["sampler"], *claim["best_of"]]:
        role = "sampler" if name == claim["sampler"] else "baseline"
        rows = _cell_rows(problems, {**claim, role: name}, role)
        cells[name] = rows[rows["evaluated_with"] == evaluated_with]
        if cells[name].empty:
            raise SystemExit(f"claim {claim['id']}: cell {name} has no evaluation with evaluated_with = "
                             f"{evaluated_with!r}")
    step = min(int(rows["step"].max()) for rows in cells.values())
    seeds = sorted(int(seed) for seed in set.intersection(*(set(rows["seed"]) for rows in cells.values())))
    if not seeds:
        raise SystemExit(f"claim {claim['id']}: {claim['sampler']} and the candidates {claim['best_of']} share no "
                         "seed; the comparison must be paired")
    cells = {name: rows[(rows["step"] == step) & rows["seed"].isin(seeds)] for name, rows in cells.items()}
    ids = sorted(cells[claim["sampler"]]["problem_id"].unique())
    for name, rows in cells.items():
        pairs = set(zip(rows["seed"], rows["problem_id"]))
        if pairs != {(seed, problem) for seed in seeds for problem in ids}:
            raise SystemExit(f"claim {claim['id']}: {name} and {claim['sampler']} were not evaluated on the same "
                             f"problems at step {step} in seeds {seeds}; the comparison must be paired")
    select_ids, report_ids = selection_split(ids, float(selection["fraction"]), int(selection["seed"]))
    scores = {name: float(per_problem_metric(cells[name][cells[name]["problem_id"].isin(select_ids)],
                                             selection["metric"]).mean())
              for name in claim["best_of"]}
    chosen = max(claim["best_of"], key=lambda name: scores[name])  # max keeps the first of equal scores
    report = problems[(problems["step"] == step) & problems["seed"].isin(seeds)
                      & problems["problem_id"].isin(report_ids)]
    matrix, _ = evaluation_difference(report, {**claim, "baseline": chosen})
    return matrix, step, chosen, {"select_ids": select_ids, "report_ids": report_ids, "seeds": seeds,
                                  "scores": scores}


def best_of_rule(claim: dict, chosen: str, details: dict) -> str:
    """The ``selection`` column: the rule and each candidate's score on the selection problems."""
    selection = claim["selection"]
    scores = ", ".join(f"{name} {score:.4f}" for name, score in details["scores"].items())
    return (f"best {selection['metric']} on {len(details['select_ids'])} selection problems (fraction "
            f"{selection['fraction']:g}, seed {selection['seed']}; seeds {details['seeds']}): {scores} -> {chosen}; "
            f"reported on the other {len(details['report_ids'])}")


def restrict_to_seeds(claim: dict, problems: pd.DataFrame, steps: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A claim with ``seeds`` (e.g. a replication on fresh seeds beside the seeds of an earlier claim on the same
    cells) reads only those seeds' rows; every cell it compares must hold each of them (a missing one is an error
    naming the cell and the seeds, never a silently smaller claim). Without ``seeds``: the tables unchanged."""
    if "seeds" not in claim:
        return problems, steps
    wanted = sorted(int(seed) for seed in claim["seeds"])
    table = steps if claim["metric"] in ALL_TRAIN_METRICS else problems
    names = [claim["sampler"], *claim.get("best_of", []), *([claim["baseline"]] if "baseline" in claim else [])]
    for name in names:
        role = "sampler" if name == claim["sampler"] else "baseline"
        held = set(_cell_rows(table, {**claim, role: name}, role)["seed"])
        missing = [seed for seed in wanted if seed not in held]
        if missing:
            raise SystemExit(f"claim {claim['id']}: cell {name} has no seeds {missing} of the claim's seeds {wanted} "
                             "(run them, or drop them from the claim's seeds)")
    return problems[problems["seed"].isin(wanted)], steps[steps["seed"].isin(wanted)]


def claim_row(claim: dict, problems: pd.DataFrame, steps: pd.DataFrame, *, window: int, resamples: int,
               seed: int) -> dict:
    """One claims-table row: effect, CI, standard error, minimum detectable effect and verdict (on the claim's
    ``seeds`` only, where it names them: :func:`restrict_to_seeds`)."""
    chosen = None
    problems, steps = restrict_to_seeds(claim, problems, steps)
    if ("threshold" in claim or "best_of" in claim) and claim_over(claim) != "last":
        kind = "threshold" if "threshold" in claim else "best_of"
        raise SystemExit(f"claim {claim['id']}: a {kind} claim reads the last step; over = {claim['over']!r}")
    if "best_of" in claim:
        if claim["metric"] in ALL_TRAIN_METRICS:
            raise SystemExit(f"claim {claim['id']}: best_of chooses its baseline on evaluation problems; "
                             f"{claim['metric']!r} is a training metric")
        matrix, step, chosen, details = best_of_difference(problems, claim)
        draws = two_way_bootstrap_means(matrix, resamples=resamples, seed=seed)
        effect, seeds, units = float(matrix.mean()), matrix.shape[0], matrix.size
        claim = {**claim, "baseline": chosen}
    elif "threshold" in claim:
        differences, step = threshold_distance(problems, steps, claim)
        if differences.ndim == 1:
            draws = bootstrap_means(differences, resamples=resamples, seed=seed)
            effect, seeds, units = float(differences.mean()), differences.size, differences.size
        else:
            draws = two_way_bootstrap_means(differences, resamples=resamples, seed=seed)
            effect, seeds, units = float(differences.mean()), differences.shape[0], differences.size
    elif claim["metric"] in ALL_TRAIN_METRICS:
        differences, step = training_difference(steps, claim, window)
        draws = bootstrap_means(differences, resamples=resamples, seed=seed)
        effect, seeds, units = float(differences.mean()), differences.size, differences.size
    else:
        matrix, step = evaluation_difference(problems, claim)
        draws = two_way_bootstrap_means(matrix, resamples=resamples, seed=seed)
        effect, seeds, units = float(matrix.mean()), matrix.shape[0], matrix.size
    low, high = float(np.quantile(draws, 0.025)), float(np.quantile(draws, 0.975))
    standard_error = float(np.std(draws, ddof=1))
    # a threshold claim's threshold is the size that matters: it does not read smallest_effect
    smallest_effect = None if "threshold" in claim else claim.get("smallest_effect")
    verdict = decide(low, high, direction=claim.get("direction", "greater"), smallest_effect=smallest_effect)
    if "threshold" in claim:
        verdict = Verdict(verdict.verdict, f"{claim['metric']} minus {claim['threshold']:g}: {verdict.rule}")
    if seeds < 2:  # the bootstrap then resamples problems only: its CI leaves out the training noise between seeds
        verdict = Verdict("inconclusive", f"one seed: the training noise between seeds is not estimable, so no CI "
                                          f"covers it (problems-only {verdict.rule})")
    mde = POWER_Z * standard_error if math.isfinite(standard_error) else float("nan")
    row = {"claim": claim["id"], "figure": claim["figure"], "statement": claim["statement"],
            "policy": claim["policy"], "algorithm": claim["algorithm"], "n": claim["n"], "sampler": claim["sampler"],
            "baseline": claim["baseline"] if "threshold" not in claim else f"{claim['threshold']:g}",
            "baseline_algorithm": baseline_algorithm(claim), "threshold": claim.get("threshold", math.nan),
            "metric": claim["metric"],
            "evaluated_with": (None if claim["metric"] in ALL_TRAIN_METRICS
                               else claim_evaluation(claim)),
            "over": None if claim["metric"] in ALL_TRAIN_METRICS else claim_over(claim),
            "step": step, "effect": effect, "ci_low": low,
            "ci_high": high, "standard_error": standard_error,
            "mde": mde, "num_seeds": seeds, "num_units": units,
            "smallest_effect": math.nan if smallest_effect is None else smallest_effect,
            "verdict": verdict.verdict, "rule": verdict.rule,
            "scope": scope(claim["metric"], mde, seeds, units)}
    if "prediction" in claim:
        row.update(predicted_verdict=claim["prediction"]["verdict"], predicted_effect=claim["prediction"]["effect"])
    if chosen is not None:
        row.update(best_of=" ".join(claim["best_of"]), selection=best_of_rule(claim, chosen, details))
    return row


def scope(metric: str, mde: float, seeds: int, units: int) -> str:
    """What this grid can and cannot show about a claim, from its power (the `scope` column)."""
    if seeds < 2:
        covers = ("one training-metric value" if metric in ALL_TRAIN_METRICS or units < 2
                  else f"{units} evaluation problems")
        return (f"one seed: the CI covers {covers} but not the training noise between seeds, so "
                f"the row cannot test the claim; add seeds (configs/full.yaml)")
    size = f"{seeds} seeds" + (f" x {units // seeds} problems" if units > seeds else "")
    if mde == 0:  # every paired difference equal (e.g. all zero at smoke size): no spread to size a power on
        return (f"{size}: every paired difference in {metric} is the same, so no power can be stated (the MDE of 0 "
                f"says nothing); a grid with spread between seeds and problems is needed to size one")
    return (f"{size}: detects a difference in {metric} of {mde:.3g} or more with 80% power; a smaller true effect "
            f"usually reads inconclusive here, which is not evidence against it")


def rl_learns_column(rows: pd.DataFrame, premise: pd.DataFrame | None,
                     pool_premise: pd.DataFrame | None = None) -> pd.Series:
    """Per RL claims row, the verdict of premise G4 (``ead.claims.rl_learns``) in its (policy, algorithm, n): whether
    the setting the claim compares in is one where RL learns at all; ``untested`` where the G4 table has no such row.
    A claim on the training pool (``evaluated_with: train_pool``) carries G4's rule on the pool (``pool_premise``):
    whether RL learned the problems it trains on."""
    if premise is None:
        return pd.Series([None] * len(rows), index=rows.index, dtype=object)

    def by_setting(table):
        return {} if table is None else {(row.policy, row.algorithm, int(row.n)): row.verdict
                                         for row in table.itertuples()}

    verdicts = {"held_out": by_setting(premise), "train_pool": by_setting(pool_premise)}
    return pd.Series([verdicts["train_pool" if getattr(row, "evaluated_with", None) == "train_pool" else "held_out"]
                      .get((row.policy, row.algorithm, int(row.n)), "untested") for row in rows.itertuples()],
                     index=rows.index, dtype=object)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", required=True, help="the config's claims list (JSON)")
    parser.add_argument("--eval-problems", nargs="+", required=True, help="eval_problems.csv of the cells")
    parser.add_argument("--steps", nargs="+", required=True, help="steps.csv of the cells")
    parser.add_argument("--window", type=int, required=True, help="last steps averaged for training metrics")
    parser.add_argument("--resamples", type=int, required=True, help="bootstrap resamples")
    parser.add_argument("--seed", type=int, required=True, help="bootstrap seed")
    parser.add_argument("--analysis-claims", nargs="*", required=True,
                        help="claims tables of the analyses (ead.claims.analyses, zero or more), whose rows follow the "
                             "RL claims")
    parser.add_argument("--rl-learns", help="premise G4's table (ead.claims.rl_learns): its verdict becomes each RL "
                                            "claim's rl_learns column")
    parser.add_argument("--rl-learns-train-pool",
                        help="G4's rule on the cells' training pool (ead.claims.rl_learns --train-pool-out): its "
                             "verdict becomes the rl_learns column of the claims on the pool (evaluated_with: "
                             "train_pool)")
    parser.add_argument("--out", required=True, help="claims table")
    add_completeness_arguments(parser)
    args = parser.parse_args(argv)
    log = setup_logging("claims.rl")
    steps, problems = read_cells(args.steps, args.eval_problems, args)  # refuses incomplete cells, by file
    rows = [claim_row(claim, problems, steps, window=args.window, resamples=args.resamples, seed=args.seed)
            for claim in json.loads(args.claims)]
    rl_rows = pd.DataFrame(rows)
    if not rl_rows.empty:
        rl_rows["rl_learns"] = rl_learns_column(
            rl_rows, RL_LEARNS.read(args.rl_learns) if args.rl_learns else None,
            RL_LEARNS.read(args.rl_learns_train_pool) if args.rl_learns_train_pool else None)
    analysis_rows = [CLAIMS.read(path) for path in args.analysis_claims]
    CLAIMS.write(pd.concat([rl_rows, *analysis_rows], ignore_index=True), args.out)
    for row in rows:
        log.info("%s %s: %+.4f [%+.4f, %+.4f], MDE %.4f -> %s", row["claim"], row["statement"], row["effect"],
                 row["ci_low"], row["ci_high"], row["mde"], row["verdict"])


if __name__ == "__main__":
    main()
