"""EAD as vLLM logits processors (ead.samplers.vllm_processors): every registered schedule divides the logits as
the HF sampler does (without vLLM itself; the real engine: tests/vllm)."""

import torch

#: One example of every registered schedule; a schedule added to the registry without one fails the test below.
REGISTRY_EXAMPLES = {
    "fixed": {"tau": 0.7},
    "ead": {"tau_max": 1.5, "tau_min": 0.2, "d0": 6, "warmup": 2},
    "two_stage": {"tau_early": 1.4, "tau_late": 0.5, "switch": 5},
    "linear": {"tau_max": 1.5, "tau_min": 0.3, "length": 8, "warmup": 1},
    "ead_mean": {"tau_max": 1.5, "tau_min": 0.2, "d0": 6, "length": 16},
    "entropy_aware": {"mode": "edt", "tau_low": 0.4, "tau_high": 1.4, "base": 0.8, "theta": 1.0},
    "ead_linear": {"tau_max": 1.5, "tau_min": 0.2, "d0": 6, "step_factor": 2, "warmup": 2},
    "ead_two_stage": {"tau_max": 1.5, "tau_min": 0.2, "d0": 6, "step_factor": 2, "warmup": 2},
    "ead_mean_matched": {"tau_max": 1.5, "tau_min": 0.2, "d0": 6, "warmup": 2},
}


def test_the_vllm_processors_divide_every_registered_schedule_as_the_hf_sampler():
    """One implementation across engines: the vLLM processors' rows (ead.samplers.vllm_processors, the generic
    `ead_schedule` form) equal HF's ScheduleLogitsProcessor, bit for bit, for every schedule in the registry, at several
    positions and steps, with rows of the same schedule at different positions in one batch."""
    from ead.samplers.hf import ScheduleLogitsProcessor
    from ead.samplers.vllm_processors import ScheduleRequest, _divide_by_schedules, parse_request, schedule_extra_args
    from ead.schedule import SCHEDULES, build_schedule

    assert set(REGISTRY_EXAMPLES) == set(SCHEDULES)
    generator = torch.Generator().manual_seed(3)
    scale = torch.tensor([0.3, 1.0, 4.0, 12.0])[:, None]  # flat to sharp rows: entropies from ~3.4 nats to ~0
    for name, params in REGISTRY_EXAMPLES.items():
        schedule = build_schedule({"name": name, **params})
        for step in (0, 7):
            request = ScheduleRequest(schedule, step)
            assert parse_request({"ead_schedule": schedule.to_dict(), "ead_step": step}) == request
            if name != "ead":  # EAD travels as its four numbers (the vectorised path), tested in tests/vllm
                assert parse_request(schedule_extra_args(schedule, step)) == request
            positions = [0, 3, 3, 20]
            logits = torch.randn(4, 50, generator=generator) * scale
            got = _divide_by_schedules(logits.clone(), [0, 1, 2, 3], [request] * 4, positions)
            for row, position in enumerate(positions):
                hf = ScheduleLogitsProcessor(schedule, prompt_length=1, step=step)
                want = hf(torch.zeros(1, 1 + position, dtype=torch.long), logits[row : row + 1].clone())[0]
                assert torch.equal(got[row], want), (name, step, position)
