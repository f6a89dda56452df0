"""Paired-difference curves: each sampler minus a baseline sampler at every evaluated RL step, with its 95% CI.

The RL figures draw each sampler's mean over seeds with its own CI; two such bands can overlap while the paired
difference the claims test (``ead.claims.rl``) is clearly non-zero, because cells of one seed share their prompts,
rollout random numbers and evaluation draws. This job computes, for every baseline in ``paired_baselines`` of the
config and every (policy, algorithm, n) of the grid that has the baseline's cells, the per-problem difference
sampler - baseline on the seeds both ran, at every step both evaluated, averaged over (seed, problem), with the CI of
the two-way bootstrap over seeds and problems (``ead.metrics.two_way_bootstrap_means``), its standard error and
minimum detectable effect (80% power): the same estimator as a claims row, at every step instead of the last. The
figures read this table only.

Run:
    python -m ead.rl.paired --eval-problems results/rl/*/*/*/*/*/eval_problems.csv --baselines tau1.0 \
        --k 1 2 4 16 --resamples 1000 --seed 1234 --out results/rl/paired_curves.csv
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from ead.io import setup_logging
from ead.metrics import POWER_Z, per_problem_metric, two_way_bootstrap_means
from ead.rl.cells import read_eval_problems
from ead.tables import PAIRED_CURVES

__all__ = ["paired_curves"]

_GROUP = ["policy", "algorithm", "n", "evaluated_with"]


def _by_seed(rows: pd.DataFrame) -> dict:
    return {seed: group.sort_values("problem_id") for seed, group in rows.groupby("seed", sort=True)}


def paired_curves(problems: pd.DataFrame, baselines: list[str], ks: list[int], *, resamples: int,
                  seed: int) -> pd.DataFrame:
    """One row per (baseline, policy, algorithm, n, evaluated_with, sampler, step, metric): the paired difference."""
    metrics = [f"{kind}@{k}" for k in ks for kind in ("pass", "worst")]
    rows = []
    for baseline in baselines:
        for key, group in problems.groupby(_GROUP, sort=True):
            base = group[group["sampler"] == baseline]
            if base.empty:
                continue
            for sampler, cells in group[group["sampler"] != baseline].groupby("sampler", sort=True):
                for step in sorted(set(cells["step"]) & set(base["step"])):
                    side = _by_seed(cells[cells["step"] == step])
                    other = _by_seed(base[base["step"] == step])
                    common = sorted(set(side) & set(other))
                    if not common:
                        continue
                    for s in common:
                        if list(side[s]["problem_id"]) != list(other[s]["problem_id"]):
                            raise ValueError(f"{sampler} and {baseline} in {dict(zip(_GROUP, key))} were not evaluated "
                                             f"on the same problems at step {step}, seed {s}; a paired difference "
                                             f"needs the same problems")
                    for metric in metrics:
                        difference = np.stack([per_problem_metric(side[s], metric)
                                               - per_problem_metric(other[s], metric) for s in common])
                        draws = two_way_bootstrap_means(difference, resamples=resamples, seed=seed)
                        standard_error = float(np.std(draws, ddof=1)) if resamples > 1 else float("nan")
                        rows.append({**dict(zip(_GROUP, key)), "sampler": sampler, "baseline": baseline,
                                     "step": int(step), "metric": metric, "effect": float(difference.mean()),
                                     "ci_low": float(np.quantile(draws, 0.025)),
                                     "ci_high": float(np.quantile(draws, 0.975)),
                                     "standard_error": standard_error, "mde": POWER_Z * standard_error,
                                     "num_seeds": len(common), "num_problems": difference.shape[1]})
    columns = [*_GROUP, "sampler", "baseline", "step", "metric", "effect", "ci_low", "ci_high", "standard_error",
               "mde", "num_seeds", "num_problems"]
    return pd.DataFrame(rows, columns=columns)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eval-problems", nargs="+", required=True, help="every cell's eval_problems.csv")
    parser.add_argument("--baselines", nargs="+", required=True, help="samplers to difference against")
    parser.add_argument("--k", type=int, nargs="+", required=True, help="Pass@k / Worst@k to report")
    parser.add_argument("--resamples", type=int, required=True, help="bootstrap resamples")
    parser.add_argument("--seed", type=int, required=True, help="bootstrap seed")
    parser.add_argument("--out", required=True, help="paired curves table")
    args = parser.parse_args(argv)
    log = setup_logging("rl.paired")
    # each file's keys and counts, no cell twice, and every step and problem of the policy's evaluations in each cell
    problems = read_eval_problems(args.eval_problems)
    table = paired_curves(problems, args.baselines, args.k, resamples=args.resamples, seed=args.seed)
    PAIRED_CURVES.write(table, args.out)
    log.info("%d paired differences against %s from %d cells: %s", len(table), args.baselines,
             len(args.eval_problems), args.out)


if __name__ == "__main__":
    main()
