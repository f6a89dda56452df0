"""Aggregate the RL grid's per-cell tables into the curves every training figure reads.

* train curves: per (policy, algorithm, sampler, n, step, metric), the mean over seeds of each per-step training
  metric (reward, entropy, response length, clip fraction, ppo_kl, grad norm, TIS statistics) with a 95%
  percentile bootstrap CI over seeds;
* eval curves: per (policy, algorithm, sampler, n, sampler of the evaluation, step, metric) for greedy accuracy
  (cells that graded it: the verl backend writes greedy_correct = NaN and gets no greedy row), Pass@k and Worst@k,
  the mean over seeds and problems with a 95% CI from a two-way bootstrap (seeds and problems resampled independently;
  the evaluation set is shared by every seed, see `ead.metrics.two_way_bootstrap_mean_ci`).

Run:
    python -m ead.rl.aggregate --steps results/rl/*/*/*/*/*/steps.csv \
        --eval-problems results/rl/*/*/*/*/*/eval_problems.csv --k 1 4 16 --seed 1234 \
        --train-curves results/rl/train_curves.csv --eval-curves results/rl/eval_curves.csv
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from ead.io import setup_logging
from ead.metrics import bootstrap_mean_ci, per_problem_metric, two_way_bootstrap_mean_ci
from ead.rl.cells import add_completeness_arguments, read_cells
from ead.tables import CONFIG_COLUMNS, EVAL_CURVES, GROUP, LATER_TRAIN_METRICS, TRAIN_CURVES, TRAIN_METRICS

__all__ = ["eval_curves", "train_curves"]


def train_curves(steps: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    rows = []
    for key, group in steps.groupby(GROUP + ["step"], sort=True):
        config = group.iloc[0][CONFIG_COLUMNS].to_dict()
        for metric in TRAIN_METRICS + LATER_TRAIN_METRICS:
            if metric not in group:  # a later metric in a steps table not read through STEPS
                continue
            values = group[metric].dropna().to_numpy(dtype=float)
            if values.size == 0:
                continue
            mean, low, high = bootstrap_mean_ci(values, seed=seed)
            rows.append({**dict(zip(GROUP + ["step"], key)), "metric": metric, "value": mean, "ci_low": low,
                         "ci_high": high, "num_seeds": values.size, **config})
    return pd.DataFrame(rows)


def eval_curves(eval_problems: pd.DataFrame, ks: list[int], seed: int = 0) -> pd.DataFrame:
    """Greedy accuracy (for cells whose greedy_correct has values; the verl backend leaves it NaN), Pass@k, Worst@k,
    and for k > 1 verl's bootstrap best@k / worst@k (``verl_best@k``, ``verl_worst@k``; ead.metrics), labelled so."""
    sampled = [f"{kind}@{k}" for k in ks for kind in ("pass", "worst")]
    sampled += [f"{kind}@{k}" for k in ks if k > 1 for kind in ("verl_best", "verl_worst")]
    rows = []
    keys = GROUP + ["evaluated_with", "step"]
    for key, group in eval_problems.groupby(keys, sort=True):
        config = group.iloc[0][CONFIG_COLUMNS].to_dict()
        graded = "greedy_correct" in group and group["greedy_correct"].notna().any()
        if graded and group["greedy_correct"].isna().any():
            raise ValueError(f"cells {dict(zip(keys, key))}: greedy_correct is missing for some "
                             "problems or seeds (a greedy evaluation covers all of them or none)")
        metrics = (["greedy_accuracy"] if graded else []) + sampled
        by_seed = {s: g.sort_values("problem_id") for s, g in group.groupby("seed", sort=True)}
        problem_sets = {tuple(g["problem_id"]) for g in by_seed.values()}
        if len(problem_sets) != 1:
            raise ValueError(f"cells {dict(zip(keys, key))} were evaluated on different problems")
        for metric in metrics:
            matrix = np.stack([per_problem_metric(g, metric) for g in by_seed.values()])
            mean, low, high = two_way_bootstrap_mean_ci(matrix, seed=seed)
            rows.append({**dict(zip(keys, key)), "metric": metric, "value": mean, "ci_low": low,
                         "ci_high": high, "num_seeds": matrix.shape[0], "num_problems": matrix.shape[1], **config})
    return pd.DataFrame(rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", nargs="+", required=True, help="every cell's steps.csv")
    parser.add_argument("--eval-problems", nargs="+", required=True, help="every cell's eval_problems.csv")
    parser.add_argument("--k", type=int, nargs="+", required=True, help="Pass@k / Worst@k to report")
    parser.add_argument("--seed", type=int, required=True, help="bootstrap seed (rl.eval.seed)")
    parser.add_argument("--train-curves", required=True)
    parser.add_argument("--eval-curves", required=True)
    add_completeness_arguments(parser)
    args = parser.parse_args(argv)
    log = setup_logging("rl.aggregate")
    steps, problems = read_cells(args.steps, args.eval_problems, args)  # refuses incomplete cells, by file
    TRAIN_CURVES.write(train_curves(steps, args.seed), args.train_curves)
    EVAL_CURVES.write(eval_curves(problems, args.k, args.seed), args.eval_curves)
    log.info("aggregated %d cells: %s, %s", len(args.steps), args.train_curves, args.eval_curves)


if __name__ == "__main__":
    main()
