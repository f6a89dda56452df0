"""Reading config files (configs/config.yaml and the --configfile overlays) with errors that name the file and line.

Snakemake parses ``--configfile`` overlays before the Snakefile runs and reports a YAML syntax error as "Config file
is not valid JSON or YAML" without the file or the line; the workflow parses ``configs/config.yaml`` itself (Snakefile)
before Snakemake does, and every file can be checked from the shell:

    python -m ead.settings.files configs/smoke.yaml configs/ablations/decay_scale_20.yaml
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from ead.settings.base import ConfigError


class _DuplicateKey(yaml.MarkedYAMLError):
    pass


class ConfigLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """YAML's safe loader (libyaml's parser where PyYAML has it: config.yaml is read by every job and test) that
    refuses a key given twice in one mapping: YAML keeps the last silently, so ``ead:`` twice would lose a block."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            self.flatten_mapping(node)
            seen: dict = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                try:
                    first = seen.setdefault(key, key_node)
                except TypeError:  # an unhashable key: the base constructor names it
                    continue
                if first is not key_node:
                    raise _DuplicateKey(
                        None, None, f"key {key!r} is given twice (first at line {first.start_mark.line + 1})",
                        key_node.start_mark)
        return super().construct_mapping(node, deep=deep)


def read_config_file(path: str | Path) -> dict:
    """The mapping in a YAML config file; ConfigError naming the file, line and column of a syntax error or of a key
    given twice in one mapping, or the file if it is empty or does not hold a mapping."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"config file {path}: cannot be read ({error.strerror or error})") from None
    try:
        values = yaml.load(text, Loader=ConfigLoader)  # noqa: S506 (a safe loader)
    except _DuplicateKey as error:
        mark = error.problem_mark
        raise ConfigError(f"{path}:{mark.line + 1}:{mark.column + 1}: {error.problem}") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        context = getattr(error, "context", None)
        context_mark = getattr(error, "context_mark", None)
        if context and context_mark is not None and context_mark is not mark:
            context += f" started at line {context_mark.line + 1}"
        raise ConfigError(f"{where}: YAML syntax error: {problem}" + (f" ({context})" if context else "")) from None
    if values is None:  # Snakemake refuses an empty --configfile without naming it; this names it
        raise ConfigError(f"config file {path}: is empty; a profile or overlay sets at least one key")
    if not isinstance(values, dict):
        raise ConfigError(f"config file {path}: must hold a mapping of keys at top level, got {type(values).__name__}")
    if not values:  # `{}` changes nothing either: most likely a file whose keys were lost, so refuse it the same way
        raise ConfigError(f"config file {path}: holds an empty mapping ({{}}); a profile or overlay sets at least one "
                          "key")
    return values


def main(argv=None) -> int:
    """Check each file given; print one line per broken file; exit 1 if any is broken."""
    paths = sys.argv[1:] if argv is None else argv
    if not paths:
        print("usage: python -m ead.settings.files FILE.yaml [FILE.yaml ...]", file=sys.stderr)
        return 2
    broken = 0
    for path in paths:
        try:
            read_config_file(path)
        except ConfigError as error:
            print(f"Config error: {error}", file=sys.stderr)
            broken += 1
        else:
            print(f"{path}: ok")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
