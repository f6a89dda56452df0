"""The code lints clean: ruff with the project's configuration (pyproject.toml, [tool.ruff]) over the whole tree.

The same check a reviewer runs: `.venv/bin/ruff check .`
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_finds_nothing():
    ruff = Path(sys.executable).parent / "ruff"
    assert ruff.exists(), f"{ruff} is missing: run `bash workflow/scripts/setup.sh --tests` (ruff is a test extra)"
    result = subprocess.run([str(ruff), "check", "--no-cache", "--output-format", "concise", "."], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-2000:]
