"""Profiles, overlays and ``--config`` overrides: how the workflow's config is layered before it is checked.

The workflow layers the files itself (:func:`layer_config`), by Snakemake's rule plus two additions: a file's
``include:`` list (a profile builds on a shared layer, e.g. configs/layers/verl.yaml) and ``key+:`` (extend a list
instead of restating it). It remembers which file set each value, so a config error names the file.

Snakemake 9's own behaviour, which these helpers build on (snakemake/cli.py, settings/types.py):
- ``--configfile a.yaml b.yaml`` layers a then b over ``configfile:`` (``update_config``, in order); the flag given
  twice keeps only the LAST list (argparse), silently dropping the first.
- ``--config key=value``: the key must be an identifier, so ``ead.tau_max=1.5`` is refused before the Snakefile runs;
  a nested value (``ead={tau_max: 1.5}``) is read with YAML's BaseLoader, which leaves every scalar a string.
"""

from __future__ import annotations

import copy
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ead.settings.base import ConfigError
from ead.settings.rl import expand_grid

NESTED_SEPARATOR = "__"


#: A key ending in this suffix extends the list layered so far instead of replacing it (``claims+: [...]``,
#: ``premises: {samplers+: [...]}``): an overlay adds entries without restating the profile's.
EXTEND_SUFFIX = "+"
#: A profile or overlay file may build on other files: ``include: [layers/verl.yaml]`` (paths relative to the file),
#: layered before the file's own keys.
INCLUDE_KEY = "include"


@dataclass
class LayeredConfig:
    """A config layered from files, with the file (or ``--config``) that last set each leaf: ``sources`` maps a dotted
    path (``ead.tau_max``, ``rl.samplers.ead_tis.tis``; a list is one leaf) to its source."""

    config: dict
    sources: dict = field(default_factory=dict)
    files: list = field(default_factory=list)

    def source_of(self, key: str) -> str | None:
        """The source that set ``key`` (a dotted path; ``claims[3]`` means the list ``claims``) or, for a mapping,
        the last source that set anything inside it; None for a key no file set."""
        key = re.sub(r"\[[^\]]*\]", "", key).strip(".")
        parts = key.split(".")
        for end in range(len(parts), 0, -1):  # the key itself, or the list / leaf that holds it
            if ".".join(parts[:end]) in self.sources:
                return self.sources[".".join(parts[:end])]
        inside = [source for path, source in self.sources.items() if path.startswith(key + ".")]
        return inside[-1] if inside else None

    def sources_of(self, key: str) -> list[str]:
        """Every source that set a value of ``key``: :meth:`source_of`, then those that set a value inside one element
        of a list (``claims[3].n``, filled in from ``claim_defaults`` by :func:`resolve_config`)."""
        found = [self.source_of(key)]
        if "[" in key:
            exact = key.strip(".")
            found += [source for path, source in self.sources.items()
                      if path == exact or path.startswith(f"{exact}.")]
        return list(dict.fromkeys(source for source in found if source is not None))

    def name_source(self, message: str) -> str:
        """``message`` (a ConfigError's) prefixed with the files that set the config keys it names, in the order it
        names them: one file for a bad value, each file of a conflict between values (``rl.eval.n`` set by one file,
        ``rl.eval.k`` by another); unchanged if it names a source already."""
        if any(message.startswith(f"{source}:") for source in [*self.files, "--config"]):
            return message
        named: list[str] = []
        for match in re.finditer(r"[A-Za-z_][\w\-]*(?:\[[^\]]*\])?(?:\.[\w\-]+(?:\[[^\]]*\])?)*", message):
            token = match.group()
            if not ("." in token or "[" in token or token in self.config):
                continue
            # the first key named is the one at fault; a later one only as the other side of a conflict ("key = value"),
            # not in a hint or a list of known keys
            if not named or message.startswith(" =", match.end()):
                named += self.sources_of(token)
        named = list(dict.fromkeys(named))
        return f"{', '.join(named)}: {message}" if named else message


