"""Size (and, when asked, wall time) of the test suite, written into the docs' ``test-suite`` block.

Counts come from pytest's own collection: the whole suite (the README's test command runs it), the fast lane
(``-m "not slow"``) and tests/vllm, which ``tests/test_vllm_suite.py`` runs inside ``.venv-vllm`` as one test of the
main suite. With ``--time-fast-lane`` / ``--time-vllm`` it also runs that part (the vLLM suite runs real verl
trainings: the longer of the two) and reports its wall time; without, the block says it was not timed. The installs
of the test command are not timed here.

    python benchmarks/test_suite.py --out benchmarks/results/test_suite.md --doc docs/operations.md --time-fast-lane
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from doc_blocks import replace_block  # noqa: E402

from ead.io import atomic_path  # noqa: E402

MAIN_PYTHON = ROOT / ".venv" / "bin" / "python"
VLLM_PYTHON = ROOT / ".venv-vllm" / "bin" / "python"
#: pytest's last collection line: "649 tests collected in 9.1s" or "633/649 tests collected (16 deselected) in 9s".
COLLECTED = re.compile(r"^(?:(\d+)/)?(\d+) tests? collected")


def count(python: Path, *args: str) -> int:
    """Tests pytest selects with ``args`` (its collection only: nothing runs)."""
    result = subprocess.run([str(python), "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
                            cwd=ROOT, capture_output=True, text=True)
    for line in reversed(result.stdout.splitlines()):
        if match := COLLECTED.match(line.strip()):
            return int(match.group(1) or match.group(2))
    raise SystemExit(f"{python} -m pytest --collect-only {' '.join(args)}: no collection line "
                     f"(exit {result.returncode}):\n{result.stdout[-3000:]}{result.stderr[-3000:]}")


def timed(python: Path, *args: str) -> float:
    """Wall seconds of a pytest run that must pass."""
    started = time.perf_counter()
    result = subprocess.run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], cwd=ROOT)
    if result.returncode != 0:
        raise SystemExit(f"pytest {' '.join(args)} failed (exit {result.returncode}): no time is reported")
    return time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True, help="markdown report")
    parser.add_argument("--doc", type=Path, help="Markdown file whose block --block gets the report")
    parser.add_argument("--block", default="test-suite", help="name of the marked block in --doc")
    parser.add_argument("--time-fast-lane", action="store_true", help='also run pytest -m "not slow", timed')
    parser.add_argument("--time-vllm", action="store_true", help="also run tests/vllm in .venv-vllm, timed")
    args = parser.parse_args()

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.strip()
    whole, fast = count(MAIN_PYTHON), count(MAIN_PYTHON, "-m", "not slow")
    vllm = count(VLLM_PYTHON, "tests/vllm")
    fast_time = f"{timed(MAIN_PYTHON, '-m', 'not slow') / 60:.1f} min" if args.time_fast_lane else "not timed"
    vllm_time = f"{timed(VLLM_PYTHON, 'tests/vllm') / 60:.1f} min" if args.time_vllm else "not timed"
    block = (f"Test suite at commit `{commit}`, counted {dt.date.today():%Y-%m-%d} by `benchmarks/test_suite.py` "
             f"(pytest's collection):\n\n"
             "| part | command | tests | wall time on this 2-core machine |\n|---|---|---:|---|\n"
             f"| whole suite (the test command) | `.venv/bin/python -m pytest` | {whole} | not timed here |\n"
             f"| fast lane | `.venv/bin/python -m pytest -m \"not slow\"` | {fast} | {fast_time} |\n"
             f"| slow tests | the rest (smoke workflow, kill-and-resume, the vLLM suite) | {whole - fast} | |\n"
             f"| tests/vllm (one slow test of the suite runs them) | `.venv-vllm/bin/python -m pytest tests/vllm` "
             f"| {vllm} | {vllm_time} |\n")
    with atomic_path(args.out) as tmp:
        Path(tmp).write_text(f"# Test suite\n\nCommand: `python benchmarks/test_suite.py --out {args.out}`\n\n{block}")
    if args.doc:
        replace_block(args.doc, args.block, block)
    print(block)


if __name__ == "__main__":
    main()
