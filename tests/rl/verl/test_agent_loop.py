"""verl's agent loop under the cell's schedule (ead.rl.verl.agent_loop): each step's EAD extra args, the 7B
sampler's tau_min, and every other schedule kind through the processor."""

import asyncio
import json
from pathlib import Path

import pytest
import yaml

from ead.rl.verl import overrides
from ead.rl.verl.agent_loop import schedule_sampling_params, step_of
from ead.samplers.vllm_processors import ScheduleRequest, ead_extra_args, parse_request
from ead.schedule import AnnealedSchedule, FixedTemperature, build_schedule
from ead.settings import validate_config
from ead.settings.rl import Cell
from ead.settings.rl import verl_cell_settings as cell_document
from tests.conftest import PAPER, PATHS, SCHEMA

ROOT = Path(__file__).resolve().parents[3]


OTHER_SCHEDULE_SAMPLERS = {
    "two_stage": {"name": "two_stage", "tau_early": 1.4, "tau_late": 0.6, "switch": 64, "tis": "token", "tis_cap": 2.0},
    "linear": {"name": "linear", "tau_max": 1.2, "tau_min": 0.1, "length": 1024, "warmup": 10, "tis": "token",
               "tis_cap": 2.0},
    "ead_mean": {"name": "ead_mean", "length": 1024, "tis": "token", "tis_cap": 2.0},
    "entropy_gate": {"name": "entropy_aware", "mode": "gate", "tau_low": 0.6, "tau_high": 1.2, "gate": 0.5,
                     "tis": "token", "tis_cap": 2.0},
}


@pytest.mark.parametrize("name", sorted(OTHER_SCHEDULE_SAMPLERS))
def test_every_other_schedule_kind_runs_on_verl_through_the_processor(name, tmp_path):
    """Two-stage, linear, EAD-mean and entropy-aware cells are valid in the paper profile: trainer at tau = 1, our
    agent loop, the processor registered, and each request carries the cell's schedule and step."""
    config = json.loads(json.dumps(PAPER))
    config["rl"]["samplers"][name] = OTHER_SCHEDULE_SAMPLERS[name]
    next(iter(config["rl"]["experiments"].values()))["samplers"].append(name)
    validate_config(config, SCHEMA)
    cell = Cell("qwen2.5-math-1.5b", "dapo", name, 8, 0)
    cfg = overrides.compose_verl_config(overrides.verl_overrides(cell_document(config, cell), PATHS))
    rollout = cfg.actor_rollout_ref.rollout
    assert rollout.temperature == 1.0 and rollout.agent.default_agent_loop == overrides.AGENT_LOOP_NAME
    assert list(rollout.engine_kwargs.vllm.logits_processors) == [overrides.EAD_PROCESSOR_FQCN]
    schedule = build_schedule(overrides.agent_loop_entries(cell_document(config, cell))[0]["schedule"])
    _, _, requests, _ = run_agent_loop(tmp_path, config, cell, [3, 40])
    for step, request in zip([3, 40], requests):
        params = request["sampling_params"]
        assert params["temperature"] == 1.0
        assert parse_request(params["extra_args"]) == ScheduleRequest(schedule, step)


class FakeServer:
    """Stands in for verl's LLM server client: records the sampling params of every request."""

    def __init__(self):
        self.requests = []

    async def generate(self, request_id, prompt_ids, sampling_params, **kwargs):
        from verl.workers.rollout.replica import TokenOutput

        self.requests.append({"prompt_ids": list(prompt_ids), "sampling_params": dict(sampling_params)})
        return TokenOutput(token_ids=[5, 6, 7], log_probs=[-0.5, -0.25, -0.125])


