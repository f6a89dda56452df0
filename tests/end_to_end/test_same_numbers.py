"""The same commit gives the same bits on every machine at the declared CPU level (ead.numerics), and the run's
fingerprint (ead.fingerprint) says where two runs part.

* The smoke run's fingerprint equals the committed one (tests/fixtures/smoke_fingerprint.csv), stage by stage; a
  mismatch names the first stage that diverged. A change meant to alter the smoke run's numbers regenerates it on
  purpose: run the smoke profile (`snakemake --cores all --configfile configs/smoke.yaml`), then
      cp runs/smoke/results/fingerprint.csv tests/fixtures/smoke_fingerprint.csv
* The first stages of the smoke DAG (data, SFT, sharpening, step-0 evaluation, one RL cell), rerun with 2 torch
  threads per job instead of 1, give the smoke run's bits at avx2; at another kernel level (default) they give other
  weights, so the declaration is what holds them; and at that level a machine whose MKL may use only SSE4.2 (an older
  CPU) gives the same bits as this one. (At level default, 2 threads per job changed one training metric, ppo_kl, in
  its last bits: the thread count is part of the declaration, numerics.threads.)
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ead.fingerprint import digest_files, first_divergence
from ead.io import read_table
from ead.tables import FINGERPRINT
from tests.conftest import WORKFLOW_ROOT, copy_workflow

FIXTURE = WORKFLOW_ROOT / "tests" / "fixtures" / "smoke_fingerprint.csv"
SMOKE_ROOT = Path("runs") / "smoke"
CELL = "results/rl/tiny1m_sharp/dapo/tau1.0/n4/seed0/eval.csv"
#: What the partial runs build, and the files of it the fingerprint digests.
TARGETS = ["results/models/tiny1m_sharp", CELL]
PARTIAL_INPUTS = ["results/data/countdown.parquet", "results/models/tiny1m", "results/models/tiny1m_sharp",
                  "results/rl/base/tiny1m_sharp/eval.csv", CELL]

pytestmark = pytest.mark.slow


def test_the_smoke_runs_fingerprint_is_the_committed_one(smoke_run):
    current = FINGERPRINT.read(smoke_run / SMOKE_ROOT / "results" / "fingerprint.csv")
    reference = FINGERPRINT.read(FIXTURE)
    assert set(current["cpu_level"]) == set(reference["cpu_level"]) == {"avx2"}
    divergence = first_divergence(reference, current)
    assert divergence is None, f"the smoke run's numbers moved: {divergence} (module docstring: how to regenerate)"
    assert set(current["path"]) == set(reference["path"])


def partial_run(directory: Path, config: list[str], environment: dict | None = None):
    """The first stages of the smoke DAG in a fresh copy of the workflow, with ``config`` pairs added; their
    fingerprint rows."""
    directory.mkdir()
    copy_workflow(directory)
    pairs = [f"cache_dir={WORKFLOW_ROOT / '.cache' / 'wheels'}", *config]
    result = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "2", *TARGETS, "--configfile",
                             "configs/smoke.yaml", "--config", *pairs], cwd=directory, capture_output=True,
                            text=True, env={**os.environ, **(environment or {})}, timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return digest_files(PARTIAL_INPUTS, root=directory / SMOKE_ROOT)


def test_threads_and_an_older_cpu_keep_the_bits_and_another_level_does_not(smoke_run, tmp_path):
    reference = digest_files(PARTIAL_INPUTS, root=smoke_run / SMOKE_ROOT)

    two_threads = partial_run(tmp_path / "threads2", ["numerics__threads=2"])
    assert first_divergence(reference, two_threads) is None

    default_level = partial_run(tmp_path / "default", ["numerics__cpu_level=default"])
    divergence = first_divergence(reference, default_level)
    assert divergence is not None and divergence.startswith("stage 'policies' diverged first"), divergence
    steps = read_table(tmp_path / "default" / SMOKE_ROOT / CELL.replace("eval.csv", "steps.csv"))
    assert set(steps["cpu_level"]) == {"default"}  # every table records the level its job ran at

    older_cpu = partial_run(tmp_path / "default_sse", ["numerics__cpu_level=default"],
                            {"MKL_ENABLE_INSTRUCTIONS": "SSE4_2"})
    assert first_divergence(default_level, older_cpu) is None
