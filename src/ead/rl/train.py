"""CPU RL backend: train one grid cell (policy x algorithm x sampler x n x seed) on the grid's task (``rl.task``).

Each step s = 1..steps: draw `prompts_per_step` training problems (seeded by (seed, s)) from the train split, or
from a fixed pool of `budget.train_pool.size` of them drawn once by `train_pool.seed` (the same pool for every cell
seed, so prompts recur across steps: :func:`training_pool`), sample n rollouts per
prompt with the cell's sampler (fixed tau, or EAD with the global step s feeding d_s), grade them with the shared
grader, compute GRPO advantages and the algorithm's policy loss with verl's `core_algos`, weight it with TIS when
the sampler asks for it, and update in `mini_batches` sequential mini-batches (as verl's actor: the PPO ratio
departs from 1 after the first one). Old log-probs are recomputed by a trainer forward pass at the training
temperature: tau = 1 for EAD; for fixed-tau samplers `training.trains_at` (the sampler's `trains_at`, else
rl.fixed_tau_trains_at) chooses verl's behaviour (trainer logits / tau, on-policy) or tau = 1 (off-policy, like EAD).
`trains_at: annealed` (any position-and-step schedule, e.g. an EAD sampler's) is the other treatment of EAD's
off-policy gap, the authors' unused `old_policy_temperature_correction`: pi_old and pi_theta are both evaluated at
each token's sampling temperature tau_t (logits / tau_t), so the rollouts are on-policy and there is no importance
weight (TIS must be off).

Every `eval.every` steps and at the last step the policy is evaluated on a fixed held-out split: Pass@k /
Worst@k from `eval.n` sampled completions at the declared `eval.tau` (unbiased estimators), and greedy accuracy;
with `eval.own_sampler`, the last step is also evaluated with the cell's own sampler (the same random numbers);
with a training pool, every evaluated step (step 0 included, by this job) is also evaluated on the pool at the
declared `eval.tau` (rows `evaluated_with = train_pool`: how far the policy learned the prompts it trains on).
Step 0 (the policy before RL) comes from the policy's base evaluation table (`--base-eval`), which every cell of
that policy shares. Checkpoints every `checkpoint_every` steps; a killed run resumes to identical tables.

Outputs (in --out-dir): steps.csv (one row per step), eval_problems.csv (per step, evaluation (eval_tau,
own_sampler, train_pool) and problem: samples, correct, greedy), eval_failures.csv (the same samples counted by first
mistake, ``ead.evaluation.failure_counts``; step 0's from `--base-failures`) and, with `--k`, eval.csv (one row per
step, evaluation and metric, with a bootstrap CI over problems), all carrying the cell. The workflow passes no `--k` and
makes eval.csv with ead.rl.cell_eval.

Run:
    python -m ead.rl.train --policy-dir results/models/tiny1m --data results/data/countdown.parquet \
        --base-eval results/rl/base/tiny1m/eval_problems.csv --base-failures results/rl/base/tiny1m/eval_failures.csv \
        --settings "$(cat cell.json)" --threads 1 \
        --out-dir results/rl/tiny1m/dapo/ead/n8/seed0 --checkpoint-dir results/checkpoints/rl/tiny1m/dapo/ead/n8/seed0
where cell.json is `ead.settings.rl.cell_settings(config, cell).to_json()` (the document of ead.settings.cell: every
setting the job reads; a missing, unknown or mistyped key fails here, naming it).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from tqdm import tqdm

from ead.analyses.measured_schedule import read_measured_schedule
from ead.checkpoints import discard, job_fingerprint, resumable, stamp
from ead.data.tasks import get_task
from ead.evaluation import evaluate, first_problems_of_split
from ead.io import atomic_directory, read_table, setup_logging
from ead.metrics import mean_group_ess_fraction, pass_worst_summary
from ead.models import load_hf_model, save_hf_model
from ead.models.tiny_policy import encode_strict
from ead.numerics import pin_job
from ead.rewards import configure_grader, grade_many, report_grades, status_counts
from ead.rl.cell_eval import cell_summary
from ead.rl.losses import actor_config, forking_token_mask, grpo_advantages, policy_loss, tis_weights
from ead.samplers.hf import left_pad, response_logits, sample
from ead.schedule import FixedTemperature, build_schedule
from ead.settings.base import ConfigError
from ead.settings.cell import CellSettings, TrainPool
from ead.tables import (
    BASE_FAILURES,
    BASE_PROBLEMS,
    COUNT_COLUMNS,
    EVAL,
    EVAL_FAILURES,
    EVAL_PROBLEMS,
    FAILURE_COLUMNS,
    PROBLEM_COLUMNS,
    STEPS,
    TIMEOUT_PROBLEM_COLUMN,
    TIMEOUT_STEP_COLUMN,
    evaluated_steps,
)

TRAINS_AT = ("behaviour", "one", "annealed")


def training_temperature(schedule, trains_at: str) -> float:
    """Temperature of the trainer's log-probs: logits / tau for fixed tau under verl's behaviour, else 1 (``annealed``
    has one temperature per token instead: :func:`annealed_training_temperatures`)."""
    if trains_at not in TRAINS_AT:
        raise ValueError(f"trains_at must be one of {TRAINS_AT}, got {trains_at!r}")
    if isinstance(schedule, FixedTemperature) and trains_at in ("behaviour", "annealed"):
        return float(schedule.tau)
    return 1.0


def annealed_training_temperatures(schedule, step: int, shape: tuple[int, int]) -> torch.Tensor:
    """(batch, length) float64 tau_t of every response token at RL step ``step``: the sampler's own temperatures
    (``Schedule.temperatures`` a position at a time, as :func:`ead.samplers.hf.sample` evaluates them, so the values
    are bit-identical to the sampling ones)."""
    if schedule.reads_logits:
        raise ValueError(f"trains_at annealed: schedule {schedule.name!r} sets each token's temperature from the "
                         "logits at sampling, which the trainer does not keep; annealed training needs a schedule of "
                         "position and step")
    taus = torch.tensor([float(schedule.temperatures(t, step)) for t in range(shape[1])], dtype=torch.float64)
    return taus.expand(shape)


def response_log_probs(model, input_ids, attention_mask, response_ids, response_mask, temperature):
    """Log-probs (at logits / temperature) of the response tokens given the left-padded prompts. ``temperature`` is a
    float, or a (batch, length) tensor of per-token temperatures (divided in the logits' dtype, as the sampler does)."""
    logits = response_logits(model, input_ids, attention_mask, response_ids, response_mask)
    if isinstance(temperature, torch.Tensor):
        logits = logits / temperature.to(logits.dtype)[..., None]
    else:
        logits = logits / temperature
    return torch.log_softmax(logits, dim=-1).gather(-1, response_ids[..., None]).squeeze(-1)


def group_outcomes(rewards, group_index) -> tuple[float, float]:
    """(informative, solved): the shares of rollout groups (one prompt's n rollouts) with 0 < correct < n, the only
    groups GRPO's advantages learn from, and with at least one correct rollout."""
    rewards, group_index = np.asarray(rewards, dtype=np.float64), np.asarray(group_index)
    groups = np.unique(group_index)
    correct = np.array([(rewards[group_index == g] > 0).sum() for g in groups])
    sizes = np.array([(group_index == g).sum() for g in groups])
    return float(((correct > 0) & (correct < sizes)).mean()), float((correct > 0).mean())


#: The random stream of the training pool's draw (apart from every (seed, step, stream) of :func:`step_generator`).
POOL_STREAM = 0x706F6F6C


def training_pool(train_problems: pd.DataFrame, pool: TrainPool) -> pd.DataFrame:
    """The fixed pool of ``pool.size`` training problems (in train-split order), drawn without repeats by
    ``pool.seed`` alone: the same pool for every cell, cell seed and step."""
    if pool.size > len(train_problems):
        raise ValueError(f"rl.train_pool.size = {pool.size} exceeds the train split's {len(train_problems)} problems")
    rng = np.random.default_rng(np.random.SeedSequence([pool.seed, POOL_STREAM]))
    chosen = np.sort(rng.choice(len(train_problems), size=pool.size, replace=False))
    return train_problems.iloc[chosen].reset_index(drop=True)


def step_generator(seed: int, step: int, stream: int) -> torch.Generator:
    """Independent, reproducible random stream for (seed, step, purpose): resuming never shifts the draws."""
    return torch.Generator().manual_seed(int(np.random.SeedSequence([seed, step, stream]).generate_state(1)[0]))


class Trainer:
    def __init__(self, settings: CellSettings, policy_dir: str, data: str, log, resume_from: Path | None = None):
        """The cell's policy, data and optimizer: fresh from ``policy_dir``, or restored from a checkpoint."""
        self.settings, self.log = settings, log
        self.model, self.tokenizer = load_hf_model(resume_from / "model" if resume_from else policy_dir)
        table = read_table(data)
        self.train_problems = first_problems_of_split(table, "train", None, data).reset_index(drop=True)
        training, budget = settings.training, settings.budget
        # where every step's prompts come from: a fixed pool of training problems (also evaluated), or the whole split
        self.pool = None if budget.train_pool is None else training_pool(self.train_problems, budget.train_pool)
        self.prompt_source = self.train_problems if self.pool is None else self.pool
        if len(self.prompt_source) < budget.prompts_per_step:
            raise ValueError(f"prompts_per_step = {budget.prompts_per_step} exceeds the {len(self.prompt_source)} "
                             "problems the prompts are drawn from")
        self.eval_problems = first_problems_of_split(table, settings.eval.split, settings.eval.limit, data)
        self.schedule = build_schedule(settings.schedule)
        self.train_tau = training_temperature(self.schedule, training.trains_at)
        self.old_is_behaviour = isinstance(self.schedule, FixedTemperature) and self.train_tau != 1.0
        # the annealed treatment: pi_old and pi_theta at each token's sampling temperature (on-policy, no weight)
        self.trains_annealed = training.trains_at == "annealed"
        if self.trains_annealed:
            annealed_training_temperatures(self.schedule, 0, (1, 1))  # refuses a schedule that reads the logits
            if training.tis != "none":
                raise ValueError(f"trains_at annealed with tis = {training.tis!r}: the trainer's pi_old is then the "
                                 "sampling policy itself, so every importance weight is 1; set tis: none")
            self.old_is_behaviour = True
        rollouts = budget.prompts_per_step * settings.n
        if rollouts % budget.mini_batches:
            raise ValueError(f"prompts_per_step * n = {rollouts} is not divisible by mini_batches "
                             f"{budget.mini_batches}")
        self.mini_batch_size = rollouts // budget.mini_batches
        self.actor = actor_config(training.algorithm_params.stated(), settings.n, self.mini_batch_size)
        self.forking_fraction, self.forking_scope = training.algorithm_params.forking()
        self.reference = None
        if self.actor.use_kl_loss:  # the KL loss anchors to the policy before RL, as verl's ref worker
            self.reference, _ = load_hf_model(policy_dir)
        optimizer = training.optimizer
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=training.lr, betas=optimizer.betas,
                                           weight_decay=optimizer.weight_decay)
        self.resumed_step = 0
        if resume_from:
            state = torch.load(resume_from / "trainer_state.pt", weights_only=True)
            self.optimizer.load_state_dict(state["optimizer"])
            self.resumed_step = state["step"]
        self.pad_id = self.tokenizer.pad_token_id
        self.eos_id = self.tokenizer.eos_token_id
        self.declared_rows: dict[int, pd.DataFrame] = {}  # this run's declared-tau evaluations, by step
        self.rollout_grades: Counter = Counter()  # Grade.status of this run's rollouts (since a resume)
        self.step_timeouts = 0

    @property
    def loss_mode(self) -> str:
        """The tables' ``loss_mode``: verl's loss of the cell's algorithm (``vanilla``, ``clip_cov``, ``kl_cov``)."""
        return self.settings.training.algorithm_params.loss_mode

    # --- one RL step -------------------------------------------------------------------------------------------
    def step_problems(self, step: int) -> pd.DataFrame:
        """The ``prompts_per_step`` problems of RL step ``step``, drawn by (seed, step) alone."""
        chosen = torch.randperm(len(self.prompt_source), generator=step_generator(self.settings.seed, step, 0))
        return self.prompt_source.iloc[chosen[: self.settings.budget.prompts_per_step].numpy()]

    def grade(self, texts: list[str], references: list[str]) -> torch.Tensor:
        """The rollouts' rewards by the cell's grader, timed (``grade_seconds``), and their timeouts counted."""
        graded = time.perf_counter()
        grades = grade_many(texts, references, self.settings.task)
        rewards = torch.tensor([g.score for g in grades], dtype=torch.float32)
        self.grade_seconds = time.perf_counter() - graded
        # a timeout is a reward of 0 that says nothing about the answer: count it per step, and fail the cell once
        # the share over its rollouts so far passes grader.max_timeout_share
        self.step_timeouts = sum(g.status == "timeout" for g in grades)
        self.rollout_grades.update(g.status for g in grades)
        return rewards

    def update(self, loss: torch.Tensor, step: int) -> float:
        """One optimizer step on ``loss`` with the cell's gradient clipping; its gradient norm (a non-finite one stops
        the cell)."""
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.settings.training.optimizer.grad_clip)
        if not torch.isfinite(grad_norm):
            raise FloatingPointError(f"step {step}: non-finite gradient norm {float(grad_norm)}")
        self.optimizer.step()
        return float(grad_norm)

    def rollout(self, step: int):
        s = self.settings
        problems = self.step_problems(step)
        prompts = [encode_strict(self.tokenizer, q) for q in problems["question"]]
        rows = [p for p in prompts for _ in range(s.n)]
        group_index = np.repeat(np.arange(len(prompts)), s.n)
        input_ids, attention_mask = left_pad(rows, self.pad_id)
        batch = sample(self.model.eval(), input_ids, attention_mask, self.schedule,
                       max_new_tokens=s.budget.max_new_tokens, eos_token_ids=self.eos_id, pad_token_id=self.pad_id,
                       step=step, generator=step_generator(s.seed, step, 1))
        texts = [self.tokenizer.decode(ids[mask].tolist(), skip_special_tokens=True)
                 for ids, mask in zip(batch.token_ids, batch.response_mask)]
        rewards = self.grade(texts, np.repeat(problems["answer"].to_numpy(), s.n).tolist())
        report_grades(status_counts(self.rollout_grades.elements()), f"rollouts of steps 1-{step}", self.log)
        return input_ids, attention_mask, batch, rewards, group_index

    def train_step(self, step: int) -> dict:
        started = time.perf_counter()
        input_ids, attention_mask, batch, rewards, group_index = self.rollout(step)
        sampled = time.perf_counter()
        response_ids, mask = batch.token_ids, batch.response_mask
        # pi_old is the policy that sampled, at the training temperature. The sampler already computed it with
        # these weights (behaviour = logits / tau, target = tau 1), so no extra forward pass is needed; it matches
        # a fresh forward to ~1e-6 (tests/rl/test_train.py), where verl recomputes it because vLLM's numerics differ.
        old_log_prob = batch.behaviour_logprobs if self.old_is_behaviour else batch.target_logprobs
        # the temperature of pi_theta (and of the KL reference): one per token when training at the annealed tau_t
        train_tau = (annealed_training_temperatures(self.schedule, step, tuple(response_ids.shape))
                     if self.trains_annealed else self.train_tau)
        ref_log_prob = None
        if self.reference is not None:
            with torch.no_grad():
                ref_log_prob = response_log_probs(self.reference, input_ids, attention_mask, response_ids, mask,
                                                  train_tau)
        advantages = grpo_advantages(rewards, mask, group_index)
        tis = tis_weights(old_log_prob, batch.behaviour_logprobs, mask, level=self.settings.training.tis,
                          cap=self.settings.training.tis_cap)
        # forking-token training: the gradient flows through the highest-entropy tokens only (tau = 1 entropies of
        # the policy that sampled); fraction 1 keeps every response token
        loss_mask = forking_token_mask(batch.entropies, mask, self.forking_fraction, self.forking_scope)

        self.model.train()
        metrics = []
        for index, start in enumerate(range(0, len(response_ids), self.mini_batch_size)):
            rows = slice(start, start + self.mini_batch_size)
            log_prob = response_log_probs(self.model, input_ids[rows], attention_mask[rows], response_ids[rows],
                                          mask[rows], train_tau[rows] if self.trains_annealed else train_tau)
            # clip_cov draws random tokens with torch's global generator: seed it per mini-batch for resumability
            torch.manual_seed(int(step_generator(self.settings.seed, step, 2 + index).initial_seed()))
            loss, loss_metrics = policy_loss(
                self.actor, old_log_prob=old_log_prob[rows], log_prob=log_prob, advantages=advantages[rows],
                response_mask=loss_mask[rows], rollout_is_weights=None if tis.weights is None else tis.weights[rows],
                ref_log_prob=None if ref_log_prob is None else ref_log_prob[rows])
            metrics.append({**loss_metrics, "grad_norm": self.update(loss, step)})
        self.model.eval()
        updated = time.perf_counter()
        timings = {"rollout_s": sampled - started - self.grade_seconds, "grade_s": self.grade_seconds,
                   "update_s": updated - sampled, "wall_time_s": updated - started}
        return self.step_row(step, batch, rewards, group_index, old_log_prob, tis, loss_mask, metrics, timings,
                             train_tau)

    def step_row(self, step: int, batch, rewards: torch.Tensor, group_index: np.ndarray, old_log_prob: torch.Tensor,
                 tis, loss_mask: torch.Tensor, metrics: list[dict], timings: dict, train_tau) -> dict:
        """steps.csv's row of one step: the rollouts' statistics (``batch``, the sampler's), the update's (``metrics``,
        one dict per mini-batch, verl's ``actor/...`` names and ``grad_norm``; NaN for a name none has), TIS's and the
        step's ``timings``."""
        mask = batch.response_mask
        valid = mask.float()
        informative, solved = group_outcomes(rewards.numpy(), group_index)
        log_ratio = (old_log_prob - batch.behaviour_logprobs) * valid  # log pi_train - log pi_behaviour per token
        mean_of = lambda key: float(np.mean([m[key] for m in metrics])) if key in metrics[0] else float("nan")  # noqa: E731
        return {
            "step": step,
            "reward_mean": float(rewards.mean()),
            "entropy": float((batch.entropies * valid).sum() / valid.sum()),
            "response_length": float(valid.sum(-1).mean()),
            "pg_clipfrac": mean_of("actor/pg_clipfrac"),
            "ppo_kl": mean_of("actor/ppo_kl"),
            "pg_loss": mean_of("actor/pg_loss"),
            "kl_loss": mean_of("actor/kl_loss"),
            "grad_norm": mean_of("grad_norm"),
            "loss_token_fraction": float(loss_mask.sum() / mask.sum()),
            "informative_group_fraction": informative,
            "solved_group_fraction": solved,
            # the tau = 1 entropy of the first response token (the strategy task's fork: the strategy's name)
            "first_token_entropy": float(batch.entropies[:, 0][mask[:, 0]].mean()),
            "grad_norm_max": float(max(m["grad_norm"] for m in metrics)),
            "tis_weight_mean": tis.mean,
            "tis_weight_max": tis.max,
            "tis_capped_fraction": tis.capped_fraction,
            "tis_ess_fraction": tis.ess_fraction,
            "tis_capped_sequence_fraction": tis.capped_sequence_fraction,
            "sequence_ess_fraction": mean_group_ess_fraction(log_ratio.sum(-1).numpy(), group_index),
            "behaviour_target_log_ratio": float(log_ratio.sum() / valid.sum()),
            "rollout_s": timings["rollout_s"],
            "grade_s": timings["grade_s"],
            TIMEOUT_STEP_COLUMN: float(self.step_timeouts),
            "update_s": timings["update_s"],
            "wall_time_s": timings["wall_time_s"],
            "lr": self.settings.training.lr,
            # annealed training: the mean tau_t over the step's response tokens
            "train_temperature": (float((train_tau * valid).sum() / valid.sum()) if self.trains_annealed
                                  else self.train_tau),
        }

    def evaluate(self, step: int, *, own_sampler: bool = False,
                 on_pool: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
        """(per-problem counts, failure counts: ``ead.evaluation.failure_counts``), both with ``step`` and
        ``evaluated_with``: per-problem sample counts, correct counts and greedy correctness on the fixed evaluation
        split (or, with ``on_pool``, on the fixed training pool, at the declared temperature: rows
        ``evaluated_with = train_pool``), and the same samples by first mistake.

        At the declared evaluation temperature (``eval.tau``, with greedy accuracy), or with the cell's own sampler at
        this step (``own_sampler``: its schedule as its rollouts used it; greedy is left NaN, it does not depend on
        the sampler). Both draw the evaluation's random numbers (``eval.seed``), so a sampler equal to the declared
        one reproduces its rows exactly and is not sampled twice.
        """
        if own_sampler and on_pool:
            raise ValueError("the training pool is evaluated at the declared temperature only")
        if on_pool and self.pool is None:
            raise ValueError("this cell has no training pool (budget.train_pool is null)")
        ev = self.settings.eval
        declared = FixedTemperature(ev.tau)
        schedule = self.schedule if own_sampler else declared
        if own_sampler and schedule.to_dict() == declared.to_dict() and step in self.declared_rows:
            rows, failures = self.declared_rows[step]
            return (rows.assign(greedy_correct=np.nan, evaluated_with="own_sampler"),
                    failures.assign(evaluated_with="own_sampler"))
        per_problem, _, failures = evaluate(
            self.model.eval(), self.tokenizer, self.pool if on_pool else self.eval_problems, self.settings.task, n=ev.n,
            ks=sorted({1, ev.n}),  # only the per-problem counts are kept; they serve every k <= n
            schedule=schedule, max_new_tokens=ev.max_new_tokens, seed=ev.seed,
            batch_size=ev.batch_size, greedy=not own_sampler, step=step)
        if own_sampler:
            per_problem["greedy_correct"] = np.nan
        evaluated_with = "own_sampler" if own_sampler else "train_pool" if on_pool else "eval_tau"
        rows = per_problem[[*COUNT_COLUMNS, TIMEOUT_PROBLEM_COLUMN]].assign(step=step, evaluated_with=evaluated_with)
        failures = failures.assign(step=step, evaluated_with=evaluated_with)
        if evaluated_with == "eval_tau":
            self.declared_rows[step] = rows, failures
        return rows, failures


def _save_checkpoint(directory: Path, trainer: Trainer, step: int, tables: dict[str, list[dict]],
                     fingerprint: str) -> None:
    with atomic_directory(directory) as staging:
        save_hf_model(staging / "model", trainer.model, trainer.tokenizer)
        torch.save({"optimizer": trainer.optimizer.state_dict(), "step": step}, staging / "trainer_state.pt")
        (staging / "tables.json").write_text(json.dumps(tables))
        stamp(staging, fingerprint)


def cell_fingerprint(settings: CellSettings, trainer_class: type[Trainer], inputs: list[str]) -> str:
    """What a checkpoint of the cell must have been made with: its settings, its trainer (another trainer's checkpoint
    is never resumed; :class:`Trainer`'s own prints stay as they were before there were others) and its inputs."""
    document = settings.to_document()
    if trainer_class is not Trainer:
        document = {**document, "trainer": f"{trainer_class.__module__}.{trainer_class.__qualname__}"}
    return job_fingerprint(document, inputs)


def train(settings: CellSettings, policy_dir: str, data: str, base_eval: str, base_failures: str, out_dir: str,
          checkpoint_dir: str, measured_schedule: str | None = None, ks: list[int] | None = None,
          trainer_class: type[Trainer] = Trainer) -> None:
    """Train the cell and write its tables into ``out_dir``; eval.csv too when ``ks`` (the reported k) is given.
    ``base_eval`` and ``base_failures`` are the policy's step-0 evaluation (``ead.evaluation``'s per-problem and
    failure tables). ``trainer_class`` makes each step's update (:class:`Trainer`'s own code, or
    ``ead.rl.trl.cell.TRLTrainer``'s TRL losses); prompts, evaluations, checkpoints and tables are this function's."""
    log = setup_logging("rl")
    torch.manual_seed(settings.seed)
    checkpoint = Path(checkpoint_dir)
    settings = with_measured_schedule(settings, measured_schedule)
    # a checkpoint of other settings or inputs (edited config, retrained policy) is discarded, never resumed
    fingerprint = cell_fingerprint(settings, trainer_class, [policy_dir, data, base_eval, base_failures])
    # step 0 is the policy's base evaluation: read and checked before any training, so a broken one fails at once
    base = (BASE_PROBLEMS.read(base_eval)[[*COUNT_COLUMNS, TIMEOUT_PROBLEM_COLUMN]]
            .assign(step=0, evaluated_with="eval_tau"))
    step_0_failures = read_base_failures(base_failures, base, settings.task)
    resuming = resumable(checkpoint, fingerprint, log)
    trainer = trainer_class(settings, policy_dir, data, log, resume_from=checkpoint if resuming else None)
    tables = {"steps": [], "eval_problems": [], "eval_failures": []}
    if resuming:
        tables = json.loads((checkpoint / "tables.json").read_text())
        log.info("resuming from %s after step %d", checkpoint, trainer.resumed_step)
    start = trainer.resumed_step + 1

    steps, evaluation = settings.budget.steps, settings.eval
    evaluated = set(evaluated_steps(steps, evaluation.every))  # step 0 is the policy's base evaluation
    # eval.csv's k: the workflow passes none and summarises eval_problems.csv in its own job (ead.rl.cell_eval), so
    # changing rl.eval.k never retrains; a direct call with --k still gets eval.csv here.
    log_ks = ks or sorted({1, evaluation.n})
    log.info("cell %s: %d steps, lr %.2e, schedule %s, TIS %s, training temperature %s, prompts from %s",
             settings.cell_columns(), steps, settings.training.lr, settings.schedule, settings.training.tis,
             "tau_t of each token (annealed)" if trainer.trains_annealed else f"{trainer.train_tau:.2f}",
             "the train split" if trainer.pool is None else f"a fixed pool of {len(trainer.pool)} training problems")

    def record(evaluated: tuple[pd.DataFrame, pd.DataFrame], step: int) -> None:
        per_problem, failures = evaluated
        tables["eval_problems"].extend(per_problem.to_dict("records"))
        tables["eval_failures"].extend(failures.to_dict("records"))
        summary = pass_worst_summary(per_problem, log_ks, seed=evaluation.seed)
        log.info("step %d eval (%s): %s", step, per_problem["evaluated_with"].iloc[0],
                 ", ".join(f"{r.metric} {r.value:.4f}" for r in summary.itertuples()))

    if trainer.pool is not None and not resuming:  # the pool at step 0 (the held-out step 0 is the base evaluation)
        record(trainer.evaluate(0, on_pool=True), 0)
    for step in tqdm(range(start, steps + 1), initial=start - 1, total=steps, desc="rl", unit="step"):
        row = trainer.train_step(step)
        tables["steps"].append(row)
        log.info("step %d reward %.3f entropy %.3f length %.1f clipfrac %.4f grad_norm %.3f tis_mean %.3f (%.1fs)",
                 step, row["reward_mean"], row["entropy"], row["response_length"], row["pg_clipfrac"],
                 row["grad_norm"], row["tis_weight_mean"], row["wall_time_s"])
        if step in evaluated:
            evaluations = [False, True] if step == steps and evaluation.own_sampler else [False]
            for own_sampler in evaluations:
                record(trainer.evaluate(step, own_sampler=own_sampler), step)
            if trainer.pool is not None:
                record(trainer.evaluate(step, on_pool=True), step)
        if step % settings.budget.checkpoint_every == 0 and step < steps:
            _save_checkpoint(checkpoint, trainer, step, tables, fingerprint)

    cell = settings.cell_columns()
    config_columns = {**settings.table_columns(), "loss_mode": trainer.loss_mode}
    eval_problems = pd.concat([base, pd.DataFrame(tables["eval_problems"])], ignore_index=True)
    eval_problems = eval_problems[[*PROBLEM_COLUMNS, TIMEOUT_PROBLEM_COLUMN]].astype({TIMEOUT_PROBLEM_COLUMN: float})
    failure_columns = ["step", "evaluated_with", *FAILURE_COLUMNS]
    eval_failures = pd.concat([step_0_failures.assign(step=0, evaluated_with="eval_tau"),
                               pd.DataFrame(tables["eval_failures"], columns=failure_columns)],
                              ignore_index=True)[failure_columns].astype({"step": int, "num_samples": int})
    out = Path(out_dir)
    STEPS.write(pd.DataFrame(tables["steps"]).assign(**cell, **config_columns), out / "steps.csv")
    EVAL_PROBLEMS.write(eval_problems.assign(**cell, **config_columns), out / "eval_problems.csv")
    EVAL_FAILURES.write(eval_failures.assign(**cell, **config_columns), out / "eval_failures.csv")
    if ks:
        EVAL.write(cell_summary(eval_problems.assign(**cell, **config_columns), ks, seed=evaluation.seed),
                   out / "eval.csv")
    discard(checkpoint)  # the run is complete: its checkpoint and the directories it leaves empty go
    log.info("wrote %s", out)


def read_base_failures(path: str, base: pd.DataFrame, task: str) -> pd.DataFrame:
    """The policy's step-0 failure counts (``ead.evaluation --failures``), checked against its step-0 counts ``base``:
    for a task that classifies failures, every problem's counts sum to its samples; for one that does not, no rows."""
    failures = BASE_FAILURES.read(path)
    if not get_task(task).probed:
        if len(failures):
            raise SystemExit(f"--base-failures {path}: task {task!r} classifies no failures, yet the table has rows")
        return failures
    totals = failures.groupby("problem_id")["num_samples"].sum()
    expected = base.set_index("problem_id")["num_samples"]
    if not totals.reindex(expected.index).eq(expected).all():
        raise SystemExit(f"--base-failures {path}: its counts do not cover the step-0 evaluation's problems with their "
                         f"samples ({len(totals)} problems counted, {len(expected)} evaluated); rerun the step-0 "
                         "evaluation")
    return failures


def with_measured_schedule(settings: CellSettings, path: str | None) -> CellSettings:
    """A cell whose sampler says ``measured: true`` samples with c and d0 from its policy's measured schedule
    (``ead.analyses.measured_schedule``); the tables then record those values in ``schedule_params``."""
    if not settings.training.measured:
        if path:
            raise SystemExit(f"--measured-schedule {path} given, but the cell's sampler is not `measured: true`")
        return settings
    if not path:
        raise SystemExit("the cell's sampler is `measured: true`: pass its policy's --measured-schedule table")
    return dataclasses.replace(settings, schedule={**settings.schedule, **read_measured_schedule(path)})


def main(argv=None, trainer_class: type[Trainer] = Trainer, module: str = "ead.rl.train",
         description: str = __doc__.splitlines()[0]):
    parser = argparse.ArgumentParser(prog=f"python -m {module}", description=description)
    parser.add_argument("--policy-dir", required=True, help="the policy before RL (HF directory)")
    parser.add_argument("--data", required=True, help="problems table with a train split and the eval split")
    parser.add_argument("--base-eval", required=True, help="the policy's per-problem base evaluation (step 0)")
    parser.add_argument("--base-failures", required=True,
                        help="the base evaluation's completions counted by first mistake (ead.evaluation --failures)")
    parser.add_argument("--settings", required=True,
                        help="the cell's settings document (JSON, ead.settings.rl.cell_settings)")
    parser.add_argument("--out-dir", required=True)
    parser.add_argument("--checkpoint-dir", required=True)
    parser.add_argument("--threads", type=int, required=True, help="torch's CPU threads (the rule's `threads`)")
    parser.add_argument("--measured-schedule",
                        help="the policy's measured schedule table (samplers with measured: true)")
    parser.add_argument("--k", type=int, nargs="+",
                        help="also write eval.csv at these k (the workflow leaves it to ead.rl.cell_eval)")
    args = parser.parse_args(argv)
    pin_job(args.threads)
    try:
        settings = CellSettings.from_json(args.settings)
    except ConfigError as error:
        raise SystemExit(f"{module} --settings: {error}") from None
    configure_grader(settings.grader)  # the cell's grader: its document's, like every other setting
    train(settings, args.policy_dir, args.data, args.base_eval, args.base_failures, args.out_dir,
          args.checkpoint_dir, args.measured_schedule, args.k, trainer_class)


if __name__ == "__main__":
    main()