def _merge(merged: dict, layer: dict, source: str, sources: dict, prefix: str = "") -> None:
    """Snakemake's layering rule (``update_config``: mappings merge key by key at every depth; any other value, a
    list included, replaces the earlier one whole), plus ``key+: [...]`` (extends the list at ``key``); records the
    source of every leaf it sets."""
    both = [key for key in layer if isinstance(key, str) and f"{key}{EXTEND_SUFFIX}" in layer]
    if both:
        path = f"{prefix}{both[0]}"
        raise ConfigError(f"{source}: {path} and {path}{EXTEND_SUFFIX} are both given: one file either replaces a list "
                          f"({path}: [...]) or extends it ({path}{EXTEND_SUFFIX}: [...]), and which one won would "
                          "depend on the order of the keys")
    for raw_key, value in layer.items():
        extend = isinstance(raw_key, str) and raw_key.endswith(EXTEND_SUFFIX)
        key = raw_key[: -len(EXTEND_SUFFIX)] if extend else raw_key
        path = f"{prefix}{key}"
        if extend:
            if not isinstance(merged.get(key, []), list):
                raise ConfigError(f"{source}: {path}{EXTEND_SUFFIX} = {value!r}: `{key}{EXTEND_SUFFIX}` appends to a "
                                  f"list, but {path} is not a list (it is {merged[key]!r}); to replace it, write "
                                  f"`{key}:` without the `{EXTEND_SUFFIX}`")
            if not isinstance(value, list):
                raise ConfigError(f"{source}: {path}{EXTEND_SUFFIX} = {value!r}: `{key}{EXTEND_SUFFIX}` appends the "
                                  f"items of a list to {path}; write them as a list (e.g. `{key}{EXTEND_SUFFIX}: "
                                  f"[{value!r}]`)")
            merged[key] = [*merged.get(key, []), *copy.deepcopy(value)]
            sources.pop(path, None)  # re-inserted: the newest setter last (source_of reads the last)
            sources[path] = source
        elif isinstance(value, dict) and isinstance(merged.get(key), dict):
            if not value and merged[key]:
                raise ConfigError(f"{source}: {path} = {{}} cannot take effect: layering merges mappings key by key, "
                                  f"so an empty mapping removes nothing and every entry of {path} still applies; "
                                  "state the entries to change instead (e.g. an experiment's `samplers: [...]`), "
                                  "or select experiments with rl.run: [...]")
            _merge(merged[key], value, source, sources, f"{path}.")
        else:
            merged[key] = copy.deepcopy(value)
            for stale in [known for known in sources if known.startswith(f"{path}.")]:
                del sources[stale]
            if isinstance(value, dict):
                _record(value, source, sources, f"{path}.")
            else:
                sources.pop(path, None)
                sources[path] = source


def _record(mapping: dict, source: str, sources: dict, prefix: str) -> None:
    for key, value in mapping.items():
        if isinstance(value, dict) and value:
            _record(value, source, sources, f"{prefix}{key}.")
        else:
            sources.pop(f"{prefix}{key}", None)
            sources[f"{prefix}{key}"] = source


def _file_layers(path: Path, layered: set, seen: tuple = ()) -> list[tuple[str, dict]]:
    """(source, mapping) of a config file: its ``include`` files first (recursively), then its own keys; nothing for
    a file in ``layered`` (resolved paths already layered, which this adds to). A file is layered once, where it is
    first reached: an overlay that includes layers/verl.yaml over a profile built on it would otherwise apply it a
    second time, over the profile's own values (verl_cpu.yaml's CPU settings turned back into the GPU ones)."""
    from ead.settings.files import read_config_file

    if path.resolve() in seen:
        raise ConfigError(f"{path}: includes itself (through {' -> '.join(map(str, seen))})")
    if path.resolve() in layered:
        return []
    layered.add(path.resolve())
    values = read_config_file(path)
    includes = values.pop(INCLUDE_KEY, [])
    if isinstance(includes, str):
        includes = [includes]
    if not isinstance(includes, list) or not all(isinstance(item, str) for item in includes):
        raise ConfigError(f"{path}: {INCLUDE_KEY} = {includes!r} must be a list of config files (relative to {path})")
    layers = []
    for include in includes:
        target = path.parent / include
        if not target.is_file():
            raise ConfigError(f"{path}: {INCLUDE_KEY} names {include!r}, which is not a file ({target})")
        layers += _file_layers(target, layered, (*seen, path.resolve()))
    return [*layers, (_display(path), values)]


