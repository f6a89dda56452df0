"""SLURM workflow profiles: a site's profile keeps every resource of ours, and the local one fits this machine.

Snakemake's command-line ``--default-resources`` / ``--set-resources`` replace the workflow profile's maps whole (the
first test shows it), so a site derives a complete profile with ``python -m ead.operations.slurm_profile``; the dry
runs check every job of the paper DAG gets exactly our resources with the site's account and partitions. The local
profile (``workflow/profiles/slurm_local``, for ``workflow/scripts/slurm_local.sh``) must request only what one node of
this machine has, never a GPU, and poll with squeue within the cluster's MinJobAge.
"""

import os
import re
from pathlib import Path

import pytest
import tomllib
import yaml
from packaging.requirements import Requirement

from ead.operations.slurm_profile import (
    KNOWN_RESOURCES,
    ProfileError,
    check_partitions,
    main,
    read_profile,
    site_profile,
    workflow_rules,
)
from tests.conftest import copy_workflow, snakemake_dry_run

ROOT = Path(__file__).resolve().parents[1]
PAPER_PROFILE = ROOT / "workflow" / "profiles" / "slurm"
LOCAL_PROFILE = ROOT / "workflow" / "profiles" / "slurm_local"
SITE_OPTIONS = ["--account", "proj42", "--partition", "gpu=a100", "--partition", "cpu=short",
                "--set", "rl_cell_verl:runtime=2880", "--default", "mem_mb=9000"]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return copy_workflow(tmp_path_factory.mktemp("workflow"))


def dry_run(workdir, *args):
    return snakemake_dry_run(workdir, *args)


def planned_resources(output: str) -> list[tuple[str, dict[str, str]]]:
    """(rule, resources) of every job a dry run lists."""
    jobs, rule = [], None
    for line in output.splitlines():
        if match := re.match(r"(?:local)?rule (\w+):$", line):
            rule = match.group(1)
        elif line.strip().startswith("resources:") and rule:
            fields = line.split("resources:", 1)[1].split(", ")
            jobs.append((rule, dict(field.strip().split("=", 1) for field in fields)))
            rule = None
    return jobs


def expected_resources(profile: dict, rule: str) -> dict[str, str]:
    return {key: str(value) for key, value in
            {**profile["default-resources"], **profile["set-resources"].get(rule, {})}.items()}


@pytest.mark.slow  # a Snakemake or verl run in a subprocess: the whole suite's, not the fast lane's
def test_command_line_resources_replace_the_profiles_maps(workdir):
    """Why the generator exists: Snakemake's own override drops the profile's runtime, memory, CPUs and GPUs."""
    output = dry_run(workdir, "--cores", "1", "--configfile", "configs/paper.yaml", "--workflow-profile",
                     "workflow/profiles/slurm", "--default-resources", "slurm_account=proj42",
                     "--set-resources", "rl_cell_verl:slurm_partition=a100")
    cells = [resources for rule, resources in planned_resources(output) if rule == "rl_cell_verl"]
    assert len(cells) == 32
    assert all("gpu" not in cell and "cpus_per_task" not in cell and "runtime" not in cell for cell in cells)


@pytest.mark.slow  # a Snakemake or verl run in a subprocess: the whole suite's, not the fast lane's
def test_a_generated_site_profile_keeps_every_paper_rules_resources(workdir, tmp_path):
    site = tmp_path / "site"
    assert main(["--out", str(site), *SITE_OPTIONS]) == 0
    ours = read_profile(PAPER_PROFILE)
    written = yaml.safe_load((site / "config.yaml").read_text())
    assert {key: value for key, value in written.items() if "resources" not in key} == \
        {key: value for key, value in ours.items() if "resources" not in key}
    jobs = planned_resources(dry_run(workdir, "--cores", "1", "--configfile", "configs/paper.yaml",
                                     "--workflow-profile", str(site)))
    rules = {rule for rule, _ in jobs}
    assert {"rl_cell_verl", "paper_model", "paper_data", "entropy_by_position", "forking", "majority_scaling",
            "rl_tables", "rl_figure", "summary"} <= rules
    assert rules <= workflow_rules()  # --set accepts every rule the paper DAG plans
    assert sum(rule == "rl_cell_verl" for rule, _ in jobs) == 32
    renamed = {"cpu": "short", "gpu": "a100"}
    for rule, resources in jobs:
        expected = expected_resources(ours, rule)
        expected["slurm_partition"] = renamed[expected["slurm_partition"]]
        expected["slurm_account"] = "proj42"
        if rule not in ours["set-resources"] or "mem_mb" not in ours["set-resources"][rule]:
            expected["mem_mb"] = "9000"  # --default changes only the rules that do not set their own
        if rule == "rl_cell_verl":
            expected["runtime"] = "2880"
        assert {key: resources.get(key) for key in expected} == expected, rule
    cells = [resources for rule, resources in jobs if rule == "rl_cell_verl"]
    assert all(cell["gpu"] == "8" and cell["cpus_per_task"] == "64" and cell["mem_mb"] == "480000" for cell in cells)


