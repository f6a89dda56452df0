"""Config validation: JSON-schema checks plus the cross-field rules a schema cannot state.

Called by the workflow at DAG build time (workflow/rules/common.smk) so a bad config fails before any job
runs, with one message naming the key and the value.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import yaml

from ead.schedule import AnnealedSchedule, build_schedule


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
    check_analyses(config)


def check_analyses(config: dict) -> None:
    """Cross-field rules of the ``analyses`` section (the schema checks types and ranges)."""
    if "analyses" not in config:
        raise ConfigError("analyses: the section is required (see configs/config.yaml)")
    forking = config["analyses"]["forking"]
    for p in forking["fork_points"]:
        if not 0 <= p < forking["max_new_tokens"]:
            raise ConfigError(f"analyses.forking.fork_points = {forking['fork_points']}: every prefix length must be "
                              f">= 0 and < analyses.forking.max_new_tokens = {forking['max_new_tokens']}")
    if forking["continuations"] < max(forking["k"]):
        raise ConfigError(f"analyses.forking.continuations = {forking['continuations']} must be >= every K in "
                          f"analyses.forking.k = {forking['k']}")
    majority = config["analyses"]["majority"]
    for position, spec in enumerate(majority["samplers"]):
        try:
            analysis_schedule(config, spec)
        except ValueError as error:
            raise ConfigError(f"analyses.majority.samplers[{position}] = {spec}: {error}") from None
    labels = [json.dumps(analysis_schedule(config, spec), sort_keys=True) for spec in majority["samplers"]]
    if len(set(labels)) != len(labels):
        raise ConfigError(f"analyses.majority.samplers = {majority['samplers']}: a sampler is listed twice")


def analysis_schedule(config: dict, spec: dict) -> dict:
    """The schedule spec of an analysis sampler: an ``ead`` entry is the top-level ``ead`` block plus overrides."""
    spec = dict(spec)
    if spec.get("name") == "ead":
        spec = {**config["ead"], **spec}
    build_schedule(spec)  # raises ValueError naming the bad parameter
    return spec
