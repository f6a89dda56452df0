"""The JSON-schema check of the whole config (workflow/schemas/config.schema.yaml), with one-line messages."""

from __future__ import annotations

import functools
import math
from pathlib import Path

import jsonschema
import yaml

from ead.settings.base import ConfigError


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
    if isinstance(error.instance, float) and not math.isfinite(error.instance):
        return f"{where} = {error.instance!r}: must be a finite number"
    return f"{where} = {error.instance!r}: {error.message}"


def _is_finite_number(checker, instance) -> bool:
    return jsonschema.Draft202012Validator.TYPE_CHECKER.is_type(instance, "number") and math.isfinite(instance)


# The schema's "number" is a finite number: YAML's .nan and .inf are numbers to JSON Schema, and would reach jobs
# as empty or infinite settings.
_FiniteNumberValidator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine("number", _is_finite_number),
)


@functools.lru_cache(maxsize=8)
def _parsed_schema(path: Path, modified_ns: int, size: int) -> dict:
    """The schema file, parsed once per version of the file (parsing its ~1,000 lines took 0.6 s with PyYAML's pure
    Python loader; every Snakemake invocation and most settings tests check a config)."""
    del modified_ns, size  # the cache key: an edited schema is parsed again
    return yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def check_schema(config: dict, schema_path: str | Path) -> None:
    """Raise ConfigError for the first (shallowest) schema violation of ``config``."""
    path = Path(schema_path).resolve()
    stat = path.stat()
    schema = _parsed_schema(path, stat.st_mtime_ns, stat.st_size)
    errors = sorted(_FiniteNumberValidator(schema).iter_errors(config),
                    key=lambda e: (len(e.absolute_path), list(map(str, e.path))))
    if errors:
        raise ConfigError(_schema_error_message(errors[0]))
