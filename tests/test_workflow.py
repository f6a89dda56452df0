"""The Snakemake workflow end to end on the smoke profile, its incremental reruns, config errors and lint.

Each test works in a private copy of the workflow (Snakefile, environment.yml, workflow/, configs/) so the checkout's own
results/ and figures/ are never touched. The `ead` package comes from the installed environment.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
# Downloads (registry wheels) are shared with the rest of the test suite instead of being fetched per copy.
SMOKE = ["--configfile", "configs/smoke.yaml", "--config", f"cache_dir={ROOT / '.cache' / 'wheels'}"]


def snakemake(workdir, *args, check=True):
    result = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "2", *args], cwd=workdir,
                            capture_output=True, text=True)
    if check and result.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result


def planned_rules(workdir, *args):
    """Rule names of the jobs a dry run would execute (empty when there is nothing to do)."""
    result = snakemake(workdir, "--dry-run", *args)
    if "Nothing to be done" in result.stdout + result.stderr:
        return set()
    lines = (result.stdout + result.stderr).splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("Job stats"))
    rules = set()
    for line in lines[start + 3:]:
        fields = line.split()
        if len(fields) != 2 or not fields[1].isdigit():
            break
        if fields[0] != "total":
            rules.add(fields[0])
    return rules


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    copy = tmp_path_factory.mktemp("workflow")
    for name in ("Snakefile", "environment.yml"):
        shutil.copy(ROOT / name, copy / name)
    for folder in ("workflow", "configs"):
        shutil.copytree(ROOT / folder, copy / folder)
    return copy


@pytest.mark.slow
def test_smoke_profile_renders_every_figure_then_has_nothing_to_do(workdir):
    snakemake(workdir, *SMOKE)
    for stem in ("fig03_annealing_schedule", "fig01_entropy_by_position", "fig02_forking", "fig09_majority_scaling"):
        for fmt in ("png", "pdf"):
            path = workdir / "figures" / f"{stem}.{fmt}"
            assert path.stat().st_size > 1000, path
    base = pd.read_csv(workdir / "results" / "eval" / "tiny_policy_base.csv")
    assert set(base.metric) == {"greedy_accuracy", "pass@1", "worst@1", "pass@4", "worst@4"}
    assert (base.num_problems == 8).all() and (base.n == 4).all()
    assert (workdir / "results" / "models" / "smollm2-135m-instruct" / "model.safetensors").exists()
    for name in ("math500", "gsm8k", "mmlu", "math", "countdown"):
        assert len(pd.read_parquet(workdir / "results" / "data" / f"{name}.parquet")) > 0
    analyses = workdir / "results" / "analyses"
    entropy = pd.read_csv(analyses / "entropy_by_position.csv")
    assert entropy.position.min() == 0 and entropy.position.max() < 12 and (entropy.mean_entropy > 0).all()
    forking = pd.read_csv(analyses / "forking.csv")
    assert set(zip(forking.fork_point, forking.k)) == {(0, 1), (0, 3), (4, 1), (4, 3)}
    majority = pd.read_csv(analyses / "majority_scaling.csv")
    assert set(majority.n) == {1, 2, 3} and majority.sampler.nunique() == 3
    assert planned_rules(workdir, *SMOKE) == set()


@pytest.mark.slow
def test_editing_tau_max_reruns_only_the_schedule_and_ead_sampling_rules(workdir):
    snakemake(workdir, *SMOKE)
    config_path = workdir / "configs" / "config.yaml"
    original = config_path.read_text()
    try:
        config = yaml.safe_load(original)
        config["ead"]["tau_max"] = 1.5
        config_path.write_text(yaml.safe_dump(config))
        # the Maj@N analysis samples with the ead block's EAD schedule, so it reruns too
        assert planned_rules(workdir, *SMOKE) == {"schedule_table", "fig03_annealing_schedule", "majority_scaling",
                                                  "fig09_majority_scaling", "all"}
    finally:
        config_path.write_text(original)
    assert planned_rules(workdir, *SMOKE) == set()


@pytest.mark.slow
def test_bad_config_fails_with_one_message_and_no_traceback(workdir, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("ead:\n  tau_min: 1.5\n")
    result = snakemake(workdir, "--dry-run", "--configfile", str(bad), check=False)
    assert result.returncode != 0
    assert "Config error: ead.tau_min = 1.5 must be <= ead.tau_max = 1.2" in result.stderr
    assert "Traceback" not in result.stdout + result.stderr


@pytest.mark.slow
def test_lint_is_clean(workdir):
    result = snakemake(workdir, "--lint", check=False)
    assert result.returncode == 0, result.stdout + result.stderr
