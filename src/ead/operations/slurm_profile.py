"""A site's SLURM workflow profile, derived from ours with every resource kept (docs/cluster.md).

Snakemake's command-line ``--default-resources`` / ``--set-resources`` replace the workflow profile's whole maps
instead of merging into them, so ``--default-resources slurm_account=ACC`` beside ``--workflow-profile
workflow/profiles/slurm`` silently drops the profile's runtime, memory, CPUs and GPUs. This writes a complete profile
instead: ours, with the site's account, partition names and resource changes merged in, key by key:

    python -m ead.operations.slurm_profile --out profiles/mysite --account ACC --partition gpu=a100 \\
        --partition cpu=short --set rl_cell_verl:runtime=2880
    snakemake --configfile configs/paper.yaml --workflow-profile profiles/mysite

``--default`` / ``--set`` take Snakemake's own ``KEY=VALUE`` / ``RULE:KEY=VALUE`` syntax; a rule the workflow does
not declare or a resource neither Snakemake nor the SLURM executor reads is refused (Snakemake would ignore it
silently). Before a long run, check
that every partition a profile names exists on the cluster (one error naming them, instead of a failed sbatch per job
and attempt):

    python -m ead.operations.slurm_profile --check profiles/mysite
"""

from __future__ import annotations

import argparse
import copy
import difflib
import re
import subprocess
import sys
from pathlib import Path

import yaml

from ead.io import atomic_path
from ead.settings.analyses import ANALYSES

ROOT = Path(__file__).resolve().parents[3]
PAPER_PROFILE = ROOT / "workflow" / "profiles" / "slurm"
WORKFLOW_FILES = [ROOT / "Snakefile", *sorted((ROOT / "workflow" / "rules").glob("*.smk"))]

# Indented declarations count: some rules are declared inside an `if` on the config (paper_data or verl_local_data).
RULE_DECLARATION = re.compile(r"^[ \t]*(?:(?:rule|checkpoint) (\w+):|use rule \w+ as (\w+))", re.M)

# Snakemake's own resources (memory and disk in each unit it converts, runtime, tmpdir) and every resource
# snakemake-executor-plugin-slurm (2.x) reads from a job. Not ``threads``: a rule's threads come from its ``threads:``
# or --set-threads, a SLURM job's CPUs from cpus_per_task. Not ``gpus``: the plugin requests GPUs from ``gpu`` or
# ``gres`` only.
SNAKEMAKE_RESOURCES = {"mem", "mem_mb", "mem_mib", "disk", "disk_mb", "disk_mib", "runtime", "tmpdir"}
SLURM_RESOURCES = {
    "slurm_account", "slurm_partition", "slurm_extra", "qos", "constraint",
    "cluster", "clusters", "slurm_cluster",
    "nodes", "tasks", "tasks_per_node", "tasks_per_gpu", "mpi",
    "cpus_per_task", "cpus_per_gpu", "mem_mb_per_cpu",
    "gpu", "gpu_model", "gres",
}
KNOWN_RESOURCES = SNAKEMAKE_RESOURCES | SLURM_RESOURCES


class ProfileError(ValueError):
    """A base profile or an option that cannot make a site profile; the message names the file or option."""


def read_profile(directory: Path) -> dict:
    """The ``config.yaml`` of a Snakemake profile directory, checked to be a SLURM profile with resource maps."""
    path = Path(directory) / "config.yaml"
    if not path.is_file():
        raise ProfileError(f"{path}: no such file (a profile is a directory holding config.yaml)")
    profile = yaml.safe_load(path.read_text())
    if not isinstance(profile, dict):
        raise ProfileError(f"{path}: a profile must be a YAML mapping of Snakemake options")
    if profile.get("executor") != "slurm":
        raise ProfileError(f"{path}: executor is {profile.get('executor')!r}, not 'slurm'")
    for key in ("default-resources", "set-resources"):
        if not isinstance(profile.get(key, {}), dict):
            raise ProfileError(f"{path}: {key} must be a mapping")
    return profile


