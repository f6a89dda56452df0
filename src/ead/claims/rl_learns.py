"""Premise G4, "RL learns here": does the baseline sampler's own training raise held-out accuracy at all?

The paper's RL claims are about sample efficiency: which sampler's rollouts teach the policy more. On a testbed where
RL does not move the policy, no sampler can matter, and every RL claim is a null about a policy that did not learn.
So before a claim is read, this job measures, on the grid's cells of the G4 sampler (``rl_learns.sampler``: tau 1.0),
in every (policy, algorithm, n) that has them:

* the effect: per (seed, problem), the metric (``rl_learns.metric``: Pass@1, unbiased from the evaluation's samples)
  at the last evaluated step minus step 0, on the declared evaluation temperature, averaged over seeds and problems;
* its 95% CI from the two-way bootstrap over seeds and problems (``ead.metrics.two_way_bootstrap_means``, seeded by
  ``stats.seed``), its standard error and minimum detectable effect (80% power), as a claims row has them.

The verdict rule (thresholds ``rl_learns.min_effect`` = 0.08 and ``rl_learns.min_ci_low`` = 0.05 by default, i.e.
+8 and +5 points of Pass@1):

* ``supported``: the mean effect is at least ``min_effect`` and the CI's lower bound is above ``min_ci_low``;
* ``contradicted``: the CI's upper bound is below ``min_effect`` (the data rule out a gain of that size);
* ``inconclusive``: otherwise, and whatever the CI on one seed (its CI covers the evaluation problems, not the training
  noise between seeds: the claims' rule, ``ead.claims.rl``).

The table (``ead.tables.RL_LEARNS``, ``results/premises/rl_learns.csv``) is a sibling of the probe's per-policy
verdicts (G1-G3, ``ead.analyses.premises``, measured before RL); ``ead.claims.rl`` copies each row's verdict into the
``rl_learns`` column of the claims made in its (policy, algorithm, n). With ``--train-pool-out``, the same rule is
applied to the cells' evaluations of their fixed training pool (``rl.train_pool``), in a table of its own whose verdict
the pool's claims (``evaluated_with: train_pool``) carry instead.

Run:
    python -m ead.claims.rl_learns --eval-problems results/rl/*/*/*/*/*/eval_problems.csv --sampler tau1.0 \
        --metric pass@1 --min-effect 0.08 --min-ci-low 0.05 --resamples 1000 --seed 1234 \
        --expect-steps 16 --eval-every 4 --own-sampler --out results/premises/rl_learns.csv \
        [--train-pool-out results/premises/rl_learns_train_pool.csv]
"""

from __future__ import annotations

import argparse
import math

import numpy as np
import pandas as pd

from ead.claims import Verdict
from ead.io import setup_logging
from ead.metrics import POWER_Z, per_problem_metric, two_way_bootstrap_means
from ead.rl.cells import add_completeness_arguments, read_eval_problems
from ead.tables import RL_LEARNS

__all__ = ["decide_learns", "learning_difference", "rl_learns_table"]

_SETTING = ["policy", "algorithm", "n"]


def learning_difference(rows: pd.DataFrame, metric: str, evaluated_with: str = "eval_tau") -> tuple[np.ndarray, int]:
    """(seeds x problems) matrix of ``metric`` at the last evaluated step minus step 0, and that step, from one
    (policy, algorithm, sampler, n)'s declared-temperature evaluations (every seed): the held-out ones (G4), or
    with ``evaluated_with = "train_pool"`` those on the cells' fixed training pool (ead.rl.train)."""
    rows = rows[rows["evaluated_with"] == evaluated_with]
    if rows.empty:
        raise ValueError(f"no evaluation rows with evaluated_with = {evaluated_with!r}")
    last = int(rows["step"].max())
    if last <= 0:
        raise ValueError("no evaluation after step 0: nothing to measure learning from")
    differences, problem_order = [], None
    for seed, group in rows.groupby("seed", sort=True):
        start = group[group["step"] == 0].sort_values("problem_id")
        end = group[group["step"] == last].sort_values("problem_id")
        if start.empty or end.empty or list(start["problem_id"]) != list(end["problem_id"]):
            raise ValueError(f"seed {seed}: step 0 and step {last} are not evaluations of the same problems (paired "
                             "by problem)")
        if problem_order is not None and list(end["problem_id"]) != problem_order:
            raise ValueError(f"seed {seed} was evaluated on other problems than the first seed")
        problem_order = list(end["problem_id"])
        differences.append(per_problem_metric(end, metric) - per_problem_metric(start, metric))
    return np.stack(differences), last


def decide_learns(effect: float, ci_low: float, ci_high: float, *, min_effect: float, min_ci_low: float,
                  seeds: int) -> Verdict:
    """G4's verdict (module docstring): supported if effect >= min_effect and ci_low > min_ci_low; contradicted if
    ci_high < min_effect; else inconclusive; inconclusive on one seed whatever the CI."""
    if not all(math.isfinite(v) for v in (effect, ci_low, ci_high)) or ci_low > ci_high:
        raise ValueError(f"need a finite effect and CI with low <= high, got {effect} [{ci_low}, {ci_high}]")
    interval = f"mean {effect:.4g}, 95% CI [{ci_low:.4g}, {ci_high:.4g}]"
    if effect >= min_effect and ci_low > min_ci_low:
        verdict = Verdict("supported", f"{interval}: mean >= {min_effect:g} and CI low > {min_ci_low:g}")
    elif ci_high < min_effect:
        verdict = Verdict("contradicted", f"{interval}: CI high < {min_effect:g}")
    else:
        verdict = Verdict("inconclusive", f"{interval}: neither mean >= {min_effect:g} with CI low > "
                                          f"{min_ci_low:g}, nor CI high < {min_effect:g}")
    if seeds < 2:
        return Verdict("inconclusive", f"one seed: the training noise between seeds is not estimable, so no CI "
                                       f"covers it (problems-only {verdict.verdict} by: {verdict.rule})")
    return verdict


