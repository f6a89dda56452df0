"""One grid cell -> Hydra overrides of verl 0.9.1's ``ppo_trainer`` config (``python -m verl.trainer.main_ppo``).

ALL mapping from our config to verl keys lives in :func:`verl_overrides`, so a change of layout on either side
is one edit. The keys and why (verl 0.9.1 source, paths relative to site-packages/verl):

* algorithm: ``algorithm.adv_estimator=grpo`` (group-normalised outcome advantages for every algorithm here),
  ``actor.policy_loss.loss_mode`` / ``clip_cov_*`` / ``kl_cov_ratio`` / ``ppo_kl_coef``, ``actor.clip_ratio_*``,
  ``actor.loss_agg_mode``, ``actor.use_kl_loss`` / ``kl_loss_coef`` / ``kl_loss_type``; no entropy bonus, no KL in
  the reward, no dynamic sampling, no length penalty (paper Sec. 5.1).
* sampler: fixed tau -> ``rollout.temperature=tau`` (the trainer divides its logits by the same value:
  trainer/ppo/v1/trainer_base.py passes ``rollout.temperature`` as the actor's temperature, so the policy is trained
  on logits / tau, rl.fixed_tau_trains_at = behaviour). EAD -> ``rollout.temperature=1.0`` (trainer at tau = 1),
  the vLLM processor ``ead.samplers.vllm_processors:EADLogitsProcessor`` in
  ``rollout.engine_kwargs.vllm.logits_processors`` (forwarded to ``vllm serve --logits-processors``,
  workers/rollout/vllm_rollout/vllm_async_server.py), and our agent loop (``rollout.agent.agent_loop_config_path``
  + ``default_agent_loop``) that puts the step's EAD parameters into each request's ``extra_args``. Every other
  schedule kind (two_stage, linear, ead_mean, entropy_aware) goes the same way, the request carrying the schedule
  itself (:func:`ead.samplers.vllm_processors.schedule_extra_args`). With rl.fixed_tau_trains_at = one, fixed-tau
  cells also go through the agent loop, which sets the request temperature while the trainer stays at 1.
* TIS: ``algorithm.rollout_correction.rollout_is=token|sequence``, ``rollout_is_threshold=cap``,
  ``bypass_mode=false`` (bypass would make old = rollout log-probs and every weight 1), with
  ``rollout.calculate_log_probs=true`` and ``rollout.logprobs_mode=processed_logprobs`` (behaviour log-probs after
  the EAD processor).
* reward: ``reward.custom_reward_function.path=pkg://ead.rl.verl.reward`` (our grader).
* validation: ``rollout.val_kwargs`` (do_sample, n, temperature; top_p 1, top_k -1), ``trainer.test_freq``
  (:func:`validation_frequency`: the steps of :func:`ead.tables.evaluated_steps`), ``trainer.val_before_train``,
  ``data.val_max_samples``, dumps in ``trainer.validation_data_dir``. Validation rows carry
  ``agent_name=single_turn_agent`` (written by :mod:`ead.operations.hub`), so every cell is evaluated by the same
  fixed-temperature sampler, never by its own training sampler.
* metrics: ``trainer.logger=[console,file]``; the file logger writes to ``$VERL_FILE_LOGGER_PATH``
  (utils/tracking.py, FileLogger) set by :mod:`ead.rl.verl.run`.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from ead.samplers.vllm_processors import PROCESSOR_NAME
from ead.settings.algorithms import POLICY_LOSS_KEYS
from ead.settings.cell import CellSettings
from ead.tables import evaluated_steps

__all__ = ["AGENT_LOOP_NAME", "CellPaths", "agent_loop_entries", "hydra_value", "uses_agent_loop",
           "validation_frequency", "verl_overrides"]

#: Name of our agent loop in verl's agent-loop registry.
AGENT_LOOP_NAME = "ead_schedule_agent"
AGENT_LOOP_TARGET = "ead.rl.verl.agent_loop.ScheduleAgentLoop"
EAD_PROCESSOR_FQCN = PROCESSOR_NAME
REWARD_MODULE = "pkg://ead.rl.verl.reward"
# verl passes this mapping to compute_score as keyword arguments (verl/trainer/ppo/reward.py).
REWARD_KWARGS = "reward.custom_reward_function.reward_kwargs"


@dataclass(frozen=True)
class CellPaths:
    """Files one run reads and writes (absolute paths: Ray workers may start elsewhere)."""

    model: str  # local HF model directory
    train_files: str  # verl-format parquet
    val_files: str
    agent_loop_config: str  # YAML written by ead.rl.verl.run (agent_loop_entries)
    run_dir: str  # checkpoints/, validation/ go here


def hydra_value(value) -> str:
    """A Python value in Hydra's override grammar (strings quoted when they need it)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(hydra_value(v) for v in value) + "]"
    text = str(value)
    if text and all(ch.isalnum() or ch in "_-./" for ch in text) and not text[0].isdigit():
        return text
    return json.dumps(text)  # a double-quoted string, escapes as Hydra expects