@pytest.mark.parametrize("options, message", [
    (["--partition", "gpus=a100"], "has no partition 'gpus'"),
    (["--set", "rl_cell_verl=runtime"], "expected RULE:KEY=VALUE"),
    (["--default", "mem_mb"], "expected KEY=VALUE"),
    (["--base", "workflow/profiles/nosuch"], "nosuch/config.yaml: no such file"),
])
def test_bad_site_options_give_one_clear_error(tmp_path, capsys, monkeypatch, options, message):
    monkeypatch.chdir(ROOT)
    assert main(["--out", str(tmp_path / "site"), *options]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "site").exists()


@pytest.mark.parametrize("options, unknown, known", [
    (["--set", "rl_cell_verll:runtime=100"], "no rule 'rl_cell_verll' (did you mean 'rl_cell_verl'?)",
     "; its rules: all, analysis_claims, "),
    (["--set", "rl_cell_verl:runtme=100"], "'runtme' is not a resource Snakemake or its SLURM executor reads "
     "(did you mean 'runtime'?)", "; they read: cluster, clusters, constraint, cpus_per_gpu, cpus_per_task, "),
    (["--set", "forking:gpus=2"], "'gpus' is not a resource", "(did you mean 'gpu'?)"),
    (["--default", "slurm_acount=proj42"], "'slurm_acount' is not a resource", "(did you mean 'slurm_account'?)"),
], ids=["rule", "resource", "gpus", "default"])
def test_site_options_refuse_a_rule_or_resource_snakemake_would_ignore(tmp_path, capsys, options, unknown, known):
    """A misspelt name would be written into the profile and silently ignored by Snakemake: one line names it and
    lists the known ones instead."""
    assert main(["--out", str(tmp_path / "site"), *options]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert error.startswith(f"ead.operations.slurm_profile: error: {options[0]} {options[1]}: ")
    assert unknown in error and known in error
    assert not (tmp_path / "site").exists()


def test_every_name_our_profiles_use_and_the_slurm_plugin_reads_is_known():
    for profile in (read_profile(PAPER_PROFILE), read_profile(LOCAL_PROFILE)):
        assert set(profile["set-resources"]) <= workflow_rules()
        for resources in [profile["default-resources"], *profile["set-resources"].values()]:
            assert set(resources) <= KNOWN_RESOURCES
    # rules declared inside a config's `if` and by `use rule ... as` count too
    assert {"paper_data", "verl_local_data", "rl_base_eval", "all"} <= workflow_rules()
    plugin = Path(pytest.importorskip("snakemake_executor_plugin_slurm").__file__).parent
    read = {name for path in plugin.glob("*.py") for name in
            re.findall(r"resources\.get\(\s*\"(\w+)\"|\"(\w+)\" in job\.resources", path.read_text()) for name in name}
    # threads are a rule's (threads:, --set-threads); the plugin reads them only to pick a partition
    assert read - {"", "threads"} <= KNOWN_RESOURCES, read - {"", "threads"} - KNOWN_RESOURCES


def _requirements_with_extras(project: dict, extras: list[str]) -> list[Requirement]:
    """The requirements an install of the package with ``extras`` asks for (self-referencing extras followed)."""
    found, pending, seen = [Requirement(text) for text in project["dependencies"]], list(extras), set()
    while pending:
        extra = pending.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for requirement in map(Requirement, project["optional-dependencies"][extra]):
            if requirement.name == project["name"]:
                pending += sorted(requirement.extras)
            else:
                found.append(requirement)
    return found


def test_the_default_setup_installs_the_slurm_executor_plugin():
    """``bash workflow/scripts/setup.sh`` without --tests can dry-run the paper profile's SLURM DAG: the plugin is in
    what it installs (the `pipeline` extra), at constraints.txt's version."""
    setup = (ROOT / "workflow" / "scripts" / "setup.sh").read_text()
    default_extras = re.search(r'^extras="(.*)"$', setup, re.M).group(1)
    assert 'pip install -c constraints.txt -e ".${extras}"' in setup
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    installed = _requirements_with_extras(project, [extra for extra in default_extras.strip("[]").split(",") if extra])
    plugin = [requirement for requirement in installed if requirement.name == "snakemake-executor-plugin-slurm"]
    assert len(plugin) == 1, "the default setup does not install snakemake-executor-plugin-slurm"
    pinned = re.search(r"^snakemake-executor-plugin-slurm==(\S+)", (ROOT / "constraints.txt").read_text(), re.M)
    assert pinned and plugin[0].specifier.contains(pinned.group(1))


def test_the_base_profile_is_never_overwritten(capsys):
    assert main(["--out", str(PAPER_PROFILE), "--account", "x"]) == 2
    assert "is the base profile itself" in capsys.readouterr().err
    assert "slurm_account" not in read_profile(PAPER_PROFILE)["default-resources"]


def test_site_profile_refuses_a_profile_of_another_executor(tmp_path):
    (tmp_path / "config.yaml").write_text("executor: local\n")
    with pytest.raises(ValueError, match="executor is 'local', not 'slurm'"):
        read_profile(tmp_path)
    assert site_profile(read_profile(PAPER_PROFILE)) == read_profile(PAPER_PROFILE)


def test_partition_check_names_every_missing_partition_and_where_it_is_set():
    profile = site_profile(read_profile(PAPER_PROFILE), partitions={"gpu": "a100"})
    check_partitions(profile, {"cpu", "a100"}, "site/config.yaml")
    with pytest.raises(ProfileError) as error:
        check_partitions(profile, {"cpu", "gpu"}, "site/config.yaml")
    message = str(error.value)
    assert message.startswith("site/config.yaml: slurm_partition 'a100' (set-resources.rl_cell_verl)")
    assert "(set-resources.forking)" in message and "which has cpu, gpu" in message
    assert "default-resources" not in message


def test_local_profile_polls_with_squeue_within_the_clusters_min_job_age():
    profile = read_profile(LOCAL_PROFILE)
    assert profile["slurm-status-command"] == "squeue"  # sacct needs slurmdbd, which the local cluster lacks
    script = (ROOT / "workflow" / "scripts" / "slurm_local.sh").read_text()
    min_job_age = int(re.search(r"^MIN_JOB_AGE=(\d+)", script, re.M).group(1))
    assert 3 * profile["slurm-init-seconds-before-status-checks"] <= min_job_age
    assert profile["retries"] >= 1


@pytest.mark.parametrize("targets", [
    ["--configfile", "configs/smoke.yaml"],
    ["figures/fig04_pass_worst_at_16.png", "results/claims.csv", "--configfile", "configs/verl_cpu.yaml"],
], ids=["smoke", "verl_cpu"])
@pytest.mark.slow  # a Snakemake or verl run in a subprocess: the whole suite's, not the fast lane's
def test_local_profile_requests_fit_one_node_of_this_machine(workdir, targets):
    memory_mb = int(Path("/proc/meminfo").read_text().split()[1]) // 1024 * 9 // 10  # slurm_local.sh's RealMemory
    jobs = planned_resources(dry_run(workdir, "--forceall", "--workflow-profile", str(LOCAL_PROFILE), *targets))
    assert len(jobs) > 5
    for rule, resources in jobs:
        assert int(resources["cpus_per_task"]) <= os.cpu_count(), rule
        assert int(resources["mem_mb"]) <= memory_mb, rule
        assert resources.get("gpu", "0") == "0", rule
        assert resources["slurm_partition"] == ("gpu" if rule == "rl_cell_verl" else "cpu"), rule