def run_agent_loop(tmp_path, config, cell, steps):
    """Build our agent loop from its config file exactly as verl's AgentLoopWorker does, run one request per step."""
    import hydra
    from omegaconf import OmegaConf
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap
    from verl.utils.dataset.rl_dataset import RLHFDataset

    from ead.models.tiny_policy import build_tokenizer

    paths = overrides.CellPaths(**{**PATHS.__dict__, "agent_loop_config": str(tmp_path / "agent_loop.yaml")})
    Path(paths.agent_loop_config).write_text(yaml.safe_dump(overrides.agent_loop_entries(cell_document(config, cell))))
    cfg = overrides.compose_verl_config(overrides.verl_overrides(cell_document(config, cell), paths))
    (entry,) = OmegaConf.load(cfg.actor_rollout_ref.rollout.agent.agent_loop_config_path)
    assert entry.name == cfg.actor_rollout_ref.rollout.agent.default_agent_loop
    tokenizer = build_tokenizer()
    tokenizer.chat_template = "{% for m in messages %}{{ m['content'] }}{% endfor %}"
    server = FakeServer()
    base = dict(temperature=cfg.actor_rollout_ref.rollout.temperature, top_p=1.0, top_k=-1, repetition_penalty=1.0,
                logprobs=True)  # what verl's AgentLoopWorkerTQ.generate_sequences builds

    # verl's AgentLoopWorker loads the file into its registry and looks the entry up for every sample
    # (experimental/agent_loop/agent_loop.py, AgentLoopWorker.__init__ and _run_agent_loop).
    from verl.experimental.agent_loop.agent_loop import _agent_loop_registry

    _agent_loop_registry[entry.name] = entry

    async def main():
        outputs = []
        for step in steps:  # a fresh agent loop per request, as verl makes one per sample
            loop = hydra.utils.instantiate(config=_agent_loop_registry[entry.name],
                                           trainer_config=DictConfigWrap(config=cfg), server_manager=server,
                                           tokenizer=tokenizer, processor=None, hf_model_type=None,
                                           dataset_cls=RLHFDataset, data_config=DictConfigWrap(cfg.data))
            outputs.append(await loop.run(dict(base), raw_prompt=[{"role": "user", "content": "12+3"}],
                                          global_steps=step, index=0, uid="u", session_id=0))
        return loop, outputs

    loop, outputs = asyncio.run(main())
    return loop, outputs, server.requests, base


def test_agent_loop_sends_each_step_its_ead_extra_args(tmp_path):
    cell = Cell("qwen2.5-math-1.5b", "dapo", "ead_tis", 8, 0)
    steps = [1, 2, 100, 8000]
    loop, outputs, requests, base = run_agent_loop(tmp_path, PAPER, cell, steps)
    schedule = AnnealedSchedule(**PAPER["ead"])
    assert loop.schedule == schedule
    assert len(requests) == len(steps)
    for step, request in zip(steps, requests):
        params = request["sampling_params"]
        assert params["temperature"] == 1.0  # the processor divides the logits itself
        assert params["extra_args"] == ead_extra_args(schedule, step)
        d_s = min(25 + 5 * step, 40000)
        assert params["extra_args"]["d"] == 20 * d_s  # decay_scale 20 (the authors' code reading)
        assert (params["extra_args"]["tau_max"], params["extra_args"]["tau_min"], params["extra_args"]["c"]) == (
            1.2, 0.1, 10)
        assert {k: v for k, v in params.items() if k not in ("temperature", "extra_args")} == {
            k: v for k, v in base.items() if k != "temperature"}
    assert requests[-1]["sampling_params"]["extra_args"]["d"] == 20 * 40000  # d_s capped at d_max
    assert requests[0]["prompt_ids"] == requests[1]["prompt_ids"] and len(requests[0]["prompt_ids"]) > 0
    assert all(out.response_ids == [5, 6, 7] and out.response_logprobs == [-0.5, -0.25, -0.125] for out in outputs)


def test_agent_loop_for_the_7b_sampler_uses_tau_min_0_8(tmp_path):
    cell = Cell("qwen2.5-math-7b", "dapo", "ead_tmin0.8", 8, 0)
    _, _, requests, _ = run_agent_loop(tmp_path, PAPER, cell, [5])
    assert requests[0]["sampling_params"]["extra_args"]["tau_min"] == 0.8


def test_schedule_sampling_params_and_step():
    base = {"temperature": 0.7, "top_p": 1.0, "extra_args": {"kv_transfer_params": {"a": 1}}}
    params = schedule_sampling_params(base, AnnealedSchedule(d0=25, decay_scale=1), step=4)
    assert params["temperature"] == 1.0 and params["extra_args"]["d"] == 45.0
    assert params["extra_args"]["kv_transfer_params"] == {"a": 1} and base["temperature"] == 0.7  # base untouched
    assert schedule_sampling_params(base, FixedTemperature(0.6), step=4)["temperature"] == 0.6
    assert step_of({"global_steps": 7}) == 7
    with pytest.raises(KeyError, match="global_steps"):
        step_of({"index": 0})
