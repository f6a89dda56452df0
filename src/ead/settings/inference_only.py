"""``inference_only``: the sampler comparison without RL (python -m ead.analyses.inference_only): its cross-key rules
and each sampler's schedule document, which its job reads."""

from __future__ import annotations

from ead.settings.analyses import analysis_schedule
from ead.settings.base import ConfigError

__all__ = ["check_inference_only", "inference_only_names", "inference_only_schedule"]


def inference_only_names(config: dict) -> dict[str, list[str]]:
    """The comparison's jobs, as the names each wildcard takes: its models, its two splits (selection, report) and its
    samplers; every combination is one evaluation."""
    spec = config["inference_only"]
    return {"model": list(spec["models"]), "split": [spec["select_split"], spec["report_split"]],
            "sampler": list(spec["samplers"])}


def inference_only_schedule(config: dict, name: str) -> dict:
    """A sampler of the inference-only comparison as a schedule document (ead.settings.base)."""
    return analysis_schedule(config, config["inference_only"]["samplers"][name], f"inference_only.samplers.{name}")


def check_inference_only(config: dict) -> None:
    """Raise ConfigError for the first problem of the inference-only comparison: tiny policies, both families,
    schedules that build, splits that differ."""
    spec = config.get("inference_only")
    if spec is None:
        return
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
    if problems:
        raise ConfigError(problems[0])
