"""Profiles, overlays and ``--config`` overrides: how the workflow's config is layered before it is checked.

Snakemake 9's own behaviour, which these helpers build on (snakemake/cli.py, settings/types.py):
- ``--configfile a.yaml b.yaml`` layers a then b over ``configfile:`` (``update_config``, in order); the flag given
  twice keeps only the LAST list (argparse), silently dropping the first.
- ``--config key=value``: the key must be an identifier, so ``ead.tau_max=1.5`` is refused before the Snakefile runs;
  a nested value (``ead={tau_max: 1.5}``) is read with YAML's BaseLoader, which leaves every scalar a string.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from ead.settings.base import ConfigError

NESTED_SEPARATOR = "__"


def load_layered_config(*paths: str | Path) -> dict:
    """The config of a profile: ``configs/config.yaml`` and the profile's file(s) layered in order.

    Snakemake's own rule (``update_config``): a mapping merges key by key at every depth; any other value (a list, a
    number, null) replaces the earlier one whole. Tests and tools call this, so they see the config the workflow sees.
    """
    from snakemake.utils import update_config  # here: jobs that only validate a config never load Snakemake

    merged: dict = {}
    for path in paths:
        update_config(merged, yaml.safe_load(Path(path).read_text()) or {})
    return merged


def restated_keys(base: dict, delta: dict, prefix: str = "") -> list[str]:
    """Keys of the profile ``delta`` that layering onto ``base`` would set to the value they already have there."""
    restated = []
    for key, value in delta.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            restated += restated_keys(base[key], value, f"{path}.")
        elif key in base and base[key] == value:
            restated.append(path)
    return restated


def _yaml_typed(value):
    """A value of Snakemake's BaseLoader (every scalar a string) with YAML's types: '1.5' -> 1.5, 'true' -> True."""
    if isinstance(value, dict):
        return {key: _yaml_typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_yaml_typed(item) for item in value]
    if isinstance(value, str):
        try:
            return yaml.safe_load(value) if value.strip() else value
        except yaml.YAMLError:
            return value
    return value


def command_line_overrides(cli_config: dict) -> dict:
    """The nested overrides Snakemake's ``--config`` pairs stand for, with their YAML types.

    Two spellings, both merged key by key like an overlay file: ``--config 'ead={tau_max: 1.5}'`` and
    ``--config ead__tau_max=1.5`` (a dotted path written with ``__``, because Snakemake refuses ``.`` in a key).
    """
    from snakemake.utils import update_config

    overrides: dict = {}
    for key, value in cli_config.items():
        value = _yaml_typed(value) if isinstance(value, (dict, list)) else value
        if isinstance(value, str) and NESTED_SEPARATOR in key:
            value = _yaml_typed(value)
        parts = key.split(NESTED_SEPARATOR)
        if any(not part for part in parts):
            raise ConfigError(f"--config {key}={value!r}: empty key between '{NESTED_SEPARATOR}' separators")
        nested = value
        for part in reversed(parts):
            nested = {part: nested}
        update_config(overrides, nested)
    return overrides


def apply_command_line_overrides(config: dict, cli_config: dict) -> None:
    """Replace, in the workflow's ``config`` (where Snakemake merged ``cli_config`` last), the raw --config entries
    by :func:`command_line_overrides`: typed values, ``__`` paths as nested keys."""
    from snakemake.utils import update_config

    for key in cli_config:
        if NESTED_SEPARATOR in key:
            config.pop(key, None)
    update_config(config, command_line_overrides(cli_config))


def ineffective_overlay_keys(base: dict, overlay: dict, prefix: str = "") -> list[str]:
    """Keys of an overlay that layering cannot apply: an empty mapping where ``base`` holds a non-empty one (it
    removes nothing, so e.g. ``experiments: {}`` would still run the full grid)."""
    found = []
    for key, value in overlay.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            if not value and base[key]:
                found.append(path)
            else:
                found += ineffective_overlay_keys(base[key], value, f"{path}.")
    return found


def check_overlays(base: dict, overlays: list[tuple[str, dict]]) -> None:
    """Raise ConfigError naming the source and key of the first overlay entry that cannot take effect.

    ``overlays`` are (source, mapping) pairs in layering order, each checked against everything layered before it."""
    from snakemake.utils import update_config

    merged = json.loads(json.dumps(base))
    for source, overlay in overlays:
        ineffective = ineffective_overlay_keys(merged, overlay)
        if ineffective:
            key = ineffective[0]
            raise ConfigError(f"{source}: {key} = {{}} cannot take effect: overlays merge mappings key by key, so an "
                              f"empty mapping removes nothing and every entry of {key} still runs; state the entries "
                              f"to change instead (e.g. an experiment's `samplers: [...]` or `seeds: [0]`), or name "
                              "targets on the command line")
        update_config(merged, overlay)


def _configfile_flag(arg: str) -> bool:
    """Whether ``arg`` is Snakemake's --configfile option in any spelling argparse accepts: ``--configfile``,
    ``--configfiles``, a unique prefix (``--configf``), each also as ``--configfile=FILE``."""
    name = arg.split("=", 1)[0]
    return len(name) >= len("--configf") and ("--configfiles".startswith(name))


def check_configfile_flags(argv: list[str]) -> None:
    """Raise ConfigError if ``--configfile`` appears more than once: Snakemake keeps only the last flag's files."""
    flags = [arg.split("=", 1)[0] for arg in argv[1:] if _configfile_flag(arg)]
    if len(flags) > 1:
        raise ConfigError(f"--configfile given {len(flags)} times ({', '.join(flags)}): Snakemake keeps only the files "
                          "of the last one and silently drops the others; list every overlay after one flag, in "
                          "layering order: --configfile configs/smoke.yaml configs/ablations/decay_scale_20.yaml")


def with_overlay_claims(config: dict) -> dict:
    """The config with an overlay's ``extra_claims`` appended to ``claims`` (an overlay's ``claims`` list would
    replace the profile's). Returns a new mapping; ``config`` is not changed."""
    merged = {key: value for key, value in config.items() if key != "extra_claims"}
    if "extra_claims" in config:
        merged["claims"] = [*config["claims"], *config["extra_claims"]]
    return merged
