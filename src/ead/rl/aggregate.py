"""Aggregate the RL grid's per-cell tables into the curves every training figure reads.

* train curves: per (policy, algorithm, sampler, n, step, metric), the mean over seeds of each per-step training
  metric (reward, entropy, response length, clip fraction, ppo_kl, grad norm, TIS statistics) with a 95%
  percentile bootstrap CI over seeds;
* eval curves: per (policy, algorithm, sampler, n, step, metric) for greedy accuracy (cells that graded it: the
  verl backend writes greedy_correct = NaN and gets no greedy row), Pass@k and Worst@k, the mean
  over seeds and problems with a 95% CI from a two-way bootstrap (seeds and problems resampled independently;
  the evaluation set is shared by every seed, see `ead.metrics.two_way_bootstrap_mean_ci`).

Run:
    python -m ead.rl.aggregate --steps results/rl/*/*/*/*/*/steps.csv \
        --eval-problems results/rl/*/*/*/*/*/eval_problems.csv --k 1 4 16 --seed 1234 \
        --train-curves results/rl/train_curves.csv --eval-curves results/rl/eval_curves.csv
"""

from __future__ import annotations

import argparse
import re

import numpy as np
import pandas as pd

from ead.io import read_table, setup_logging, write_table
from ead.metrics import bootstrap_mean_ci, pass_at_k, two_way_bootstrap_mean_ci, worst_at_k

GROUP = ["policy", "algorithm", "sampler", "n"]
TRAIN_METRICS = ["reward_mean", "entropy", "response_length", "pg_clipfrac", "ppo_kl", "grad_norm", "grad_norm_max",
                 "tis_weight_mean", "tis_weight_max", "tis_capped_fraction", "behaviour_target_log_ratio",
                 "rollout_s", "grade_s", "update_s", "wall_time_s"]
CONFIG_COLUMNS = ["lr", "tis", "tis_cap", "loss_mode", "schedule_params", "fixed_tau_trains_at", "eval_tau"]


def train_curves(steps: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    rows = []
    for key, group in steps.groupby(GROUP + ["step"], sort=True):
        config = group.iloc[0][CONFIG_COLUMNS].to_dict()
        for metric in TRAIN_METRICS:
            values = group[metric].dropna().to_numpy(dtype=float)
            if values.size == 0:
                continue
            mean, low, high = bootstrap_mean_ci(values, seed=seed)
            rows.append({**dict(zip(GROUP + ["step"], key)), "metric": metric, "value": mean, "ci_low": low,
                         "ci_high": high, "num_seeds": values.size, **config})
    return pd.DataFrame(rows)


def per_problem_metric(problems: pd.DataFrame, metric: str) -> np.ndarray:
    """Per-problem value of greedy_accuracy, pass@k or worst@k."""
    if metric == "greedy_accuracy":
        return problems["greedy_correct"].to_numpy(dtype=float)
    match = re.fullmatch(r"(pass|worst)@(\d+)", metric)
    if not match:
        raise ValueError(f"unknown evaluation metric {metric!r}")
    estimator = pass_at_k if match[1] == "pass" else worst_at_k
    return estimator(problems["num_samples"].to_numpy(), problems["num_correct"].to_numpy(), int(match[2]))


def eval_curves(eval_problems: pd.DataFrame, ks: list[int], seed: int = 0) -> pd.DataFrame:
    """Greedy accuracy (for cells whose greedy_correct has values; the verl backend leaves it NaN), Pass@k, Worst@k."""
    sampled = [f"{kind}@{k}" for k in ks for kind in ("pass", "worst")]
    rows = []
    for key, group in eval_problems.groupby(GROUP + ["step"], sort=True):
        config = group.iloc[0][CONFIG_COLUMNS].to_dict()
        graded = "greedy_correct" in group and group["greedy_correct"].notna().any()
        if graded and group["greedy_correct"].isna().any():
            raise ValueError(f"cells {dict(zip(GROUP + ['step'], key))}: greedy_correct is missing for some "
                             "problems or seeds (a greedy evaluation covers all of them or none)")
        metrics = (["greedy_accuracy"] if graded else []) + sampled
        by_seed = {s: g.sort_values("problem_id") for s, g in group.groupby("seed", sort=True)}
        problem_sets = {tuple(g["problem_id"]) for g in by_seed.values()}
        if len(problem_sets) != 1:
            raise ValueError(f"cells {dict(zip(GROUP + ['step'], key))} were evaluated on different problems")
        for metric in metrics:
            matrix = np.stack([per_problem_metric(g, metric) for g in by_seed.values()])
            mean, low, high = two_way_bootstrap_mean_ci(matrix, seed=seed)
            rows.append({**dict(zip(GROUP + ["step"], key)), "metric": metric, "value": mean, "ci_low": low,
                         "ci_high": high, "num_seeds": matrix.shape[0], "num_problems": matrix.shape[1], **config})
    return pd.DataFrame(rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", nargs="+", required=True, help="every cell's steps.csv")
    parser.add_argument("--eval-problems", nargs="+", required=True, help="every cell's eval_problems.csv")
    parser.add_argument("--k", type=int, nargs="+", required=True, help="Pass@k / Worst@k to report")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    parser.add_argument("--train-curves", required=True)
    parser.add_argument("--eval-curves", required=True)
    args = parser.parse_args(argv)
    log = setup_logging("rl.aggregate")
    steps = pd.concat([read_table(path) for path in args.steps], ignore_index=True)
    problems = pd.concat([read_table(path) for path in args.eval_problems], ignore_index=True)
    write_table(train_curves(steps, args.seed), args.train_curves)
    write_table(eval_curves(problems, args.k, args.seed), args.eval_curves)
    log.info("aggregated %d cells: %s, %s", len(args.steps), args.train_curves, args.eval_curves)


if __name__ == "__main__":
    main()
