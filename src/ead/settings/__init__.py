"""The workflow config -> one job's settings: the one home of config knowledge.

One module per config section, each with its cross-key rules (``check_*``) and the function that makes one job's
settings: ``rl`` (the grid, a cell's settings; its rules ``rl_checks`` and ``algorithms``), ``claims`` (the claims, G4,
the paired baselines and the breakdown on the grid), ``analyses``, ``policies``, ``premises``, ``evaluation``,
``inference_only``, ``measured_schedule``, ``schedule_shapes``; ``layering`` is how profiles, overlays and ``--config``
combine; ``schema`` the JSON-schema check; ``switches`` what the rule files decide at parse time; ``arguments`` every
rule's job arguments. The workflow (workflow/rules/common.smk) and ``python -m ead.workflow`` load the config through
:func:`load_workflow_config` once, at DAG build time, so a bad config fails before any job runs, with one message naming
the file, the key and the value; the rule files turn these settings into paths and flags
(:mod:`ead.settings.arguments`). Nothing here imports a sampler, a model or a backend.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from ead.rewards.grader import GraderSettings
from ead.schedule import AnnealedSchedule
from ead.settings.analyses import check_analyses
from ead.settings.base import ConfigError, check_set_lists
from ead.settings.claims import check_breakdown, check_claims, check_paired_baselines, check_rl_learns
from ead.settings.evaluation import check_base_eval
from ead.settings.inference_only import check_inference_only
from ead.settings.layering import (
    LayeredConfig,
    check_configfile_flags,
    command_line_overrides,
    layer_config,
)
from ead.settings.measured_schedule import check_measured_schedule
from ead.settings.policies import check_policies
from ead.settings.premises import check_premises
from ead.settings.rl_checks import validate_rl
from ead.settings.schedule_shapes import check_schedule_shapes
from ead.settings.schema import check_schema

__all__ = ["ConfigError", "LayeredConfig", "layer_config", "load_layered_config", "load_workflow_config",
           "validate_config"]


def schema_path(root: str | Path) -> Path:
    """The config schema of the workflow at ``root``."""
    return Path(root) / "workflow" / "schemas" / "config.schema.yaml"


def load_workflow_config(root: str | Path, configfiles: list, overrides: dict, argv: list[str]) -> LayeredConfig:
    """The workflow's config, layered and checked: ``root``/configs/config.yaml, then ``configfiles`` in order (each
    with its ``include:`` layers), then the ``--config`` ``overrides`` (Snakemake's pairs,
    :func:`command_line_overrides`), validated against ``root``/workflow/schemas/config.schema.yaml and every section's
    rules (:func:`validate_config`).

    ``argv`` is the command line, refused when it gives ``--configfile`` twice (argparse keeps the last flag only). A
    problem raises ConfigError whose message starts with the file (or ``--config``) that set the key at fault. The one
    loader of workflow/rules/common.smk and ``python -m ead.workflow``."""
    root = Path(root)
    layered = None
    try:
        check_configfile_flags(argv)
        layered = layer_config(root / "configs" / "config.yaml", *configfiles,
                               command_line=command_line_overrides(overrides))
        validate_config(layered.config, schema_path(root))
    except ConfigError as error:
        if layered is None:
            raise
        message = layered.name_source(str(error))
        if error.suggested_overrides:
            message += _after_suggestion(root, configfiles, {**overrides, **error.suggested_overrides})
        if any(Path(path).parent.name == "ablations" for path in configfiles):
            message += ("\n(configs/README.md, \"Which overlay runs over which profile\", lists the profile each "
                        "overlay is layered over)")
        raise ConfigError(message) from None
    return layered


def _after_suggestion(root: Path, configfiles: list, overrides: dict) -> str:
    """What the suggested ``--config`` fix would meet: nothing to add if it validates, else the next refusal, so the
    user learns both at once."""
    layered = None
    try:
        layered = layer_config(root / "configs" / "config.yaml", *configfiles,
                               command_line=command_line_overrides(overrides))
        validate_config(layered.config, schema_path(root))
    except ConfigError as error:
        pairs = " ".join(f"{key}={shlex.quote(str(value))}" for key, value in overrides.items())
        refusal = layered.name_source(str(error)) if layered is not None else str(error)
        return f"\n(with --config {pairs} this combination is still refused: {refusal})"
    return ""


def load_layered_config(*paths: str | Path, command_line: dict | None = None) -> dict:
    """The config of a profile, as the workflow sees it: ``configs/config.yaml`` and the profile's file(s) layered in
    order (:func:`layer_config`), then checked (:func:`validate_config`, against the schema of the workflow that holds
    the first file: ``<root>/workflow/schemas/config.schema.yaml``). The loader of tests, tools and benchmarks; a
    problem raises ConfigError naming the file that set the key. A config meant to be invalid is built explicitly:
    ``layer_config(...).config``, then changed."""
    layered = layer_config(*paths, command_line=command_line)
    try:
        validate_config(layered.config, schema_path(Path(paths[0]).resolve().parents[1]))
    except ConfigError as error:
        raise ConfigError(layered.name_source(str(error))) from None
    return layered.config


def validate_config(config: dict, schema_path: str | Path) -> None:
    """Raise ConfigError for the first problem found in ``config`` (layered and resolved: :func:`layer_config`);
    return None if it is valid. ``config`` is not changed."""
    check_schema(config, schema_path)
    try:  # the schedule's and the grader's own checks are the final word, so config and code cannot disagree
        AnnealedSchedule(**config["ead"])
    except ValueError as error:
        raise ConfigError(f"ead: {error}") from None
    try:
        GraderSettings.from_mapping(config["grader"])
    except (TypeError, ValueError) as error:
        raise ConfigError(str(error)) from None
    decays, d_max = config["schedule_figure"]["decays"], config["ead"]["d_max"]
    if max(decays) > d_max:
        raise ConfigError(f"schedule_figure.decays = {decays}: every decay rate must be <= ead.d_max = {d_max}")
    check_set_lists(config)
    check_base_eval(config)
    validate_rl(config)
    check_analyses(config)
    check_policies(config)
    check_premises(config)
    check_claims(config)
    check_rl_learns(config)
    check_paired_baselines(config)
    check_breakdown(config)
    check_schedule_shapes(config)
    check_inference_only(config)
    check_measured_schedule(config)
