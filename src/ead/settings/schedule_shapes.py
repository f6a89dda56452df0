"""``schedule_shapes``: the schedule-shapes figure (ead.plots.schedule_shapes: tau by position of each shape's cells,
from ead.analyses.sampler_schedules, and their paired differences to a baseline): the section's cross-key rules."""

from __future__ import annotations

from ead.settings.base import ConfigError
from ead.settings.rl import expand_grid, sampler_schedule

__all__ = ["check_schedule_shapes", "schedule_shapes_spec", "shape_schedules", "shape_table_options"]


def schedule_shapes_spec(config: dict) -> dict:
    """``schedule_shapes``: the shapes figure's cells, samplers, baseline, steps and metrics."""
    return config["schedule_shapes"]


def shape_schedules(config: dict) -> dict:
    """sampler -> the schedule its cells sample with, for the shapes the figure draws."""
    return {sampler: sampler_schedule(config, sampler) for sampler in config["schedule_shapes"]["samplers"]}


def shape_table_options(config: dict) -> dict:
    """The shapes table's extent: tau at each of ``steps``, positions 0..``max_position``."""
    spec = config["schedule_shapes"]
    return {"steps": spec["steps"], "max_position": spec["max_position"]}


def check_schedule_shapes(config: dict) -> None:
    """Raise ConfigError for the first problem: the schedule-shapes figure draws cells of the grid, against a paired
    baseline, on metrics the curves carry."""
    spec = config.get("schedule_shapes")
    if spec is None:
        return
    grid = {(c.policy, c.algorithm, c.sampler, c.n) for c in expand_grid(config["rl"])}
    problems = []
    for sampler in [*spec["samplers"], spec["baseline"]]:
        cell = (spec["policy"], spec["algorithm"], sampler, spec["n"])
        if cell not in grid:
            problems.append(f"schedule_shapes: the cell (policy, algorithm, sampler, n) = {cell} is not in the grid of "
                            f"rl.experiments")
    for sampler in spec["samplers"]:
        kind = config["rl"]["samplers"][sampler].get("name") if sampler in config["rl"]["samplers"] else None
        if kind in ("entropy_aware", "fixed"):
            problems.append(f"schedule_shapes.samplers: {sampler!r} is a {kind} sampler, not a schedule shape by "
                            f"position")
    if spec["baseline"] not in config["paired_baselines"]:
        problems.append(f"schedule_shapes.baseline = {spec['baseline']!r} must be one of paired_baselines = "
                        f"{config['paired_baselines']} (its paired curves are what the figure draws)")
    ks = config["rl"]["eval"]["k"]
    for metric in spec["metrics"]:
        if int(metric.split("@")[1]) not in ks:
            problems.append(f"schedule_shapes.metrics: {metric!r} needs k in rl.eval.k = {ks}")
    late = [step for step in spec["steps"] if step > config["rl"]["steps"]]
    if late:
        problems.append(f"schedule_shapes.steps = {spec['steps']}: {late} beyond rl.steps = {config['rl']['steps']}")
    if problems:
        raise ConfigError(problems[0])
