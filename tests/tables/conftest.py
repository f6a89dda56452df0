"""What the tests of the results contract share: a small grid of two cells written by the contract's own writers,
the jobs that read it (aggregate, claims, paired curves, cell eval), and rows of the RL tables."""

from pathlib import Path

import pandas as pd
import pytest

from ead import tables
from ead.tables import (
    EVAL_PROBLEMS,
    STEPS,
)

ROOT = Path(__file__).resolve().parents[2]


EXTENT = ["--expect-steps", "5", "--eval-every", "2", "--own-sampler"]

SAMPLERS = ("ead", "tau1.0")

CELL = {"policy": "tiny1m", "algorithm": "dapo", "sampler": "ead", "n": 8, "seed": 0, "lr": 5e-5, "tis": "none",
        "tis_cap": 2.0, "loss_mode": "vanilla", "schedule_params": '{"name": "ead"}',
        "fixed_tau_trains_at": "behaviour", "eval_tau": 1.0, "prompts_per_step": 16, "mini_batches": 2}

def problems_table():
    return pd.DataFrame({"step": [0, 0], "evaluated_with": "eval_tau", "problem_id": ["a", "b"], "num_samples": [4, 4],
                         "num_correct": [1.0, 0.0],
                         "greedy_correct": [1.0, 0.0]}).assign(**CELL)

def steps_table(steps, **cell):
    row = {metric: 0.5 for metric in tables.TRAIN_METRICS}
    return pd.DataFrame([{"step": step, **row} for step in steps]).assign(**{**CELL, **cell})

def eval_problems_table(evaluations, problems=("a", "b", "c"), **cell):
    """Rows for each (evaluated_with, step) in ``evaluations``, every problem (or the ones a mapping gives)."""
    rows = []
    for evaluated_with, step in evaluations:
        wanted = problems.get((evaluated_with, step), problems["all"]) if isinstance(problems, dict) else problems
        rows += [{"step": step, "evaluated_with": evaluated_with, "problem_id": p, "num_samples": 4, "num_correct": 1,
                  "greedy_correct": 1.0} for p in wanted]
    return pd.DataFrame(rows).assign(**{**CELL, **cell})

EVALUATIONS = [("eval_tau", 0), ("eval_tau", 2), ("eval_tau", 4), ("eval_tau", 5), ("own_sampler", 5)]

@pytest.fixture
def grid(tmp_path):
    """Two one-seed cells (ead and tau1.0) with steps 1..5 and every evaluation: paths by sampler."""
    paths = {}
    for sampler in SAMPLERS:
        cell = tmp_path / sampler / "seed0"
        steps = steps_table(range(1, 6), sampler=sampler).assign(entropy=[0.9, 0.8, 0.7, 0.6, 0.5])
        STEPS.write(steps, cell / "steps.csv")
        EVAL_PROBLEMS.write(eval_problems_table(EVALUATIONS, sampler=sampler), cell / "eval_problems.csv")
        paths[sampler] = (cell / "steps.csv", cell / "eval_problems.csv")
    return paths

def files(grid):
    return ["--steps", *(str(grid[s][0]) for s in SAMPLERS), "--eval-problems", *(str(grid[s][1]) for s in SAMPLERS)]

def run_aggregate(grid, tmp_path):
    from ead.rl import aggregate

    aggregate.main([*files(grid), "--k", "1", "2", "--seed", "0", "--train-curves", str(tmp_path / "train.csv"),
                    "--eval-curves", str(tmp_path / "eval.csv"), *EXTENT])

def run_claims(grid, tmp_path):
    import json

    from ead.claims import rl as rl_claims

    claim = {"id": "C7", "figure": "6", "statement": "s", "policy": CELL["policy"], "algorithm": CELL["algorithm"],
             "n": CELL["n"], "sampler": "ead", "baseline": "tau1.0", "metric": "entropy"}
    rl_claims.main([*files(grid), "--claims", json.dumps([claim]), "--window", "2", "--resamples", "10", "--seed", "0",
                  "--analysis-claims", "--out", str(tmp_path / "claims.csv"), *EXTENT])

def run_paired(grid, tmp_path):
    from ead.rl import paired

    paired.main(["--eval-problems", *(str(grid[s][1]) for s in SAMPLERS), "--baselines", "tau1.0", "--k", "1",
                 "--resamples", "10", "--seed", "0", "--out", str(tmp_path / "paired.csv")])

def run_cell_eval(grid, tmp_path):
    from ead.rl import cell_eval

    cell_eval.main(["--eval-problems", str(grid["ead"][1]), "--k", "1", "--seed", "0", "--out",
                    str(tmp_path / "eval_summary.csv")])

def edit(path, change):
    """Edit a written CSV by hand (bypassing the contract), as a damaged copy would be."""
    table = pd.read_csv(path)
    change(table).to_csv(path, index=False)

def append_copy_of(row_filter, **changes):
    def change(table):
        row = table[row_filter(table)].iloc[[0]].assign(**changes)
        return pd.concat([table, row], ignore_index=True)
    return change

def at_step_2_problem_b(table):
    return (table["step"] == 2) & (table["problem_id"] == "b")
