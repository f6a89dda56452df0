"""The sections added for the authors' revised experiments: ``paired_baselines`` (paired-difference
panels), ``schedule_shapes`` (the shapes figure), ``inference_only`` (the sampler comparison without RL) and
``measured_schedule`` (c and d0 sized from measurement): their cross-key rules and the settings their jobs read."""

from __future__ import annotations

from ead.settings.analyses import analysis_schedule
from ead.settings.base import ConfigError
from ead.settings.rl import expand_grid, sampler_schedule

__all__ = ["check_revised_sections", "inference_only_schedule", "schedule_shapes_spec", "shape_schedules",
           "shape_table_options"]


def inference_only_schedule(config: dict, name: str) -> dict:
    """A sampler of the inference-only comparison as a schedule document (ead.settings.base)."""
    return analysis_schedule(config, config["inference_only"]["samplers"][name], f"inference_only.samplers.{name}")


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


def check_paired_baselines(config: dict) -> list[str]:
    """Problems with ``paired_baselines`` (each must be a sampler of ``rl.samplers``), as messages naming the key."""
    known = config["rl"]["samplers"]
    return [f"paired_baselines[{index}] = {name!r} is not a sampler of rl.samplers (known: {sorted(known)})"
            for index, name in enumerate(config.get("paired_baselines", [])) if name not in known]


def check_measured_schedule(config: dict) -> list[str]:
    """The measured schedule is sized from the entropy analysis of tiny policies, and only CPU cells of those policies
    with an EAD sampler can read it."""
    spec = config.get("measured_schedule")
    problems = []
    if spec is not None:
        analysed = config["analyses"]["entropy"]["models"]
        problems += [f"measured_schedule.policies: {policy!r} needs its entropy analysis (analyses.entropy.models = "
                     f"{analysed}) and must be a tiny policy" for policy in spec["policies"]
                     if policy not in analysed or policy not in config["policies"]]
    measured = {name for name, sampler in config["rl"]["samplers"].items() if sampler.get("measured")}
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
    return problems


def check_inference_only(config: dict) -> list[str]:
    """The inference-only comparison: tiny policies, both families, schedules that build, splits that differ."""
    spec = config.get("inference_only")
    if spec is None:
        return []
    problems = [f"inference_only.models: {model!r} is not a tiny policy (policies: {sorted(config['policies'])})"
                for model in spec["models"] if model not in config["policies"]]
    for name in spec["samplers"]:
        try:
            inference_only_schedule(config, name)
        except ConfigError as error:
            problems.append(str(error))
    families = {sampler["name"] for sampler in spec["samplers"].values()}
    if families != {"ead", "fixed"}:
        problems.append(f"inference_only.samplers: needs both families, ead and fixed (got {sorted(families)})")
    if spec["baseline"] not in spec["samplers"]:
        problems.append(f"inference_only.baseline = {spec['baseline']!r} is not one of inference_only.samplers")
    if spec["select_split"] == spec["report_split"]:
        problems.append(f"inference_only: select_split and report_split are both {spec['select_split']!r}; choosing "
                        f"the best on the problems it is reported on favours the family with more configurations")
    if spec["n"] < max(spec["k"]):
        problems.append(f"inference_only.n = {spec['n']} must be >= every k in inference_only.k = {spec['k']}")
    if int(spec["select_metric"].split("@")[1]) not in spec["k"]:
        problems.append(f"inference_only.select_metric = {spec['select_metric']!r} needs its k in inference_only.k")
    return problems


def check_schedule_shapes(config: dict) -> list[str]:
    """The schedule-shapes figure draws cells of the grid, against a paired baseline, on metrics the curves carry."""
    spec = config.get("schedule_shapes")
    if spec is None:
        return []
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
    return problems


def check_revised_sections(config: dict) -> None:
    """Raise ConfigError for the first problem of the revised experiments' sections, in the order a reader would fix
    them."""
    problems = [*check_paired_baselines(config), *check_schedule_shapes(config), *check_inference_only(config),
            *check_measured_schedule(config)]
    if problems:
        raise ConfigError(problems[0])