def _display(path: Path) -> str:
    """A config file's path as a user typed it: relative to the working directory when it lies below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def layer_config(*paths: str | Path, command_line: dict | None = None) -> LayeredConfig:
    """Layer config files (each with its includes) and then ``--config`` overrides (:func:`command_line_overrides`),
    in order, remembering where each leaf came from; then resolve the result (:func:`resolve_config`)."""
    merged: dict = {}
    sources: dict = {}
    files: list = []
    layered: set = set()
    for path in paths:
        for source, values in _file_layers(Path(path), layered):
            files.append(source)
            _merge(merged, values, source, sources)
    if command_line:
        _merge(merged, command_line, "--config", sources)
    result = LayeredConfig(merged, sources, files)
    try:
        result.config = resolve_config(merged, sources)
    except ConfigError as error:
        raise ConfigError(result.name_source(str(error))) from None
    return result


def _baselines(claim: dict) -> list:
    """The samplers a claim compares its sampler with: its baseline, its best_of candidates, or none (a threshold
    claim on one cell)."""
    return claim.get("best_of", [claim["baseline"]] if "baseline" in claim else [])


def resolve_config(config: dict, sources: dict | None = None) -> dict:
    """What layering leaves to resolve, once, before the config is checked: ``claim_defaults`` filled into every
    claim that leaves those keys out, and ``rl.run`` (the experiments that run; all when unset) narrowing
    ``rl.experiments`` to them, with the claims, figures and paired panels that read only experiments left out
    following (a claim whose cells no running experiment has is left out, and named on stderr)."""
    config = copy.deepcopy(config)
    defaults = config.get("claim_defaults") or {}
    if not isinstance(defaults, dict):
        raise ConfigError(f"claim_defaults = {defaults!r} must be a mapping of claim keys to the values every claim "
                          "that leaves them out takes (claim_defaults: {policy: tiny1m_sharp, n: 8})")
    claims = config.get("claims") or []
    if not isinstance(claims, list):
        raise ConfigError(f"claims = {claims!r} must be a list of claims")
    for index, claim in enumerate(claims):
        if not isinstance(claim, dict):
            raise ConfigError(f"claims[{index}] = {claim!r} must be a mapping ({{id: ..., sampler: ..., ...}})")
    config["claims"] = [{**defaults, **claim} for claim in claims]
    defaulted = {id(filled): [key for key in defaults if key not in claim]
                 for filled, claim in zip(config["claims"], claims)}
    rl = config.get("rl") or {}
    run = rl.get("run")
    if run is not None:
        config["claims"] = _claims_of_experiments_that_run(config["claims"], rl, run)
    if sources is not None:
        _record_defaulted_claim_keys(config["claims"], defaulted, sources)
    return config


def _claims_of_experiments_that_run(claims: list[dict], rl: dict, run) -> list[dict]:
    """``rl.run`` narrows ``rl.experiments`` (in place) to the experiments it names; returns the claims whose cells
    an experiment that runs has. A claim whose cells only experiments left out have is left out (and named on
    stderr); one whose cells no experiment has (a misspelt sampler) is kept, so the config check refuses it."""
    experiments = rl.get("experiments", {})
    if not isinstance(run, list) or not all(isinstance(name, str) for name in run):
        raise ConfigError(f"rl.run = {run!r} must be a list of experiment names (rl.run: [main]; known: "
                          f"{sorted(experiments)})")
    if not run:
        raise ConfigError("rl.run = []: selects no experiment; leave rl.run out to run every experiment")
    unknown = [name for name in run if name not in experiments]
    if unknown:
        raise ConfigError(f"rl.run = {run}: {unknown} not in rl.experiments (known: {sorted(experiments)})")

    def cells(claim: dict) -> set:
        return {(claim.get("policy"), algorithm, sampler, claim.get("n"))
                for sampler, algorithm in ((claim.get("sampler"), claim.get("algorithm")),
                                           *((name, claim.get("baseline_algorithm", claim.get("algorithm")))
                                             for name in _baselines(claim)))}

    def grid(rl: dict) -> set:
        return {(cell.policy, cell.algorithm, cell.sampler, cell.n) for cell in expand_grid(rl)}

    every_cell = grid(rl)
    rl["experiments"] = {name: spec for name, spec in experiments.items() if name in run}
    running = grid(rl)
    left_out = [claim for claim in claims if cells(claim) <= every_cell and not cells(claim) <= running]
    if left_out:
        print(f"rl.run = {run}: claims {[claim.get('id') for claim in left_out]} compare cells of experiments that "
              "do not run; left out", file=sys.stderr)
    return [claim for claim in claims if claim not in left_out]


def _record_defaulted_claim_keys(claims: list[dict], defaulted: dict, sources: dict) -> None:
    """Record ``claims[i].key`` -> the file of ``claim_defaults.key`` for each claim that took ``key`` from the
    defaults (``defaulted``: id of a claim -> those keys) set by a file other than the claims' own, so an error about
    claim i names that file too."""
    claims_source = sources.get("claims")
    for index, claim in enumerate(claims):
        for key in defaulted[id(claim)]:
            source = sources.get(f"claim_defaults.{key}")
            if source is not None and source != claims_source:
                sources[f"claims[{index}].{key}"] = source
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
