"""Reading the RL grid's per-cell tables for the jobs that combine cells (``ead.rl.aggregate``, ``ead.claims.rl``),
refusing incomplete cells (``ead.tables``, :class:`~ead.tables.Coverage`).

A cell's ``steps.csv`` must hold every step 1..``rl.steps`` and its ``eval_problems.csv`` every evaluation step and, in
every evaluation, every problem of the evaluation set. The workflow passes the extent from the config
(``--expect-steps``, ``--eval-every``, ``--own-sampler``); without it each cell is checked against the others (every
cell holds the steps some cell holds). A cut table fails with its file and what it lacks instead of quietly
shortening a curve.
"""

from __future__ import annotations

import argparse

import pandas as pd

from ead.tables import EVAL_PROBLEMS, STEPS, expected_eval_steps, expected_steps

__all__ = ["add_completeness_arguments", "read_cells", "read_eval_problems"]


def add_completeness_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--expect-steps", type=int, default=None, metavar="N",
                        help="rl.steps: every cell must hold steps 1..N and its evaluations at --eval-every")
    parser.add_argument("--eval-every", type=int, default=None, metavar="E", help="rl.eval.every")
    parser.add_argument("--own-sampler", action=argparse.BooleanOptionalAction, default=None,
                        help="rl.eval.own_sampler: cells also hold an own-sampler evaluation at the last step "
                             "(with --expect-steps; default: not expected)")


def _extent(args: argparse.Namespace | None) -> tuple[int | None, int | None]:
    steps_total = getattr(args, "expect_steps", None)
    every = getattr(args, "eval_every", None)
    if steps_total is not None and every is None:
        raise ValueError("--expect-steps needs --eval-every (rl.eval.every)")
    return steps_total, every


def read_eval_problems(problem_paths: list[str], args: argparse.Namespace | None = None) -> pd.DataFrame:
    """eval_problems of every cell, each file validated and checked complete (every evaluation step and problem)."""
    steps_total, every = _extent(args)
    return EVAL_PROBLEMS.read_all(problem_paths, {
        "step": (expected_eval_steps(steps_total, every, bool(getattr(args, "own_sampler", False)))
                 if steps_total is not None else None),
        "problem_id": None,  # the evaluation set: every problem an evaluation of the policy holds
    })


def read_cells(steps_paths: list[str], problem_paths: list[str], args: argparse.Namespace | None = None
               ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(steps, eval_problems) of every cell, each file validated and checked complete."""
    steps_total, _ = _extent(args)
    step_expectation = {"step": expected_steps(steps_total) if steps_total is not None else None}
    return STEPS.read_all(steps_paths, step_expectation), read_eval_problems(problem_paths, args)
