"""A site's SLURM workflow profile derived from ours (ead.operations.slurm_profile): it keeps every resource of
ours, refuses what Snakemake would ignore, checks partitions, and knows every name the SLURM plugin reads."""

import re
from pathlib import Path

import pytest
import yaml

from ead.operations.slurm_profile import (
    KNOWN_RESOURCES,
    ProfileError,
    check_partitions,
    main,
    read_profile,
    site_profile,
    workflow_rules,
)
from tests.conftest import LOCAL_PROFILE, dry_run, planned_resources

ROOT = Path(__file__).resolve().parents[2]


PAPER_PROFILE = ROOT / "workflow" / "profiles" / "slurm"


SITE_OPTIONS = ["--account", "proj42", "--partition", "gpu=a100", "--partition", "cpu=short",
                "--set", "rl_cell_verl:runtime=2880", "--default", "mem_mb=9000"]


def expected_resources(profile: dict, rule: str) -> dict[str, str]:
    return {key: str(value) for key, value in
            {**profile["default-resources"], **profile["set-resources"].get(rule, {})}.items()}


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
