"""Seeds for a paired claim, sized from one sampler's pilot seeds before any cell it is compared with runs.

A paired RL claim (``ead.claims.rl``) averages, over (seed, problem), the difference between two cells of one seed;
its 95% CI comes from the two-way bootstrap over seeds and problems, and its minimum detectable effect is
``POWER_Z`` (2.80) times that bootstrap's standard error. Before the compared sampler may run (a pre-registration),
the standard error can only be modelled from the baseline sampler's own seeds. From their (seeds x problems) matrix
of the claim's per-problem value (``over: curve``: the metric averaged over the evaluated steps after step 0;
``over: last``: at the last evaluated step), on the declared evaluation temperature:

* ``seed_var``: the variance between seeds of the seed means, minus the part the interaction puts into them
  (``interaction_var / P``, floored at 0): the training noise of one cell's mean;
* ``interaction_var``: the seed x problem residual variance (after removing seed and problem means, (S-1)(P-1)
  degrees of freedom), evaluation sampling noise included.

Treating the two compared cells of one seed as independent draws of such a cell (conservative: in the grid they share
prompts and rollout random numbers, which can only shrink their difference's variance), the difference matrix's
two-way bootstrap variance at S seeds and P problems is about

    var(seed means of the difference) / S + var(problem means of the difference) / P
      = 2 (seed_var + interaction_var / P) / S + 2 interaction_var / (S P) = (2 seed_var + 4 interaction_var / P) / S,

and the predicted MDE is ``POWER_Z`` times its square root. The table has one row per (S, P) asked for, with the seeds
needed for an MDE at or below ``--target`` at each P. As a check of the model on the pilot itself, ``pseudo_pair_mde``
pairs the pilot's seeds two by two (0 with 1, 2 with 3, ...) as if they were two samplers and reports the two-way
bootstrap's MDE of that difference (at floor(S/2) seeds and the pilot's P): the estimator the claims use, on a null
difference.

Run:
    python -m ead.claims.seed_power --eval-problems results/rl/tiny_strategy/dapo/tau1.0/n8/seed*/eval_problems.csv \
        --metric pass@1 --over curve --evaluated-with eval_tau --seeds 2 3 4 6 8 --problems 96 200 --target 0.02 \
        --resamples 1000 --seed 1234 \
        --out seed_power.csv
"""

from __future__ import annotations

import argparse
import math

import numpy as np
import pandas as pd

from ead.io import read_table, setup_logging
from ead.metrics import POWER_Z, per_problem_metric, two_way_bootstrap_means

__all__ = ["claim_matrix", "predicted_mde", "pseudo_pair_mde", "seed_power_table", "variance_components"]


def claim_matrix(rows: pd.DataFrame, metric: str, over: str, evaluated_with: str = "eval_tau") -> np.ndarray:
    """(seeds x problems) matrix of one cell's per-problem ``metric`` (``over`` curve or last), seeds and problems
    sorted, from one of its evaluations (``evaluated_with``: the declared temperature's on held-out problems, or the
    training pool's) over every seed of one policy, algorithm, sampler and n."""
    rows = rows[rows["evaluated_with"] == evaluated_with]
    if rows.empty:
        raise ValueError(f"the pilot has no evaluation with evaluated_with = {evaluated_with!r}")
    cells = rows[["policy", "algorithm", "sampler", "n"]].drop_duplicates()
    if len(cells) != 1:
        raise ValueError(f"the pilot must be one (policy, algorithm, sampler, n) over its seeds; got {len(cells)}: "
                         f"{cells.to_dict('records')}")
    if over not in ("curve", "last"):
        raise ValueError(f"over = {over!r}; use 'curve' or 'last'")
    matrix, problems = [], None
    for seed, group in rows.groupby("seed", sort=True):
        steps = sorted(step for step in group["step"].unique() if step > 0)
        if not steps:
            raise ValueError(f"seed {seed}: no evaluation after step 0")
        chosen = steps if over == "curve" else steps[-1:]
        values = []
        for step in chosen:
            at = group[group["step"] == step].sort_values("problem_id")
            if problems is None:
                problems = at["problem_id"].tolist()
            if at["problem_id"].tolist() != problems:
                raise ValueError(f"seed {seed}, step {step}: other evaluation problems than the first seed's")
            values.append(per_problem_metric(at, metric))
        matrix.append(np.mean(values, axis=0))
    return np.asarray(matrix)