def parse_value(text: str):
    """A resource value as Snakemake reads it from a profile: numbers become numbers, anything else a string."""
    value = yaml.safe_load(text)
    return value if isinstance(value, (int, float, str)) and not isinstance(value, bool) else text


def parse_assignment(text: str, option: str) -> tuple[str, object]:
    key, sep, value = text.partition("=")
    if not sep or not key or not value:
        raise ProfileError(f"{option} {text!r}: expected KEY=VALUE")
    return key.strip(), parse_value(value.strip())


def parse_rule_assignment(text: str) -> tuple[str, str, object]:
    rule, sep, assignment = text.partition(":")
    if not sep or not rule:
        raise ProfileError(f"--set {text!r}: expected RULE:KEY=VALUE")
    key, value = parse_assignment(assignment, "--set")
    return rule.strip(), key, value


def workflow_rules() -> set[str]:
    """Every rule the Snakefile and workflow/rules/*.smk declare, whichever config includes it: those declared by
    name, and the sampling analyses' rules, one per analysis, declared in a loop (workflow/rules/analyses.smk)."""
    declared = {name for path in WORKFLOW_FILES for match in RULE_DECLARATION.finditer(path.read_text())
                for name in match.groups() if name}
    return declared | set(ANALYSES)


def unknown_rule(rule: str, declared: set[str]) -> str:
    return f"the workflow has no rule {rule!r}{did_you_mean(rule, declared)}; its rules: {', '.join(sorted(declared))}"


def unknown_resource(key: str) -> str:
    return (f"{key!r} is not a resource Snakemake or its SLURM executor reads{did_you_mean(key, KNOWN_RESOURCES)}; "
            f"they read: {', '.join(sorted(KNOWN_RESOURCES))}")


