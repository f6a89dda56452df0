"""An RL cell's settings: the one typed contract between the DAG and both backends' training jobs.

:class:`CellSettings` is made once per cell at DAG build time (:func:`ead.settings.rl.cell_settings` for the CPU
backend, :func:`ead.settings.rl.verl_cell_settings` for verl, which adds the :class:`VerlBackend` section), handed to
the job as one JSON document (``--settings``, :meth:`CellSettings.to_json`) and read back there with
:meth:`CellSettings.from_json`, which refuses an unknown or a missing key and a value of the wrong type, naming it
(``cell settings: unknown key 'eval.evry'``). The document mirrors the record: the cell's name (policy, algorithm,
sampler, n, seed) and task, then one group per concern: ``schedule`` (the sampler's schedule document),
``training`` (lr, the algorithm's loss parameters as a typed group, optimizer, TIS, where the trainer evaluates its
log-probs),
``budget`` (steps, batch, response length, checkpoints, the fixed training pool if any), ``eval`` (the ``rl.eval``
settings a cell uses; no ``k``: changing the reported k never retrains), ``grader`` (the config's ``grader:`` section,
:class:`ead.rewards.GraderSettings`: the rewards and the evaluations of the cell are graded with it on both backends)
and ``backend`` (verl's section, null on the CPU backend).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ead.rewards.grader import GraderSettings
from ead.schedule import build_schedule
from ead.settings.base import ConfigError
from ead.settings.documents import as_document, json_document, read_document
from ead.tables import CELL_COLUMNS

__all__ = ["AlgorithmParams", "Budget", "CellSettings", "Evaluation", "GraderSettings", "Optimizer", "TrainPool",
           "Training", "VerlBackend", "VerlSettings"]


@dataclass(frozen=True)
class AlgorithmParams:
    """``rl.algorithms.<algorithm>`` as the config states it (the schema's keys, ead.settings.algorithms): verl's
    actor and policy-loss fields and the CPU backend's forking-token mask. A key the config leaves out is None here,
    and verl's own default applies (or, for the mask, :meth:`forking`'s)."""

    loss_mode: str
    loss_agg_mode: str
    use_kl_loss: bool
    clip_ratio_low: float | None = None
    clip_ratio_high: float | None = None
    kl_loss_coef: float | None = None
    kl_loss_type: str | None = None
    clip_cov_ratio: float | None = None
    clip_cov_lb: float | None = None
    clip_cov_ub: float | None = None
    kl_cov_ratio: float | None = None
    ppo_kl_coef: float | None = None
    forking_token_fraction: float | None = None
    forking_token_scope: str | None = None

    def stated(self) -> dict:
        """The keys the config states, with their values (what verl's configs receive)."""
        return {key: value for key, value in as_document(self).items() if value is not None}

    def forking(self) -> tuple[float, str]:
        """(the share of response tokens the loss keeps, over a response or the batch): every token of each response
        unless the algorithm states a forking-token mask."""
        fraction = 1.0 if self.forking_token_fraction is None else self.forking_token_fraction
        return fraction, self.forking_token_scope or "response"


@dataclass(frozen=True)
class Training:
    """How the cell's policy is updated: the lr (the lr-by-n rule times the policy's scale), the algorithm's loss
    parameters (``rl.algorithms.<algorithm>`` as the config states them), the optimizer, TIS, and where the trainer
    evaluates its log-probs (``trains_at``: behaviour, one or annealed; the sampler's own or rl.fixed_tau_trains_at)."""

    lr: float
    algorithm_params: AlgorithmParams
    optimizer: Optimizer
    tis: str
    tis_cap: float
    trains_at: str
    measured: bool  # c and d0 of the schedule come from the policy's measured table (CPU backend)


@dataclass(frozen=True)
class Optimizer:
    betas: tuple[float, ...]
    weight_decay: float
    grad_clip: float


@dataclass(frozen=True)
class TrainPool:
    """``rl.train_pool`` (CPU backend): ``size`` training problems drawn once from the train split by ``seed`` (the
    same pool for every cell and cell seed), from which each step draws its prompts, so prompts recur across steps;
    the cell also evaluates on the pool. A size below 1 or a negative seed is refused."""

    size: int
    seed: int

    def __post_init__(self):
        if self.size < 1 or self.seed < 0:
            raise ConfigError(f"cell settings: 'budget.train_pool' = {{'size': {self.size!r}, 'seed': {self.seed!r}}}: "
                              "size must be >= 1 and seed >= 0")


@dataclass(frozen=True)
class Budget:
    """How much the cell trains: ``steps`` updates of ``prompts_per_step`` prompts x n rollouts in ``mini_batches``
    mini-batches, responses of at most ``max_new_tokens``; the CPU trainer checkpoints every ``checkpoint_every``.
    ``train_pool``: the prompts come from a fixed pool of training problems (:class:`TrainPool`), or from the whole
    train split (None)."""

    steps: int
    prompts_per_step: int
    mini_batches: int
    max_new_tokens: int
    checkpoint_every: int
    train_pool: TrainPool | None


@dataclass(frozen=True)
class Evaluation:
    """``rl.eval`` as a cell uses it: the held-out problems, n samples at the declared ``tau``, at the steps
    :func:`ead.tables.evaluated_steps` names for ``every``, and (CPU backend) the last step with the cell's own
    sampler too (``own_sampler``)."""

    split: str
    limit: int
    n: int
    tau: float
    max_new_tokens: int
    seed: int
    batch_size: int
    every: int
    own_sampler: bool


@dataclass(frozen=True)
class VerlSettings:
    """``rl.verl`` with the policy's own ``paper_models.<policy>.verl`` over it (docs/paper-scale.md)."""

    device: str
    use_remove_padding: bool
    gradient_checkpointing: bool
    nnodes: int
    n_gpus_per_node: int
    micro_batch_size_per_gpu: int
    log_prob_micro_batch_size_per_gpu: int
    max_prompt_length: int
    tensor_model_parallel_size: int
    gpu_memory_utilization: float
    save_freq: int
    strategy: str
    extra_overrides: tuple[str, ...]


@dataclass(frozen=True)
class VerlBackend:
    """What only a verl cell reads: its trainer settings."""

    verl: VerlSettings


@dataclass(frozen=True)
class CellSettings:
    """Everything one RL cell's training job reads (the module docstring has the document's layout)."""

    policy: str
    algorithm: str
    sampler: str
    n: int
    seed: int
    task: str
    schedule: dict  # a schedule document of ead.schedule's registry (name and parameters)
    training: Training
    budget: Budget
    eval: Evaluation
    grader: GraderSettings  # the rewards' and the evaluations' grader (config section grader:)
    backend: VerlBackend | None  # None on the CPU backend

    def cell_columns(self) -> dict:
        """The cell every table row belongs to (ead.tables.CELL_COLUMNS)."""
        return {column: getattr(self, column) for column in CELL_COLUMNS}

    def table_columns(self) -> dict:
        """The settings columns every result table of the cell carries, for both backends (ead.tables
        SETTINGS_COLUMNS, in that order)."""
        training = self.training
        return {"lr": training.lr, "tis": training.tis, "tis_cap": training.tis_cap,
                "loss_mode": training.algorithm_params.loss_mode,
                "schedule_params": json.dumps(self.schedule, sort_keys=True),
                "fixed_tau_trains_at": training.trains_at, "eval_tau": self.eval.tau,
                "prompts_per_step": self.budget.prompts_per_step, "mini_batches": self.budget.mini_batches}

    def to_document(self) -> dict:
        """The JSON-ready document (nested dicts and lists)."""
        return as_document(self)

    def to_json(self) -> str:
        """The document as the job receives it (keys sorted: reordering the config reruns nothing)."""
        return json.dumps(self.to_document(), sort_keys=True)

    @classmethod
    def from_document(cls, document: dict) -> CellSettings:
        """The settings of ``document``; ConfigError naming the first unknown or missing key or mistyped value, or a
        schedule that does not build (a document of ead.schedule's registry, whose classes type its parameters; the
        DAG's own documents are built when they are resolved)."""
        settings = read_document(cls, document, "cell settings")
        try:
            build_schedule(settings.schedule)
        except (TypeError, ValueError) as error:
            raise ConfigError(f"cell settings: 'schedule' = {settings.schedule!r} does not build: {error}") from None
        return settings

    @classmethod
    def from_json(cls, text: str) -> CellSettings:
        return cls.from_document(json_document(text, "cell settings"))
