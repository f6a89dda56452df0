"""An RL grid cell trained with TRL's GRPO code: ``ead.rl.train``'s cell with each step's advantages and policy loss
from TRL's ``GRPOTrainer`` (through :class:`ead.rl.trl.grpo.EADGRPOTrainer`) instead of verl's ``core_algos``.

Everything around the update is ``ead.rl.train``'s, so the two trainers differ only in the update: the same prompts
per step (seeded by (seed, step)), the same sampler (``ead.samplers.hf.sample`` at the same step, its random numbers
seeded per step), the same grader, evaluations, checkpoints (a killed run resumes to identical tables) and tables
(steps.csv, eval_problems.csv, eval_failures.csv). Per step: TRL's ``_generate_and_score_completions`` samples the
``prompts_per_step`` x n rollouts under the cell's sampler, grades them with the cell's grader (as TRL's reward
function), computes TRL's group advantages (``scale_rewards="group"``: (r - mean) / std, as verl's GRPO) and, with
``mini_batches`` > 1, pi_old by TRL's own forward; the batch is shuffled and cut into ``mini_batches`` (TRL's
``shuffle_sequence_dict`` / ``split_tensor_dict``) and each is one update with TRL's ``_compute_loss`` and the cell's
AdamW, gradient clipping as ``ead.rl.train``.

The cell's algorithm maps onto GRPOConfig (:func:`grpo_config`): ``loss_mode: vanilla`` with ``loss_agg_mode:
token-mean`` is TRL's ``dapo`` loss (token-level mean over the mini-batch); ``clip_ratio_low`` / ``clip_ratio_high``
are ``epsilon`` / ``epsilon_high``; a KL loss (``use_kl_loss``, ``kl_loss_type: low_var_kl``) is ``beta =
kl_loss_coef`` against the policy before RL (TRL's k3 estimator, unclamped: verl's low_var_kl clamps it to [-10,
10]). What TRL cannot express is refused by name: clip_cov and kl_cov (EntropyMech), another aggregation or KL type,
forking-token training, ``trains_at: annealed``, sequence-level TIS. A fixed-temperature sampler trains at its tau
(``fixed_tau_trains_at: behaviour``, TRL's ``temperature``) or at 1.

Run (the arguments of ``ead.rl.train``):
    python -m ead.rl.trl.cell --policy-dir results/models/tiny1m --data results/data/countdown.parquet \\
        --base-eval results/rl/base/tiny1m/eval_problems.csv --base-failures results/rl/base/tiny1m/eval_failures.csv \\
        --settings "$(cat cell.json)" --threads 1 \\
        --out-dir results/rl/tiny1m/dapo/ead/n8/seed0 --checkpoint-dir results/checkpoints/rl/tiny1m/dapo/ead/n8/seed0
"""

from __future__ import annotations

import tempfile
import time

import numpy as np
import torch
from datasets import Dataset
from trl import GRPOConfig
from trl.trainer.utils import add_fused_lm_head, shuffle_sequence_dict, split_tensor_dict

from ead.rewards import report_grades, status_counts
from ead.rl.losses import tis_weights
from ead.rl.train import Trainer, main, step_generator
from ead.rl.trl.grpo import EADGRPOTrainer
from ead.settings.cell import CellSettings
from ead.settings.trl import trl_problems


def grpo_config(settings: CellSettings, mini_batch_size: int, temperature: float, output_dir: str) -> GRPOConfig:
    """The cell's GRPOConfig; ValueError naming each algorithm setting or training option TRL cannot express."""
    training = settings.training
    algorithm = training.algorithm_params.stated()
    kl = bool(algorithm.get("use_kl_loss", False))
    problems = trl_problems(f"rl.algorithms.{settings.algorithm}", algorithm,
                            {"tis": training.tis, "trains_at": training.trains_at})
    if problems:
        raise ValueError(f"cell {settings.cell_columns()} cannot run on TRL: " + "; ".join(problems))
    return GRPOConfig(
        output_dir=output_dir, report_to=[], use_cpu=True, bf16=False, save_strategy="no", disable_tqdm=True,
        seed=settings.seed, per_device_train_batch_size=mini_batch_size, gradient_accumulation_steps=1,
        steps_per_generation=settings.budget.mini_batches, num_generations=settings.n,
        max_completion_length=settings.budget.max_new_tokens, temperature=temperature, loss_type="dapo",
        epsilon=float(algorithm.get("clip_ratio_low", 0.2)), epsilon_high=float(algorithm.get("clip_ratio_high", 0.2)),
        beta=float(algorithm.get("kl_loss_coef", 0.0)) if kl else 0.0, scale_rewards="group",
        mask_truncated_completions=False, learning_rate=training.lr)


