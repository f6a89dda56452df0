"""The workflow profiles (profiles/default, workflow/profiles/): the default profile reruns incomplete jobs and
shows a failed job's log, command-line resources replace the profiles' maps, the local SLURM profile fits this
machine, the paper profile's GPUs are verl's, and the default set-up installs the SLURM executor plugin."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib
import yaml
from packaging.requirements import Requirement

from tests.conftest import (
    LOCAL_PROFILE,
    PAPER,
    dry_run,
    planned_resources,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # a Snakemake or verl run in a subprocess: the whole suite's, not the fast lane's
def test_the_default_workflow_profile_reruns_incomplete_jobs_and_can_be_turned_off():
    """profiles/default/config.yaml is loaded by Snakemake itself (so an interrupted run's incomplete outputs are rerun
    by the next plain command); `--workflow-profile none` still works."""
    assert yaml.safe_load((ROOT / "profiles" / "default" / "config.yaml").read_text()) == {
        "rerun-incomplete": True, "show-failed-logs": True}
    for extra, loaded in (([], True), (["--workflow-profile", "none"], False)):
        result = subprocess.run([sys.executable, "-m", "snakemake", "results/data/countdown.parquet", "-n", "--cores",
                                 "1", *extra, "--configfile", "configs/smoke.yaml"], cwd=ROOT,
                                capture_output=True, text=True)
        assert result.returncode == 0, result.stderr[-2000:]
        assert ("Using workflow specific profile profiles/default" in result.stdout + result.stderr) is loaded


#: Every workflow profile a run may use: the one Snakemake loads by itself, and those that replace it.
WORKFLOW_PROFILES = [ROOT / "profiles" / "default", ROOT / "workflow" / "profiles" / "slurm",
                     ROOT / "workflow" / "profiles" / "slurm_local"]


@pytest.mark.parametrize("profile", WORKFLOW_PROFILES, ids=lambda path: path.name)
def test_every_workflow_profile_prints_a_failed_jobs_log_on_the_console(profile):
    """A job's error (a TableError naming file, column and line) is in its log only; Snakemake's console would show
    the job's command line and "check log file(s)" instead."""
    from snakemake.cli import get_argument_parser

    assert yaml.safe_load((profile / "config.yaml").read_text())["show-failed-logs"] is True
    assert "--show-failed-logs" in get_argument_parser()._option_string_actions  # a key this Snakemake knows


@pytest.mark.slow  # a Snakemake or verl run in a subprocess: the whole suite's, not the fast lane's
def test_the_default_profile_shows_a_failed_jobs_error_on_the_console(tmp_path):
    """A one-rule workflow beside a copy of profiles/default: the error its job writes to its log reaches the console.
    The shell command prints the message through printf, so the command line Snakemake echoes does not hold it."""
    (tmp_path / "Snakefile").write_text(
        'rule fail:\n'
        '    output: "never.txt"\n'
        '    log: "fail.log"\n'
        """    shell: "printf 'Table error: something %s' specific > {log}; exit 1"\n""")
    (tmp_path / "profiles" / "default").mkdir(parents=True)
    (tmp_path / "profiles" / "default" / "config.yaml").write_bytes(
        (ROOT / "profiles" / "default" / "config.yaml").read_bytes())
    environment = {name: value for name, value in os.environ.items() if name != "SNAKEMAKE_PROFILE"}
    for extra, shown in (([], True), (["--workflow-profile", "none"], False)):
        result = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "1", *extra], cwd=tmp_path,
                                capture_output=True, text=True, env=environment, timeout=120)
        assert result.returncode == 1, result.stdout + result.stderr
        console = result.stdout + result.stderr
        assert "Error in rule fail" in console
        assert ("Table error: something specific" in console) is shown, console


@pytest.mark.slow  # a Snakemake or verl run in a subprocess: the whole suite's, not the fast lane's
def test_command_line_resources_replace_the_profiles_maps(workdir):
    """Why the generator exists: Snakemake's own override drops the profile's runtime, memory, CPUs and GPUs."""
    output = dry_run(workdir, "--cores", "1", "--configfile", "configs/paper.yaml", "--workflow-profile",
                     "workflow/profiles/slurm", "--default-resources", "slurm_account=proj42",
                     "--set-resources", "rl_cell_verl:slurm_partition=a100")
    cells = [resources for rule, resources in planned_resources(output) if rule == "rl_cell_verl"]
    assert len(cells) == 32
    assert all("gpu" not in cell and "cpus_per_task" not in cell and "runtime" not in cell for cell in cells)


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


def test_slurm_profile_requests_the_gpus_verl_is_told_to_use():
    profile = yaml.safe_load((ROOT / "workflow" / "profiles" / "slurm" / "config.yaml").read_text())
    assert profile["executor"] == "slurm"
    cell_resources = profile["set-resources"]["rl_cell_verl"]
    verl = PAPER["rl"]["verl"]
    assert cell_resources["gpu"] == verl["n_gpus_per_node"] * verl["nnodes"]
    assert cell_resources["nodes"] == verl["nnodes"]
    assert "gpu" not in profile["default-resources"]  # only the cell rule and the analyses take GPUs
    assert {"paper_model", "paper_data"} <= set(profile["set-resources"])
    for analysis in ("entropy_by_position", "forking", "majority_scaling"):  # vLLM shards a model over its GPUs
        assert profile["set-resources"][analysis]["gpu"] == PAPER["analyses"]["vllm"]["tensor_parallel_size"]