def variance_components(matrix: np.ndarray) -> tuple[float, float]:
    """(seed_var, interaction_var) of a (seeds x problems) matrix (module docstring)."""
    matrix = np.asarray(matrix, dtype=np.float64)
    seeds, problems = matrix.shape
    if seeds < 2 or problems < 2:
        raise ValueError(f"need at least 2 seeds and 2 problems, got {matrix.shape}")
    residual = (matrix - matrix.mean(axis=1, keepdims=True) - matrix.mean(axis=0, keepdims=True) + matrix.mean())
    interaction_var = float((residual ** 2).sum() / ((seeds - 1) * (problems - 1)))
    seed_var = max(float(matrix.mean(axis=1).var(ddof=1)) - interaction_var / problems, 0.0)
    return seed_var, interaction_var


def predicted_mde(seed_var: float, interaction_var: float, seeds: int, problems: int) -> float:
    """The MDE (80% power, 95% two-sided) of a paired difference of two such cells at ``seeds`` x ``problems``."""
    return POWER_Z * math.sqrt((2 * seed_var + 4 * interaction_var / problems) / seeds)


def pseudo_pair_mde(matrix: np.ndarray, *, resamples: int, seed: int) -> tuple[float, int]:
    """(MDE, pairs): the two-way bootstrap's MDE of seed 2i minus seed 2i+1, a null difference of the pilot's own."""
    matrix = np.asarray(matrix, dtype=np.float64)
    pairs = matrix.shape[0] // 2
    if pairs < 2:
        return float("nan"), pairs
    difference = matrix[0:2 * pairs:2] - matrix[1:2 * pairs:2]
    return POWER_Z * float(two_way_bootstrap_means(difference, resamples=resamples, seed=seed).std(ddof=1)), pairs


def seed_power_table(matrix: np.ndarray, seeds: list[int], problems: list[int], target: float, *, resamples: int,
                     seed: int) -> pd.DataFrame:
    """One row per (seeds, problems): the predicted MDE, with the components and the seeds needed for ``target``."""
    seed_var, interaction_var = variance_components(matrix)
    check, pairs = pseudo_pair_mde(matrix, resamples=resamples, seed=seed)
    rows = []
    for p in problems:
        needed = math.ceil(POWER_Z ** 2 * (2 * seed_var + 4 * interaction_var / p) / target ** 2)
        for s in seeds:
            rows.append({"pilot_seeds": matrix.shape[0], "pilot_problems": matrix.shape[1],
                         "pilot_mean": float(matrix.mean()), "seed_sd": math.sqrt(seed_var),
                         "interaction_sd": math.sqrt(interaction_var), "seeds": s, "problems": p,
                         "predicted_mde": predicted_mde(seed_var, interaction_var, s, p), "target": target,
                         "seeds_needed": max(needed, 2), "pseudo_pair_mde": check, "pseudo_pairs": pairs})
    return pd.DataFrame(rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eval-problems", nargs="+", required=True, help="the pilot cells' eval_problems.csv")
    parser.add_argument("--metric", required=True, help="the claim's metric (pass@k, worst@k, greedy_accuracy)")
    parser.add_argument("--over", required=True, choices=("curve", "last"))
    parser.add_argument("--evaluated-with", required=True, choices=("eval_tau", "train_pool"),
                        help="the claim's evaluation: held-out at rl.eval.tau, or the training pool (rl.train_pool)")
    parser.add_argument("--seeds", type=int, nargs="+", required=True, help="seed counts to predict the MDE at")
    parser.add_argument("--problems", type=int, nargs="+", required=True, help="evaluation sizes to predict it at")
    parser.add_argument("--target", type=float, required=True, help="the MDE wanted (0.02 = 2 points)")
    parser.add_argument("--resamples", type=int, required=True, help="bootstrap resamples of the pseudo-pair check")
    parser.add_argument("--seed", type=int, required=True, help="the bootstrap's seed")
    parser.add_argument("--out", required=True, help="CSV table")
    args = parser.parse_args(argv)
    log = setup_logging("seed_power")
    rows = pd.concat([read_table(path) for path in args.eval_problems], ignore_index=True)
    matrix = claim_matrix(rows, args.metric, args.over, args.evaluated_with)
    table = seed_power_table(matrix, args.seeds, args.problems, args.target, resamples=args.resamples,
                             seed=args.seed)
    table.to_csv(args.out, index=False)
    log.info("pilot %d seeds x %d problems: seed means %s", *matrix.shape,
             ", ".join(f"{value:.4f}" for value in matrix.mean(axis=1)))
    for row in table.itertuples():
        log.info("S = %d, P = %d: predicted MDE %.4f (seed SD %.4f, interaction SD %.4f; %d seeds for %.3f; "
                 "pseudo-pair MDE %.4f at %d pairs)", row.seeds, row.problems, row.predicted_mde, row.seed_sd,
                 row.interaction_sd, row.seeds_needed, row.target, row.pseudo_pair_mde, row.pseudo_pairs)


if __name__ == "__main__":
    main()