def rl_learns_table(problems: pd.DataFrame, *, sampler: str, metric: str, min_effect: float, min_ci_low: float,
                    resamples: int, seed: int, evaluated_with: str = "eval_tau") -> pd.DataFrame:
    """One G4 row per (policy, algorithm, n) of the grid that has cells of ``sampler``. G4 reads the held-out
    evaluations (``eval_tau``); ``evaluated_with = "train_pool"`` measures the same gain, with the same rule, on the
    cells' fixed training pool (its ``part`` says so): how far tau 1.0 learned the prompts it trained on."""
    rows = []
    cells = problems[problems["sampler"] == sampler]
    for key, group in cells.groupby(_SETTING, sort=True):
        try:
            matrix, last = learning_difference(group, metric, evaluated_with)
        except ValueError as error:
            raise ValueError(f"G4 in {'/'.join(map(str, key))} ({sampler} cells): {error}") from None
        draws = two_way_bootstrap_means(matrix, resamples=resamples, seed=seed)
        effect = float(matrix.mean())
        low, high = float(np.quantile(draws, 0.025)), float(np.quantile(draws, 0.975))
        standard_error = float(np.std(draws, ddof=1)) if resamples > 1 else float("nan")
        verdict = decide_learns(effect, low, high, min_effect=min_effect, min_ci_low=min_ci_low,
                                seeds=matrix.shape[0])
        where = "" if evaluated_with == "eval_tau" else " (training pool)"
        part = f"RL learns here: {sampler}'s {metric} at step {last} minus step 0{where}"
        rows.append({"premise": "G4", "part": part,
                     **dict(zip(_SETTING, key)), "sampler": sampler, "metric": metric, "step": last,
                     "effect": effect, "ci_low": low, "ci_high": high, "standard_error": standard_error,
                     "mde": POWER_Z * standard_error, "min_effect": min_effect, "min_ci_low": min_ci_low,
                     "num_seeds": matrix.shape[0], "num_problems": matrix.shape[1], "verdict": verdict.verdict,
                     "rule": verdict.rule})
    return pd.DataFrame(rows, columns=list(RL_LEARNS.columns))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eval-problems", nargs="+", required=True, help="every cell's eval_problems.csv")
    parser.add_argument("--sampler", required=True, help="the sampler whose own training is measured (tau1.0)")
    parser.add_argument("--metric", required=True, help="evaluation metric (pass@1)")
    parser.add_argument("--min-effect", type=float, required=True, help="the mean gain G4 claims (0.08)")
    parser.add_argument("--min-ci-low", type=float, required=True, help="the CI's lower bound must exceed this (0.05)")
    parser.add_argument("--resamples", type=int, required=True, help="bootstrap resamples")
    parser.add_argument("--seed", type=int, required=True, help="bootstrap seed (stats.seed)")
    parser.add_argument("--out", required=True, help="G4's table")
    parser.add_argument("--train-pool-out",
                        help="G4's rule on the cells' training pool (rl.train_pool), a table of its own (given with "
                             "one)")
    add_completeness_arguments(parser)
    args = parser.parse_args(argv)
    log = setup_logging("claims.rl_learns")
    # a cell cut before its last step would pass its last evaluation off as the end of training: refused, by file
    problems = read_eval_problems(args.eval_problems, args)
    table = rl_learns_table(problems, sampler=args.sampler, metric=args.metric, min_effect=args.min_effect,
                            min_ci_low=args.min_ci_low, resamples=args.resamples, seed=args.seed)
    if table.empty:
        raise SystemExit(f"no cell of sampler {args.sampler!r} among the {len(args.eval_problems)} tables given; G4 "
                         "needs its cells (rl_learns.sampler must run in some experiment)")
    RL_LEARNS.write(table, args.out)
    if args.train_pool_out:
        pool = problems[problems["evaluated_with"] == "train_pool"]
        if pool.empty:
            raise SystemExit(f"--train-pool-out {args.train_pool_out}: no cell has an evaluation of a training pool "
                             "(rl.train_pool)")
        pool_table = rl_learns_table(pool, sampler=args.sampler, metric=args.metric, min_effect=args.min_effect,
                                     min_ci_low=args.min_ci_low, resamples=args.resamples, seed=args.seed,
                                     evaluated_with="train_pool")
        RL_LEARNS.write(pool_table, args.train_pool_out)
        table = pd.concat([table, pool_table], ignore_index=True)
    for row in table.itertuples():
        log.info("G4 %s/%s/n%d: %+.4f [%+.4f, %+.4f] over %d seeds -> %s (%s)", row.policy, row.algorithm, row.n,
                 row.effect, row.ci_low, row.ci_high, row.num_seeds, row.verdict, row.rule)


if __name__ == "__main__":
    main()