class TRLTrainer(Trainer):
    """:class:`ead.rl.train.Trainer` (policy, data, optimizer, evaluation) whose :meth:`train_step` is TRL's."""

    def __init__(self, settings: CellSettings, policy_dir: str, data: str, log, resume_from=None):
        super().__init__(settings, policy_dir, data, log, resume_from)
        self._scratch = tempfile.TemporaryDirectory(prefix="ead-trl-")  # TRL's output_dir; it writes nothing there
        config = grpo_config(settings, self.mini_batch_size, self.train_tau, self._scratch.name)
        cap = settings.training.tis_cap if settings.training.tis == "token" else None
        # TRL requires a train_dataset; its own loop, which would read it, never runs (the prompts are drawn here)
        prompts = Dataset.from_dict({"prompt": list(self.prompt_source["question"]),
                                     "answer": list(self.prompt_source["answer"])})
        self.grpo = EADGRPOTrainer(model=self.model, reward_funcs=[self.reward], args=config, train_dataset=prompts,
                                   processing_class=self.tokenizer, schedule=self.schedule, tis_cap=cap)
        self.grpo.current_gradient_accumulation_steps = 1  # set by Trainer.train's loop, which this one replaces
        if config.beta:  # the KL reference is the policy before RL, as the other trainer's (TRL's would be the
            add_fused_lm_head(self.reference, temperature=self.grpo.temperature)  # model's path at construction)
            self.grpo.ref_model = self.reference

    @property
    def loss_mode(self) -> str:
        """The tables' ``loss_mode``: ``trl:`` and TRL's loss type (``trl:dapo``), so every table and curve of a cell
        trained by TRL says so."""
        return f"trl:{self.grpo.loss_type}"

    def reward(self, completions, answer, **kwargs) -> list[float]:
        """TRL's reward function: the cell's grader on each completion against its problem's answer."""
        self.rewards = self.grade(list(completions), list(answer))
        return self.rewards.tolist()

    def train_step(self, step: int) -> dict:
        s = self.settings
        started = time.perf_counter()
        problems = self.step_problems(step)
        inputs = [{"prompt": question, "answer": answer}
                  for question, answer in zip(problems["question"], problems["answer"]) for _ in range(s.n)]
        # the rollouts' and the shuffle's random numbers, per (seed, step): a resumed run draws the same
        torch.manual_seed(int(step_generator(s.seed, step, 1).initial_seed()))
        # the schedule's step is s, as ead.rl.train samples it (EADGRPOTrainer.rollout_step: mini_batches optimizer
        # steps per rollout); TRL's mode follows the model's (train: its train batch sizes and metrics)
        self.grpo.state.global_step = step * s.budget.mini_batches
        self.model.train()
        output = self.grpo._generate_and_score_completions(inputs)
        report_grades(status_counts(self.rollout_grades.elements()), f"rollouts of steps 1-{step}", self.log)
        batch = self.grpo.last_rollouts
        sampled = time.perf_counter()

        metrics = []
        self.grpo._metrics["train"].clear()
        torch.manual_seed(int(step_generator(s.seed, step, 2).initial_seed()))
        for index, mini_batch in enumerate(split_tensor_dict(shuffle_sequence_dict(output), s.budget.mini_batches)):
            grad_norm = self.update(self.grpo._compute_loss(self.model, mini_batch), step)
            logged = self.grpo._metrics["train"]
            metrics.append({"actor/pg_clipfrac": logged["clip_ratio/region_mean"][index], "grad_norm": grad_norm,
                            **({"actor/kl_loss": logged["kl"][index]} if "kl" in logged else {})})
        self.model.eval()
        updated = time.perf_counter()

        mask = batch.response_mask
        width = mask.shape[1]
        # pi_old as TRL's loss used it (its forward, with mini-batches), else the sampler's at the trainer's tau
        old = output.get("old_per_token_logps")
        old = (old[:, :width].cpu() if old is not None
               else batch.behaviour_logprobs if self.old_is_behaviour else batch.target_logprobs)
        old = torch.where(mask, old, torch.zeros_like(old))
        tis = tis_weights(old, batch.behaviour_logprobs, mask, level=s.training.tis, cap=s.training.tis_cap)
        group_index = np.repeat(np.arange(len(problems)), s.n)
        timings = {"rollout_s": sampled - started - self.grade_seconds, "grade_s": self.grade_seconds,
                   "update_s": updated - sampled, "wall_time_s": updated - started}
        return self.step_row(step, batch, self.rewards, group_index, old, tis, mask, metrics, timings,
                             self.train_tau)


if __name__ == "__main__":
    main(trainer_class=TRLTrainer, module="ead.rl.trl.cell", description=__doc__.splitlines()[0])
