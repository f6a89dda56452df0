"""Where the RL grid's training signal and learning land: two breakdowns of the cells, by training phase and by a
column of the task's data table (config ``rl.breakdown``).

* signal by phase (``ead.tables.SIGNAL_BY_PHASE``): the training steps 1..S cut into ``--phases`` equal phases
  (step s is in phase ceil(s P / S)); per (policy, algorithm, sampler, n, phase) and per-step training metric of
  ``steps.csv`` (``--train-metrics``: e.g. the share of rollout groups with 0 < correct < n, the share with a correct
  rollout, the first response token's entropy), each seed's mean over the phase's steps, then their mean over seeds
  with a 95% percentile bootstrap CI over seeds;
* evaluation by group (``ead.tables.EVAL_BY_GROUP``): per (policy, algorithm, sampler, n, evaluated step) and value
  of the data table's column ``--group-by`` (the strategy task's ``key``), ``--metric`` (Pass@1, unbiased from the
  evaluation's counts) at the declared evaluation temperature (``evaluated_with == eval_tau``), the mean over seeds
  and the group's problems with a 95% CI from the two-way bootstrap over seeds and problems
  (``ead.metrics.two_way_bootstrap_mean_ci``), and the group's problem count; and, from the cells'
  ``eval_failures.csv`` (``--eval-failures``, CPU backend: the same samples counted by first mistake), for each of the
  task's failure types a row of metric ``failure:<type>``, the share of a problem's samples whose first mistake it is
  (on the strategy task ``failure:strategy``, a wrong strategy at the fork, and ``failure:execution``, the key's
  strategy carried out wrong: the chain from the fork to the answer, by key and step), with the same CI, and the same
  over every problem (group ``(all)``, :data:`ALL_GROUPS`).

A metric a cell does not record (the verl backend's empty columns, tables older than the column) gives no row; a
run where no cell records any is refused. Cells are read complete (``ead.rl.cells``), as by every job that combines
them.

Run:
    python -m ead.rl.breakdown --steps results/rl/*/*/*/*/*/steps.csv \
        --eval-problems results/rl/*/*/*/*/*/eval_problems.csv --eval-failures results/rl/*/*/*/*/*/eval_failures.csv \
        --data results/data/strategy.parquet \
        --phases 4 --train-metrics informative_group_fraction solved_group_fraction first_token_entropy \
        --group-by key --metric pass@1 --resamples 1000 --seed 1234 \
        --expect-steps 16 --eval-every 4 --own-sampler \
        --signal-out results/rl/signal_by_phase.csv --groups-out results/rl/eval_by_group.csv
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from ead.io import read_table, setup_logging
from ead.metrics import bootstrap_mean_ci, per_problem_metric, two_way_bootstrap_mean_ci
from ead.rl.cells import add_completeness_arguments, read_cells
from ead.tables import (
    CELL_COLUMNS,
    EVAL_BY_GROUP,
    EVAL_FAILURES,
    FAILURE_METRIC_PREFIX,
    FAILURE_OK,
    GROUP,
    SIGNAL_BY_PHASE,
)

__all__ = ["ALL_GROUPS", "eval_by_group", "failure_shares", "phase_of_step", "signal_by_phase"]

#: The group of the failure shares over every problem of the evaluation, beside those of each value of the column.
ALL_GROUPS = "(all)"


def phase_of_step(step, last_step: int, phases: int):
    """The phase (1..``phases``) of training step ``step`` (1..``last_step``): ceil(step * phases / last_step), so
    the phases are equal when ``phases`` divides ``last_step`` and differ by at most one step otherwise."""
    if not 1 <= phases <= last_step:
        raise ValueError(f"phases = {phases}: need 1 <= phases <= the last training step ({last_step})")
    return np.ceil(np.asarray(step) * phases / last_step).astype(int)


def signal_by_phase(steps: pd.DataFrame, metrics: list[str], phases: int, *, resamples: int,
                    seed: int) -> pd.DataFrame:
    """One row per (policy, algorithm, sampler, n, metric, phase) whose cells record the metric (module docstring)."""
    last_step = int(steps["step"].max())
    steps = steps.assign(phase=phase_of_step(steps["step"], last_step, phases))
    bounds = steps.groupby("phase")["step"].agg(["min", "max"])
    rows = []
    for key, group in steps.groupby(GROUP, sort=True):
        for metric in metrics:
            if metric not in group:
                continue
            for phase, rows_of_phase in group.groupby("phase", sort=True):
                per_seed = rows_of_phase.groupby("seed")[metric].mean().dropna()
                if per_seed.empty:
                    continue
                mean, low, high = bootstrap_mean_ci(per_seed.to_numpy(), resamples=resamples, seed=seed)
                rows.append({**dict(zip(GROUP, key)), "metric": metric, "phase": int(phase),
                             "first_step": int(bounds.loc[phase, "min"]), "last_step": int(bounds.loc[phase, "max"]),
                             "value": mean, "ci_low": low, "ci_high": high, "num_seeds": int(per_seed.size)})
    return pd.DataFrame(rows, columns=list(SIGNAL_BY_PHASE.columns))


def failure_shares(failures: pd.DataFrame, problems: pd.DataFrame) -> pd.DataFrame:
    """Per-problem rows of ``problems`` (eval_problems.csv's) with one column ``failure:<type>`` per failure type of
    ``failures`` (eval_failures.csv's rows of the same cells): the share of the problem's samples whose first mistake
    is that type. A problem whose counts are missing, or do not sum to its ``num_samples``, is an error naming its
    cell, step and evaluation."""
    where = [*CELL_COLUMNS, "step", "evaluated_with", "problem_id"]
    wide = failures.pivot_table(index=where, columns="failure", values="num_samples", aggfunc="sum")
    joined = problems.merge(wide.reset_index(), on=where, how="left", validate="one_to_one")
    types = [column for column in wide.columns if column != FAILURE_OK]
    counted = joined[list(wide.columns)]
    broken = counted.isna().any(axis=1) | (counted.sum(axis=1) != joined["num_samples"])
    if broken.any():
        row = joined[broken].iloc[0]
        raise ValueError(f"eval_failures.csv of cell {dict(row[list(CELL_COLUMNS)])}: problem {row['problem_id']} at "
                         f"step {row['step']} ({row['evaluated_with']}) has no failure counts, or counts that do not "
                         f"sum to its {row['num_samples']} samples ({int(broken.sum())} such rows); rerun the cell")
    shares = {f"{FAILURE_METRIC_PREFIX}{kind}": joined[kind] / joined["num_samples"] for kind in types}
    return joined.drop(columns=list(wide.columns)).assign(**shares)


def eval_by_group(problems: pd.DataFrame, data: pd.DataFrame, group_by: str, metric: str, *, resamples: int,
                  seed: int, failures: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per (policy, algorithm, sampler, n, step, value of ``group_by``) and metric: ``metric`` at the declared
    evaluation temperature over the group's problems, and with ``failures`` (the cells' eval_failures.csv rows) each
    failure type's share (:func:`failure_shares`; module docstring). ``data`` is the task's table (``id`` and
    ``group_by``)."""
    if group_by not in data:
        raise ValueError(f"the data table has no column {group_by!r} to group the evaluation by (columns: "
                         f"{sorted(data.columns)})")
    groups = data.set_index("id")[group_by].astype(str)
    problems = problems[problems["evaluated_with"] == "eval_tau"]
    unknown = sorted(set(problems["problem_id"]) - set(groups.index))
    if unknown:
        raise ValueError(f"{len(unknown)} evaluated problems are not in the data table (e.g. {unknown[:3]}): the "
                         "cells were evaluated on another task's problems")
    problems = problems.assign(group=groups.loc[problems["problem_id"]].to_numpy())
    metrics = [metric]
    if failures is not None and len(failures):
        problems = failure_shares(failures, problems)
        metrics += sorted(column for column in problems.columns if column.startswith(FAILURE_METRIC_PREFIX))
    rows = []

    def estimate(table: pd.DataFrame, names: list[str]) -> None:
        for key, cells in table.groupby([*GROUP, "step", "group"], sort=True):
            by_seed = {s: of_seed.sort_values("problem_id") for s, of_seed in cells.groupby("seed", sort=True)}
            order = [list(of_seed["problem_id"]) for of_seed in by_seed.values()]
            if any(ids != order[0] for ids in order):
                raise ValueError(f"{dict(zip([*GROUP, 'step', group_by], key))}: the seeds were evaluated on "
                                 "different problems; the two-way bootstrap needs one evaluation set")
            for name in names:
                matrix = np.stack([of_seed[name].to_numpy(dtype=float) if name.startswith(FAILURE_METRIC_PREFIX)
                                   else per_problem_metric(of_seed, name) for of_seed in by_seed.values()])
                mean, low, high = two_way_bootstrap_mean_ci(matrix, resamples=resamples, seed=seed)
                rows.append({**dict(zip([*GROUP, "step"], key[:-1])), "group_by": group_by, "group": key[-1],
                             "metric": name, "value": mean, "ci_low": low, "ci_high": high,
                             "num_seeds": matrix.shape[0], "num_problems": matrix.shape[1]})

    estimate(problems, metrics)
    # the failure shares also over every problem (group ALL_GROUPS): the chain figure's lines, with their own CIs
    estimate(problems.assign(group=ALL_GROUPS), [name for name in metrics if name.startswith(FAILURE_METRIC_PREFIX)])
    return pd.DataFrame(rows, columns=list(EVAL_BY_GROUP.columns))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", nargs="+", required=True, help="every cell's steps.csv")
    parser.add_argument("--eval-problems", nargs="+", required=True, help="every cell's eval_problems.csv")
    parser.add_argument("--eval-failures", nargs="*", required=True,
                        help="every cell's eval_failures.csv (CPU backend; the flag alone, for verl's cells: no "
                             "failure shares by group)")
    parser.add_argument("--data", required=True, help="the cells' task table (rl.task's), with the --group-by column")
    parser.add_argument("--phases", type=int, required=True, help="equal phases of training (rl.breakdown.phases)")
    parser.add_argument("--train-metrics", nargs="+", required=True,
                        help="steps.csv columns averaged by phase (rl.breakdown.train_metrics)")
    parser.add_argument("--group-by", required=True, help="the data table's column (rl.breakdown.group_by)")
    parser.add_argument("--metric", required=True, help="evaluation metric by group (rl.breakdown.metric: pass@1)")
    parser.add_argument("--resamples", type=int, required=True, help="bootstrap resamples (claims_bootstrap)")
    parser.add_argument("--seed", type=int, required=True, help="bootstrap seed (stats.seed)")
    parser.add_argument("--signal-out", required=True, help="the signal-by-phase table")
    parser.add_argument("--groups-out", required=True, help="the evaluation-by-group table")
    add_completeness_arguments(parser)
    args = parser.parse_args(argv)
    log = setup_logging("rl.breakdown")
    steps, problems = read_cells(args.steps, args.eval_problems, args)
    signal = signal_by_phase(steps, args.train_metrics, args.phases, resamples=args.resamples, seed=args.seed)
    if signal.empty:
        raise SystemExit(f"no cell records any of {args.train_metrics} (the verl backend and older steps.csv tables "
                         "leave them empty): nothing to break down by phase")
    failures = EVAL_FAILURES.read_all(args.eval_failures) if args.eval_failures else None
    groups = eval_by_group(problems, read_table(args.data), args.group_by, args.metric, resamples=args.resamples,
                           seed=args.seed, failures=failures)
    SIGNAL_BY_PHASE.write(signal, args.signal_out)
    EVAL_BY_GROUP.write(groups, args.groups_out)
    log.info("wrote %s (%d rows, %d phases) and %s (%d rows, %s in %d groups)", args.signal_out, len(signal),
             args.phases, args.groups_out, len(groups), args.group_by, groups["group"].nunique())


if __name__ == "__main__":
    main()
