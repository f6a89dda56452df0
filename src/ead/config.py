"""Config validation: JSON-schema checks plus the cross-field rules a schema cannot state.

Called by the workflow at DAG build time (workflow/rules/common.smk) so a bad config fails before any job
runs, with one message naming the key and the value.
"""

from __future__ import annotations

from pathlib import Path

import jsonschema
import yaml

from ead.schedule import AnnealedSchedule


class ConfigError(ValueError):
    """A config value is invalid; the message names the key and the value."""


def _key_path(path) -> str:
    return ".".join(str(p) for p in path) or "<top level>"


def _schema_error_message(error: jsonschema.ValidationError) -> str:
    where = _key_path(error.absolute_path)
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        unknown = sorted(set(error.instance) - set(allowed))
        prefix = f"{where}." if error.absolute_path else ""
        return f"unknown key(s) {', '.join(prefix + k for k in unknown)}; allowed here: {allowed}"
    if error.validator == "required":
        return f"{where}: {error.message}"
    return f"{where} = {error.instance!r}: {error.message}"


def validate_config(config: dict, schema_path: str | Path) -> None:
    """Raise ConfigError for the first problem found in ``config``; return None if it is valid."""
    schema = yaml.safe_load(Path(schema_path).read_text())
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: (len(e.absolute_path), list(map(str, e.path))))
    if errors:
        raise ConfigError(_schema_error_message(errors[0]))
    ead = config["ead"]
    # Rules across keys, checked in the order a reader would fix them.
    if ead["tau_min"] > ead["tau_max"]:
        raise ConfigError(f"ead.tau_min = {ead['tau_min']} must be <= ead.tau_max = {ead['tau_max']}")
    if not ead["d0"] > 0:
        raise ConfigError(f"ead.d0 = {ead['d0']} must be > 0 (the decay rate divides the position)")
    if ead["warmup"] < 0:
        raise ConfigError(f"ead.warmup = {ead['warmup']} must be >= 0 (c, the number of tau = 1 positions)")
    if ead["d_max"] < ead["d0"]:
        raise ConfigError(f"ead.d_max = {ead['d_max']} must be >= ead.d0 = {ead['d0']}")
    base_eval = config["base_eval"]
    if base_eval["n"] < max(base_eval["k"]):
        raise ConfigError(f"base_eval.n = {base_eval['n']} must be >= every k in base_eval.k = {base_eval['k']} "
                          "(unbiased Pass@k needs n >= k samples)")
    try:  # the schedule's own checks are the final word, so config and code cannot disagree
        AnnealedSchedule(**ead)
    except ValueError as error:
        raise ConfigError(f"ead: {error}") from None
    _validate_rl(config)


def _validate_rl(config: dict) -> None:
    """Cross-key rules of the RL grid: every name an experiment uses exists, and every cell can run."""
    rl = config["rl"]
    if rl["eval"]["n"] < max(rl["eval"]["k"]):
        raise ConfigError(f"rl.eval.n = {rl['eval']['n']} must be >= every k in rl.eval.k = {rl['eval']['k']} "
                          "(unbiased Pass@k needs n >= k samples)")
    for name, sampler in rl["samplers"].items():
        key = f"rl.samplers.{name}"
        if sampler["kind"] == "fixed":
            if "tau" not in sampler:
                raise ConfigError(f"{key} is kind 'fixed' but has no tau")
            if "ead" in sampler:
                raise ConfigError(f"{key} is kind 'fixed'; its 'ead' overrides would be ignored")
        else:
            if "tau" in sampler:
                raise ConfigError(f"{key} is kind 'ead'; set EAD parameters under {key}.ead, not tau")
            try:
                AnnealedSchedule(**{**config["ead"], **sampler.get("ead", {})})
            except ValueError as error:
                raise ConfigError(f"{key}.ead: {error}") from None
    lr_ns = {int(n) for n in rl["lr_by_n"]}
    for name, experiment in rl["experiments"].items():
        key = f"rl.experiments.{name}"
        for field, known in (("policies", config["policies"]), ("algorithms", rl["algorithms"]),
                             ("samplers", rl["samplers"])):
            unknown = [value for value in experiment[field] if value not in known]
            if unknown:
                raise ConfigError(f"{key}.{field} = {unknown}: not defined; known {field}: {sorted(known)}")
        for n in experiment["n"]:
            if n not in lr_ns:
                raise ConfigError(f"{key}.n = {n} has no learning rate in rl.lr_by_n (covers {sorted(lr_ns)})")
            if (rl["prompts_per_step"] * n) % rl["mini_batches"]:
                raise ConfigError(f"{key}.n = {n}: rl.prompts_per_step * n = {rl['prompts_per_step'] * n} rollouts "
                                  f"do not split into rl.mini_batches = {rl['mini_batches']} equal mini-batches")
