"""An RL cell trained with TRL's GRPO code (ead.rl.trl.cell): the torch trainer's tables (schemas, completeness,
columns; ``loss_mode`` says ``trl:dapo``) from the same prompts and rollouts, each update TRL's loss on TRL's
advantages, the algorithm mapped onto GRPOConfig, what TRL cannot express refused by name, and a killed run resumed
to identical tables.

Run: ``.venv/bin/python -m pytest tests/rl/trl/test_cell.py``.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import torch

pytest.importorskip("trl")

import ead.rl.train as torch_cell  # noqa: E402
import ead.rl.trl.cell as trl_cell  # noqa: E402
from ead.rl.trl.cell import TRLTrainer, grpo_config  # noqa: E402
from ead.settings.rl import Cell, cell_settings  # noqa: E402
from ead.tables import EVAL_FAILURES, EVAL_PROBLEMS, STEPS  # noqa: E402
from tests.conftest import CONFIG  # noqa: E402
from tests.rl.test_train import annealed, rl_inputs, train_command  # noqa: E402, F401 (rl_inputs: a fixture)

CLOCK = ["rollout_s", "grade_s", "update_s", "wall_time_s"]


def settings_for(algorithm="dapo", sampler="ead_tis", **algorithm_params):
    """A 4-step cell of 2 prompts x 4 rollouts, 2 mini-batches, evaluated at steps 0, 3 and 4."""
    config = json.loads(json.dumps(CONFIG))
    config["rl"].update(steps=4, prompts_per_step=2, max_new_tokens=24, checkpoint_every=2)
    config["rl"]["eval"].update(limit=4, n=4, every=3, batch_size=16)
    config["rl"]["algorithms"][algorithm].update(algorithm_params)
    return cell_settings(config, Cell("tiny", algorithm, sampler, 4, 0))


def odd_length_grades(texts, references, task):
    """A reward that varies within every group (the tiny untrained policy solves nothing): 1 for odd lengths."""
    from ead.rewards import Grade

    return [Grade(float(len(text) % 2), "ok" if len(text) % 2 else "wrong") for text in texts]


def train_both(rl_inputs, tmp_path, monkeypatch, settings):  # noqa: F811
    monkeypatch.setattr(torch_cell, "grade_many", odd_length_grades)  # both trainers grade through Trainer.grade
    outputs = {}
    for name, trainer_class in (("torch", torch_cell.Trainer), ("trl", TRLTrainer)):
        out = tmp_path / name
        torch_cell.train(settings, str(rl_inputs / "policy"), str(rl_inputs / "countdown.parquet"),
                         str(rl_inputs / "base.csv"), str(rl_inputs / "base_failures.csv"), str(out),
                         str(tmp_path / f"ckpt_{name}"), trainer_class=trainer_class)
        outputs[name] = out
    return outputs


def test_a_trl_cell_writes_the_torch_cells_tables_from_the_same_prompts_and_rollouts(rl_inputs, tmp_path,  # noqa: F811
                                                                                    monkeypatch):
    settings = settings_for()
    calls = []
    compute_loss = trl_cell.EADGRPOTrainer._compute_loss

    def counted(self, model, inputs):
        calls.append(len(inputs["completion_ids"]))
        return compute_loss(self, model, inputs)

    monkeypatch.setattr(trl_cell.EADGRPOTrainer, "_compute_loss", counted)
    outputs = train_both(rl_inputs, tmp_path, monkeypatch, settings)
    assert calls == [4] * 8  # TRL's loss on each of the 2 mini-batches of 8 rollouts, at each of the 4 steps
    tables = {name: {table.name: table.read(out / f"{table.name}.csv")
                     for table in (STEPS, EVAL_PROBLEMS, EVAL_FAILURES)} for name, out in outputs.items()}
    for name in ("steps", "eval_problems", "eval_failures"):
        torch_table, trl_table = tables["torch"][name], tables["trl"][name]
        assert list(trl_table.columns) == list(torch_table.columns), name
        assert len(trl_table) == len(torch_table), name
    for name in ("steps", "eval_problems", "eval_failures"):  # every table says which code trained the cell
        assert set(tables["trl"][name]["loss_mode"]) == {"trl:dapo"}, name
        assert set(tables["torch"][name]["loss_mode"]) == {"vanilla"}, name
    steps = {name: tables[name]["steps"].set_index("step") for name in tables}
    # step 1 is sampled from the same weights with the same prompts and random numbers: the same rollouts
    for metric in ("reward_mean", "entropy", "response_length", "first_token_entropy", "informative_group_fraction"):
        assert steps["trl"].loc[1, metric] == steps["torch"].loc[1, metric], metric
    # pi_old from TRL's own forward (2 mini-batches), the torch trainer's from its sampler: equal to float rounding
    assert steps["trl"].loc[1, "behaviour_target_log_ratio"] == pytest.approx(
        steps["torch"].loc[1, "behaviour_target_log_ratio"], abs=1e-5)
    assert (steps["trl"]["grad_norm"] > 0).all() and steps["trl"]["pg_clipfrac"].between(0, 1).all()
    assert steps["trl"]["ppo_kl"].isna().all()  # TRL does not report it: empty in the whole file, as the schema allows
    evaluation = {name: tables[name]["eval_problems"].drop(columns="loss_mode") for name in tables}
    step_0 = [table[table["step"] == 0].reset_index(drop=True) for table in evaluation.values()]
    pd.testing.assert_frame_equal(*step_0)
    # the updates are TRL's, not the torch trainer's: the later rollouts differ
    assert not steps["trl"].loc[2:, "entropy"].equals(steps["torch"].loc[2:, "entropy"])


def test_the_algorithm_maps_onto_trls_grpo_config(rl_inputs, tmp_path):  # noqa: F811
    dapo = grpo_config(settings_for("dapo"), mini_batch_size=4, temperature=1.0, output_dir=str(tmp_path))
    assert (dapo.loss_type, dapo.epsilon, dapo.epsilon_high, dapo.beta) == ("dapo", 0.2, 0.28, 0.0)
    assert (dapo.num_generations, dapo.steps_per_generation, dapo.gradient_accumulation_steps) == (4, 2, 1)
    assert dapo.scale_rewards == "group" and dapo.max_completion_length == 24
    grpo = grpo_config(settings_for("grpo"), mini_batch_size=4, temperature=1.2, output_dir=str(tmp_path))
    assert (grpo.epsilon, grpo.epsilon_high, grpo.beta, grpo.temperature) == (0.2, 0.2, 0.001, 1.2)
    trainer = TRLTrainer(settings_for("grpo", "tau1.2"), str(rl_inputs / "policy"),
                         str(rl_inputs / "countdown.parquet"), logging.getLogger("test"))
    assert trainer.grpo.ref_model is trainer.reference and trainer.grpo.temperature == 1.2  # trains at its tau
    for reference, policy in zip(trainer.reference.parameters(), trainer.model.parameters()):
        assert torch.equal(reference, policy)  # the KL anchors to the policy before RL


@pytest.mark.parametrize("change, named", [
    (lambda s: settings_for("clip_cov"), "rl.algorithms.clip_cov.loss_mode='clip_cov'"),
    (lambda s: settings_for("kl_cov"), "rl.algorithms.kl_cov.loss_mode='kl_cov'"),
    (lambda s: settings_for("dapo", forking_token_fraction=0.2), "rl.algorithms.dapo.forking_token_fraction=0.2"),
    (lambda s: settings_for("dapo", loss_agg_mode="seq-mean-token-mean"),
     "rl.algorithms.dapo.loss_agg_mode='seq-mean-token-mean'"),
    (lambda s: annealed(settings_for("dapo", sampler="ead"), tis="none"), "trains_at: annealed"),
    (lambda s: dataclasses.replace(s, training=dataclasses.replace(s.training, tis="sequence")), "tis: sequence"),
])
def test_what_trl_cannot_express_is_refused_by_name(tmp_path, change, named):
    settings = change(settings_for())
    with pytest.raises(ValueError, match="cannot run on TRL: .*" + named.replace("(", r"\(").replace(".", r"\.")):
        grpo_config(settings, mini_batch_size=4, temperature=1.0, output_dir=str(tmp_path))


@pytest.mark.slow
def test_a_killed_trl_cell_resumes_to_identical_tables(rl_inputs, tmp_path, killed_after_first_checkpoint):  # noqa: F811
    settings = settings_for()

    def command(out, checkpoint):
        torch_command = train_command(rl_inputs, out, checkpoint, settings)
        return [sys.executable, "-m", "ead.rl.trl.cell", *torch_command[3:]]

    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    subprocess.run(command(straight, tmp_path / "ckpt_a"), check=True, capture_output=True)
    killed_after_first_checkpoint(command(resumed, tmp_path / "ckpt_b"), tmp_path / "ckpt_b" / "trainer_state.pt")
    assert not (resumed / "steps.csv").exists()
    rerun = subprocess.run(command(resumed, tmp_path / "ckpt_b"), capture_output=True, text=True, check=True)
    assert "resuming from" in rerun.stderr
    for name in ("steps", "eval", "eval_problems", "eval_failures"):
        a, b = pd.read_csv(straight / f"{name}.csv"), pd.read_csv(resumed / f"{name}.csv")
        pd.testing.assert_frame_equal(a.drop(columns=CLOCK, errors="ignore"), b.drop(columns=CLOCK, errors="ignore"))
    assert np.isfinite(pd.read_csv(straight / "steps.csv")[["reward_mean", "grad_norm"]].to_numpy()).all()


def test_a_torch_trainers_checkpoint_is_not_resumed_by_the_trl_trainer(rl_inputs):  # noqa: F811
    """The trainer is part of a checkpoint's fingerprint: switching it starts the cell over."""
    inputs = [str(rl_inputs / "policy"), str(rl_inputs / "countdown.parquet")]
    prints = {trainer: torch_cell.cell_fingerprint(settings_for(), trainer, inputs)
              for trainer in (torch_cell.Trainer, TRLTrainer)}
    assert prints[torch_cell.Trainer] == torch_cell.job_fingerprint(settings_for().to_document(), inputs)  # as before
    assert prints[TRLTrainer] != prints[torch_cell.Trainer]