def uses_agent_loop(cell: CellSettings) -> bool:
    """True if the cell's training rollouts go through our agent loop (every schedule but a fixed tau trained on
    logits / tau)."""
    return cell.schedule["name"] != "fixed" or cell.training.trains_at == "one"


def agent_loop_entries(cell: CellSettings) -> list[dict]:
    """Content of the agent-loop config file (``rollout.agent.agent_loop_config_path``): verl instantiates
    ``_target_`` with the other keys as keyword arguments (experimental/agent_loop/agent_loop.py, AgentLoopWorker)."""
    return [{"name": AGENT_LOOP_NAME, "_target_": AGENT_LOOP_TARGET, "schedule": cell.schedule}]


def validation_frequency(cell: CellSettings) -> int:
    """``trainer.test_freq`` that makes verl validate at the cell's evaluated steps (:func:`ead.tables.evaluated_steps`,
    the rule the CPU trainer and the completeness check follow too). verl validates before training
    (``val_before_train``), at every multiple of test_freq and at the last step (trainer/ppo/v1/trainer_base.py,
    ``fit``), so the first evaluated step after step 0 is the frequency that gives exactly those steps."""
    return evaluated_steps(cell.budget.steps, cell.eval.every)[1]


def verl_overrides(cell: CellSettings, paths: CellPaths) -> list[str]:
    """Hydra overrides (``key=value`` strings) that make verl's ppo_trainer run one cell, from the cell's settings
    (ead.settings.rl.verl_cell_settings: the CPU cell's settings with the verl backend section). The one mapping."""
    if cell.backend is None:
        raise ValueError(f"the cell {cell.cell_columns()} has no verl backend section (a CPU cell's settings); "
                         "make them with ead.settings.rl.verl_cell_settings")
    algorithm, schedule = cell.training.algorithm_params.stated(), cell.schedule
    tis = None if cell.training.tis == "none" else cell.training.tis
    settings, budget, evaluation = cell.backend.verl, cell.budget, cell.eval
    actor, rollout = "actor_rollout_ref.actor", "actor_rollout_ref.rollout"
    uses_processor = schedule["name"] != "fixed"  # EAD and every other schedule: our vLLM logits processor
    trains_at_one = uses_processor or cell.training.trains_at == "one"
    o: dict[str, object] = {
        # data (paper_data, written by ead.operations.hub)
        "data.train_files": paths.train_files,
        "data.val_files": paths.val_files,
        "data.train_batch_size": budget.prompts_per_step,
        "data.max_prompt_length": settings.max_prompt_length,
        "data.max_response_length": budget.max_new_tokens,
        "data.val_max_samples": evaluation.limit,
        "data.filter_overlong_prompts": True,
        "data.truncation": "error",
        "data.shuffle": True,
        "data.seed": cell.seed,
        # model: a local directory (downloaded by the paper profile's model rule); never remote code
        "actor_rollout_ref.model.path": paths.model,
        "actor_rollout_ref.model.trust_remote_code": False,
        "actor_rollout_ref.model.use_remove_padding": settings.use_remove_padding,
        "actor_rollout_ref.model.enable_gradient_checkpointing": settings.gradient_checkpointing,
        # algorithm
        "algorithm.adv_estimator": "grpo",
        "algorithm.use_kl_in_reward": False,
        "critic.enable": False,  # GRPO advantages need no value model
        f"{actor}.strategy": settings.strategy,
        f"{actor}.optim.lr": cell.training.lr,
        f"{actor}.ppo_mini_batch_size": budget.prompts_per_step // budget.mini_batches,
        f"{actor}.ppo_micro_batch_size_per_gpu": settings.micro_batch_size_per_gpu,
        f"{actor}.ppo_epochs": 1,
        f"{actor}.data_loader_seed": cell.seed,
        f"{actor}.entropy_coeff": 0,
        f"{actor}.loss_agg_mode": algorithm["loss_agg_mode"],
        f"{actor}.use_kl_loss": algorithm["use_kl_loss"],
        f"{actor}.policy_loss.loss_mode": algorithm["loss_mode"],
        # rollout (vLLM)
        f"{rollout}.name": "vllm",
        f"{rollout}.mode": "async",
        f"{rollout}.n": cell.n,
        f"{rollout}.temperature": 1.0 if trains_at_one else schedule["tau"],
        f"{rollout}.top_p": 1.0,
        f"{rollout}.top_k": -1,
        f"{rollout}.seed": cell.seed,
        f"{rollout}.calculate_log_probs": True,
        f"{rollout}.logprobs_mode": "processed_logprobs",
        f"{rollout}.tensor_model_parallel_size": settings.tensor_model_parallel_size,
        f"{rollout}.gpu_memory_utilization": settings.gpu_memory_utilization,
        f"{rollout}.log_prob_micro_batch_size_per_gpu": settings.log_prob_micro_batch_size_per_gpu,
        f"{rollout}.agent.agent_loop_config_path": paths.agent_loop_config,
        f"{rollout}.agent.default_agent_loop": (AGENT_LOOP_NAME if uses_agent_loop(cell)
                                                 else "single_turn_agent"),
        # sampled validation at the declared temperature
        f"{rollout}.val_kwargs.do_sample": True,
        f"{rollout}.val_kwargs.n": evaluation.n,
        f"{rollout}.val_kwargs.temperature": evaluation.tau,
        f"{rollout}.val_kwargs.top_p": 1.0,
        f"{rollout}.val_kwargs.top_k": -1,
        # TIS (off unless the sampler asks for it)
        "algorithm.rollout_correction.rollout_is": tis,
        "algorithm.rollout_correction.bypass_mode": False,
        # reward: our grader
        "reward.custom_reward_function.path": REWARD_MODULE,
        "reward.custom_reward_function.name": "compute_score",
        # the config's grader: section, handed to compute_score as keyword arguments (grader_timeout_s=...)
        **{f"{REWARD_KWARGS}.grader_{key}": value for key, value in sorted(asdict(cell.grader).items())},
        # trainer
        "trainer.use_v1": True,  # the v1 trainer hands `global_steps` to agent loops (ppo/v1/agent_loop_tq.py)
        "trainer.critic_warmup": 0,
        "trainer.logger": ["console", "file"],
        "trainer.project_name": "ead-paper",
        "trainer.experiment_name": "_".join([cell.policy, cell.algorithm, cell.sampler, f"n{cell.n}",
                                             f"seed{cell.seed}"]),
        "trainer.nnodes": settings.nnodes,
        "trainer.n_gpus_per_node": settings.n_gpus_per_node,
        "trainer.total_training_steps": budget.steps,
        "trainer.total_epochs": 1000,  # bounded by total_training_steps; 860k prompts / 1024 = 840 steps per epoch
        "trainer.test_freq": validation_frequency(cell),
        "trainer.val_before_train": True,
        "trainer.save_freq": settings.save_freq,
        "trainer.resume_mode": "auto",
        "trainer.default_local_dir": f"{paths.run_dir}/checkpoints",
        "trainer.validation_data_dir": f"{paths.run_dir}/validation",
    }
    if tis is not None:
        o["algorithm.rollout_correction.rollout_is_threshold"] = cell.training.tis_cap
    for key in ("clip_ratio_low", "clip_ratio_high"):  # absent: verl's default (0.2), as in the CPU backend
        if key in algorithm:
            o[f"{actor}.{key}"] = algorithm[key]
    if algorithm["use_kl_loss"]:
        o[f"{actor}.kl_loss_coef"] = algorithm["kl_loss_coef"]
        o[f"{actor}.kl_loss_type"] = algorithm["kl_loss_type"]
        o["actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu"] = settings.log_prob_micro_batch_size_per_gpu
    for key in POLICY_LOSS_KEYS:
        if key in algorithm:
            o[f"{actor}.policy_loss.{key}"] = algorithm[key]
    if uses_processor:
        o[f"{rollout}.engine_kwargs.vllm.logits_processors"] = [EAD_PROCESSOR_FQCN]
    overrides = [f"{key}={hydra_value(value)}" for key, value in o.items()]
    # engine_kwargs.vllm is an empty dict in verl's config and reward_kwargs is absent, so a new key needs Hydra's
    # `+` (append) prefix.
    overrides = [("+" + item) if item.startswith((f"{rollout}.engine_kwargs.vllm.", f"{REWARD_KWARGS}."))
                 else item for item in overrides]
    return overrides + list(settings.extra_overrides)


def compose_verl_config(overrides: list[str]):
    """verl 0.9.1's ``ppo_trainer`` config with ``overrides`` applied, composed offline (no GPU, no Ray).

    Hydra rejects unknown keys and bad values here, so this is how the tests (and ``run --check``) verify that
    every override names a real key. Returns a resolved OmegaConf DictConfig.
    """
    from pathlib import Path

    import verl
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from omegaconf import OmegaConf

    config_dir = str(Path(verl.__file__).parent / "trainer" / "config")
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        cfg = compose(config_name="ppo_trainer", overrides=overrides)
    OmegaConf.resolve(cfg)
    return cfg
