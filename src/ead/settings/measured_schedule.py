"""``measured_schedule``: EAD's c and d0 sized from a policy's measurements (python -m ead.analyses.measured_schedule)
instead of by hand, and read by RL cells of a sampler with ``measured: true``: the section's cross-key rules."""

from __future__ import annotations

from ead.settings.base import ConfigError, sampler_training
from ead.settings.rl import expand_grid

__all__ = ["check_measured_schedule"]


def check_measured_schedule(config: dict) -> None:
    """Raise ConfigError for the first problem: the measured schedule is sized from the entropy analysis of tiny
    policies, and only CPU cells of those policies with an EAD sampler can read it."""
    spec = config.get("measured_schedule")
    problems = []
    if spec is not None:
        analysed = config["analyses"]["entropy_by_position"]["models"]
        problems += [f"measured_schedule.policies: {policy!r} needs its entropy analysis "
                     f"(analyses.entropy_by_position.models = {analysed}) and must be a tiny policy"
                     for policy in spec["policies"] if policy not in analysed or policy not in config["policies"]]
    measured = {name for name, sampler in config["rl"]["samplers"].items()
                if sampler_training(config["rl"], sampler)["measured"]}
    used = {c.policy for c in expand_grid(config["rl"]) if c.sampler in measured}
    if used and config["rl"]["backend"] != "cpu":
        problems.append(f"rl.samplers {sorted(measured)}: `measured: true` is read by the CPU trainer only")
    sized = set(spec["policies"]) if spec else set()
    if used - sized:
        problems.append(f"rl.samplers {sorted(measured)} (`measured: true`) run on {sorted(used - sized)}, which "
                        f"measured_schedule.policies does not size (add them, or the measured_schedule block)")
    premises = config.get("premises") or {}
    probed = [name for name in premises.get("samplers", []) if name in measured]
    unsized = [policy for policy in premises.get("policies", []) if policy not in sized]
    if probed and unsized:
        problems.append(f"premises.samplers {probed} (`measured: true`) are probed on {unsized}, which "
                        f"measured_schedule.policies does not size (add them, or the measured_schedule block)")
    if problems:
        raise ConfigError(problems[0])
