"""``rl.trainer: trl`` in the workflow: an overlay puts the CPU backend's cells on TRL's GRPO code (the rule
``rl_cell`` runs ``ead.rl.trl.cell``), and a cell run so writes tables that the torch trainer's readers read, saying
``loss_mode: trl:dapo``; a grid with a cell TRL cannot train is refused before anything runs.

Run: ``.venv/bin/python -m pytest tests/end_to_end/test_trl_trainer.py`` (slow: Snakemake on a copy of the smoke run).
"""

from __future__ import annotations

import pandas as pd
import pytest

from ead.tables import EVAL_PROBLEMS, RUN_COLUMNS, STEPS
from tests.conftest import WORKFLOW_ROOT
from tests.end_to_end.test_workflow import planned_jobs, snakemake

pytestmark = pytest.mark.slow
TARGET = "results/rl/tiny1m_sharp/dapo/ead_tis/n8/seed0"  # a target is relative to the profile's root (runs/smoke)
CELL = f"runs/smoke/{TARGET}"


def trl_args(workdir, run: str = "[primary]"):
    overlay = workdir / "trl_trainer.yaml"
    overlay.write_text(f"rl:\n  trainer: trl\n  run: {run}\n")
    return ["--configfile", "configs/smoke.yaml", str(overlay), "--config",
            f"cache_dir={WORKFLOW_ROOT / '.cache' / 'wheels'}"]


def test_an_overlay_runs_the_grids_cells_through_trl_with_tables_the_readers_read(smoke_run_copy):
    workdir = smoke_run_copy
    torch_steps = STEPS.read(workdir / CELL / "steps.csv")
    torch_problems = EVAL_PROBLEMS.read(workdir / CELL / "eval_problems.csv")
    planned = snakemake(workdir, "--dry-run", "--printshellcmds", *trl_args(workdir))
    shown = planned.stdout + planned.stderr
    assert shown.count("python -m ead.rl.trl.cell") == 2 and "python -m ead.rl.train " not in shown  # tau 1.0, EAD+TIS
    assert planned_jobs(workdir, *trl_args(workdir))["rl_cell"] == 2
    snakemake(workdir, f"{TARGET}/eval.csv", *trl_args(workdir))
    steps = STEPS.read(workdir / CELL / "steps.csv")
    problems = EVAL_PROBLEMS.read(workdir / CELL / "eval_problems.csv")
    assert set(steps["loss_mode"]) == {"trl:dapo"} and set(problems["loss_mode"]) == {"trl:dapo"}
    assert list(steps.columns) == list(torch_steps.columns) and len(steps) == len(torch_steps)
    assert len(problems) == len(torch_problems)
    # step 0 is the policy's shared base evaluation; step 1 sampled from the same weights, prompts and draws
    differ = ["loss_mode", *RUN_COLUMNS]  # the trainer, and the run's config files (the overlay is one more)
    pd.testing.assert_frame_equal(problems[problems["step"] == 0].drop(columns=differ),
                                  torch_problems[torch_problems["step"] == 0].drop(columns=differ))
    assert steps.loc[0, "entropy"] == torch_steps.loc[0, "entropy"]
    eval_table = pd.read_csv(workdir / CELL / "eval.csv")
    assert set(eval_table["loss_mode"]) == {"trl:dapo"}


def test_a_grid_with_a_cell_trl_cannot_train_is_refused_before_anything_runs(smoke_run_copy):
    result = snakemake(smoke_run_copy, "--dry-run", *trl_args(smoke_run_copy, run="[algorithms]"), check=False)
    assert result.returncode != 0
    assert ("rl.trainer = 'trl' cannot train these cells: rl.algorithms.clip_cov.loss_mode='clip_cov'"
            in result.stdout + result.stderr)