def did_you_mean(name: str, known: set[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_resource_names(defaults: list[tuple[str, object]], rules: list[tuple[str, str, object]]) -> None:
    """Raise naming the first ``--default`` / ``--set`` whose rule the workflow does not declare, or whose resource
    neither Snakemake nor the SLURM executor reads: either would be written into the profile and silently ignored."""
    for key, value in defaults:
        if key not in KNOWN_RESOURCES:
            raise ProfileError(f"--default {key}={value}: {unknown_resource(key)}")
    declared = workflow_rules() if rules else set()
    for rule, key, value in rules:
        if rule not in declared:
            raise ProfileError(f"--set {rule}:{key}={value}: {unknown_rule(rule, declared)}")
        if key not in KNOWN_RESOURCES:
            raise ProfileError(f"--set {rule}:{key}={value}: {unknown_resource(key)}")


def site_profile(base: dict, *, account: str | None = None, partitions: dict[str, str] | None = None,
                 defaults: list[tuple[str, object]] = (), rules: list[tuple[str, str, object]] = ()) -> dict:
    """``base`` with partition names mapped (``partitions``: our name -> the site's), ``slurm_account`` set for every
    job, and single resources changed (``defaults`` for every rule, ``rules`` for one rule), all other keys kept."""
    check_resource_names(defaults, rules)
    profile = copy.deepcopy(base)
    default_resources = profile.setdefault("default-resources", {})
    set_resources = profile.setdefault("set-resources", {})
    maps = [default_resources, *set_resources.values()]
    used = {resources["slurm_partition"] for resources in maps if "slurm_partition" in resources}
    for ours, theirs in (partitions or {}).items():
        if ours not in used:
            raise ProfileError(f"--partition {ours}={theirs}: the base profile has no partition {ours!r} "
                               f"(it uses {sorted(used)})")
    for resources in maps:
        if resources.get("slurm_partition") in (partitions or {}):
            resources["slurm_partition"] = partitions[resources["slurm_partition"]]
    if account:
        default_resources["slurm_account"] = account
    for key, value in defaults:
        default_resources[key] = value
    for rule, key, value in rules:
        set_resources.setdefault(rule, {})[key] = value
    return profile


def cluster_partitions() -> set[str]:
    """The partitions of the SLURM cluster this machine submits to (``sinfo``)."""
    try:
        result = subprocess.run(["sinfo", "--noheader", "--format", "%R"], capture_output=True, text=True,
                                timeout=60)
    except FileNotFoundError:
        raise ProfileError("sinfo is not installed: no SLURM cluster to check the profile against") from None
    if result.returncode != 0:
        raise ProfileError(f"sinfo failed (is the cluster up?): {result.stderr.strip()}")
    return set(result.stdout.split())


def check_partitions(profile: dict, available: set[str], source: str) -> None:
    """Raise one error naming every ``slurm_partition`` of ``profile`` (and where it is set) that is not in
    ``available``."""
    places = [("default-resources", profile.get("default-resources", {})),
              *((f"set-resources.{rule}", resources) for rule, resources in profile.get("set-resources", {}).items())]
    unknown = [f"{resources['slurm_partition']!r} ({place})" for place, resources in places
               if "slurm_partition" in resources and str(resources["slurm_partition"]) not in available]
    if unknown:
        raise ProfileError(f"{source}: slurm_partition {', '.join(unknown)} not on this cluster, which has "
                           f"{', '.join(sorted(available)) or 'no partitions'}")


def write_profile(profile: dict, directory: Path, header: str) -> Path:
    path = Path(directory) / "config.yaml"
    with atomic_path(path) as tmp:
        tmp.write_text(header + yaml.safe_dump(profile, sort_keys=False))
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ead.operations.slurm_profile",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="directory of the site profile (config.yaml)")
    parser.add_argument("--check", type=Path, metavar="PROFILE",
                        help="only check that every partition of this profile exists on the cluster (sinfo)")
    parser.add_argument("--base", type=Path, default=PAPER_PROFILE,
                        help="profile to derive from (default: workflow/profiles/slurm, the paper profile's)")
    parser.add_argument("--account", help="slurm_account of every job")
    parser.add_argument("--partition", action="append", default=[], metavar="OURS=SITE",
                        help="rename a partition of the base profile (cpu, gpu), e.g. gpu=a100")
    parser.add_argument("--default", action="append", default=[], metavar="KEY=VALUE",
                        help="set one default resource, keeping the others")
    parser.add_argument("--set", action="append", default=[], metavar="RULE:KEY=VALUE",
                        help="set one resource of one rule, keeping the others")
    args = parser.parse_args(argv)
    if (args.out is None) == (args.check is None):
        parser.error("give either --out (write a site profile) or --check PROFILE")
    try:
        if args.check:
            check_partitions(read_profile(args.check), cluster_partitions(), str(args.check / "config.yaml"))
            print(f"{args.check}: every partition exists on this cluster")
            return 0
        if args.out.resolve() == args.base.resolve():
            raise ProfileError(f"--out {args.out} is the base profile itself: write the site profile elsewhere")
        partitions = dict(parse_assignment(text, "--partition") for text in args.partition)
        profile = site_profile(read_profile(args.base), account=args.account,
                               partitions={key: str(value) for key, value in partitions.items()},
                               defaults=[parse_assignment(text, "--default") for text in args.default],
                               rules=[parse_rule_assignment(text) for text in args.set])
    except ProfileError as error:
        print(f"ead.operations.slurm_profile: error: {error}", file=sys.stderr)
        return 2
    command = " ".join(["python -m ead.operations.slurm_profile", *(argv if argv is not None else sys.argv[1:])])
    header = (f"# SLURM workflow profile derived from {args.base} by\n#   {command}\n"
              f"# Use: snakemake ... --workflow-profile {args.out}\n")
    path = write_profile(profile, args.out, header)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
