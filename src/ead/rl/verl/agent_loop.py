"""verl agent loop that samples each training rollout under a temperature schedule (EAD) at the current RL step.

verl 0.9.1 builds one ``sampling_params`` dict per batch (temperature, top_p, top_k, logprobs) and hands it to
the agent loop of each sample (``trainer/ppo/v1/agent_loop_tq.py``, ``AgentLoopWorkerTQ.generate_sequences``);
the vLLM server turns it into ``SamplingParams(max_tokens=..., **sampling_params)``
(``workers/rollout/vllm_rollout/vllm_async_server.py``), so an ``extra_args`` entry reaches our vLLM logits
processor (:class:`ead.samplers.vllm_processors.EADLogitsProcessor`) unchanged. The RL global step arrives in the
agent loop's keyword arguments as ``global_steps`` (the v1 trainer puts it into every prompt's fields:
``trainer/ppo/v1/trainer_base.py`` ``tu.assign_non_tensor_data(batch, "global_steps", ...)``; training steps count
from 1).

:class:`ScheduleAgentLoop` is verl's single-turn loop with one change: before generating, it rewrites the
sampling params for the step with :func:`schedule_sampling_params`:

* EAD: ``temperature = 1.0`` (the processor divides the logits itself) and
  ``extra_args = ead_extra_args(schedule, step)`` = ``{tau_max, tau_min, d, c}``, where ``d`` is
  ``decay_scale * min(d0 + step_factor * step, d_max)``.
* any other registered schedule (two-stage, linear, EAD's mean tau, entropy-aware): ``temperature = 1.0`` and
  ``extra_args = {"ead_schedule": schedule.to_dict(), "ead_step": step}``, which the same processor evaluates
  (:func:`ead.samplers.vllm_processors.schedule_extra_args`).
* fixed tau (only with rl.fixed_tau_trains_at = one): ``temperature = tau`` for the request while the trainer
  runs at ``rollout.temperature = 1``.

It is registered by config, not by import (no ``@register``: importing the module inside a worker, which
instantiating the class does, would overwrite the config-file entry and drop its schedule):
``rollout.agent.agent_loop_config_path`` points at a YAML list with
``{name: ead_schedule_agent, _target_: ead.rl.verl.agent_loop.ScheduleAgentLoop, schedule: {...}}`` and
``rollout.agent.default_agent_loop = ead_schedule_agent`` (see :mod:`ead.rl.verl.overrides`). Validation
prompts name ``single_turn_agent`` in their ``agent_name`` field, so validation keeps verl's own sampling
(``rollout.val_kwargs``) and never sees the schedule.
"""

from __future__ import annotations

from typing import Any

from ead.samplers.vllm_processors import schedule_extra_args
from ead.schedule import FixedTemperature, Schedule, build_schedule

__all__ = ["ScheduleAgentLoop", "schedule_sampling_params", "step_of"]


def schedule_sampling_params(base: dict[str, Any], schedule: Schedule, step: int) -> dict[str, Any]:
    """The request's sampling params at RL step ``step``: ``base`` (verl's) with the schedule applied."""
    params = dict(base)
    if isinstance(schedule, FixedTemperature):
        params["temperature"] = float(schedule.tau)
    else:
        params["temperature"] = 1.0
        params["extra_args"] = {**(params.get("extra_args") or {}), **schedule_extra_args(schedule, step)}
    return params


def step_of(kwargs: dict[str, Any]) -> int:
    """The RL global step from an agent loop's keyword arguments; a clear error if the trainer did not send it."""
    if "global_steps" not in kwargs:
        raise KeyError(
            "ScheduleAgentLoop needs the RL step in the agent loop's kwargs ('global_steps'); verl 0.9.1's v1 trainer "
            "sends it (trainer.use_v1=true). The legacy trainer keeps it in meta_info only."
        )
    return int(kwargs["global_steps"])


#: Opt-in audit log (the verl_cpu checks): when set, every training rollout appends one JSON line with its RL step,
#: the request's sampling params, the prompt and response token ids and the engine's log-probs of the response (the
#: behaviour log-probs verl trains against, rollout.calculate_log_probs).
ROLLOUT_LOG_ENV = "EAD_AGENT_LOOP_LOG"


def log_rollout(step: int, sampling_params: dict[str, Any], output) -> None:
    """Append one rollout to $EAD_AGENT_LOOP_LOG (nothing when it is unset)."""
    import json
    import os

    path = os.environ.get(ROLLOUT_LOG_ENV)
    if path:
        record = {"step": step, "temperature": sampling_params.get("temperature"),
                  "extra_args": sampling_params.get("extra_args"), "prompt_ids": list(output.prompt_ids),
                  "response_ids": list(output.response_ids), "response_logprobs": output.response_logprobs}
        with open(path, "a") as log:
            log.write(json.dumps(record) + "\n")


def _plain(value):
    """OmegaConf containers (Hydra passes nested config as DictConfig) -> plain Python."""
    try:
        from omegaconf import DictConfig, ListConfig, OmegaConf
    except ImportError:  # pragma: no cover - verl always brings omegaconf
        return value
    if isinstance(value, (DictConfig, ListConfig)):
        return OmegaConf.to_container(value, resolve=True)
    return value


def _build_class():
    from verl.experimental.agent_loop.single_turn_agent_loop import SingleTurnAgentLoop

    class ScheduleAgentLoop(SingleTurnAgentLoop):
        """Single-turn agent loop whose requests follow a temperature schedule at the current RL step."""

        def __init__(self, *args, schedule: dict, **kwargs):
            super().__init__(*args, **kwargs)
            self.schedule = build_schedule(_plain(schedule))

        async def run(self, sampling_params: dict[str, Any], **kwargs):
            step = step_of(kwargs)
            params = schedule_sampling_params(sampling_params, self.schedule, step)
            output = await super().run(params, **kwargs)
            log_rollout(step, params, output)
            return output

    ScheduleAgentLoop.__module__ = __name__
    ScheduleAgentLoop.__qualname__ = "ScheduleAgentLoop"
    return ScheduleAgentLoop


def __getattr__(name: str):
    """Build the class on first access so importing this module does not import verl (PEP 562)."""
    if name == "ScheduleAgentLoop":
        cls = _build_class()
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
