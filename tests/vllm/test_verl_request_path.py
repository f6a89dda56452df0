"""The sampling params our verl agent loop sends become a vLLM request that the EAD processor reads (no engine).

verl 0.9.1's vLLM server turns the agent loop's dict into ``SamplingParams(max_tokens=..., **sampling_params)``
after replacing ``logprobs=True`` by ``logprobs=0`` (workers/rollout/vllm_rollout/vllm_async_server.py,
``generate``). Here the dict comes from :func:`ead.rl.verl.agent_loop.schedule_sampling_params` for several
RL steps; vLLM must accept it and the processor must read the step's parameters from ``extra_args``.

Run inside .venv-vllm: ``.venv-vllm/bin/python -m pytest tests/vllm/test_verl_request_path.py``.
"""

from __future__ import annotations

import pytest

vllm = pytest.importorskip("vllm", reason="vLLM is only installed in .venv-vllm (workflow/scripts/setup_vllm_venv.sh)")

from ead.rl.verl.agent_loop import schedule_sampling_params  # noqa: E402
from ead.samplers import vllm_processors  # noqa: E402
from ead.schedule import (  # noqa: E402
    AnnealedSchedule,
    EADMeanTemperature,
    EntropyAwareTemperature,
    LinearAnneal,
    TwoStageTemperature,
)


@pytest.mark.parametrize("step", [1, 50, 9000])
def test_agent_loop_params_make_a_vllm_request_the_processor_reads(step):
    schedule = AnnealedSchedule(tau_max=1.2, tau_min=0.1, d0=25, step_factor=5, d_max=40000, warmup=10,
                                decay_scale=20)
    verl_base = dict(temperature=1.0, top_p=1.0, top_k=-1, repetition_penalty=1.0, logprobs=True)
    params = schedule_sampling_params(verl_base, schedule, step)
    params["logprobs"] = 0 if params.pop("logprobs", False) else None  # as verl's vLLM server does
    request = vllm.SamplingParams(max_tokens=16, **params)
    vllm_processors.EADLogitsProcessor.validate_params(request)  # what vLLM calls on every request
    parsed = vllm_processors.parse_ead_extra_args(request.extra_args)
    assert parsed == vllm_processors.EADRequestParams(tau_max=1.2, tau_min=0.1, d=20.0 * min(25 + 5 * step, 40000),
                                                      c=10.0)
    assert request.temperature == 1.0 and request.logprobs == 0


@pytest.mark.parametrize("schedule", [
    TwoStageTemperature(tau_early=1.4, tau_late=0.6, switch=8),
    LinearAnneal(tau_max=1.2, tau_min=0.1, length=200, warmup=10),
    EADMeanTemperature(tau_max=1.2, tau_min=0.1, d0=25, warmup=10, decay_scale=20, length=1024),
    EntropyAwareTemperature(mode="gate", tau_low=0.6, tau_high=1.2, gate=0.5),
], ids=lambda schedule: schedule.name)
def test_agent_loop_sends_any_other_schedule_whole(schedule):
    """Every schedule kind but EAD and fixed tau reaches the processor as itself, with the step."""
    verl_base = dict(temperature=1.0, top_p=1.0, top_k=-1, repetition_penalty=1.0, logprobs=True)
    params = schedule_sampling_params(verl_base, schedule, 37)
    params["logprobs"] = 0 if params.pop("logprobs", False) else None
    request = vllm.SamplingParams(max_tokens=16, **params)
    vllm_processors.EADLogitsProcessor.validate_params(request)
    assert vllm_processors.parse_request(request.extra_args) == vllm_processors.ScheduleRequest(schedule, 37)
    assert request.temperature == 1.0


def test_verls_engine_cli_args_register_the_processor():
    """verl passes ``rollout.engine_kwargs.vllm`` and ``logprobs_mode`` to ``vllm serve`` as CLI flags (a list value
    becomes ``--key item ...``: workers/rollout/vllm_rollout/utils.py, ``build_cli_args_from_config``); vLLM's parser
    must turn them into engine args that load the EAD processor and return processed log-probs."""
    from vllm.engine.arg_utils import AsyncEngineArgs
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    fqcn = "ead.samplers.vllm_processors:EADLogitsProcessor"
    parser = AsyncEngineArgs.add_cli_args(FlexibleArgumentParser())
    args = parser.parse_args(["--model", "m", "--logits_processors", fqcn, "--logprobs_mode", "processed_logprobs"])
    engine_args = AsyncEngineArgs.from_cli_args(args)
    assert engine_args.logits_processors == [fqcn]
    assert engine_args.logprobs_mode == "processed_logprobs"
