"""Time the README's test command from a fresh clone, installs included, and write the docs' ``test-suite`` block
(docs/operations.md) and the README's ``test-command`` line.

What it runs, in a fresh ``git clone`` of this checkout's HEAD (``--workdir``, which must not exist yet), exactly the
two halves of the test command (README, ``.ci/run``), each timed:

1. ``bash workflow/scripts/setup.sh --tests``: both venvs and the system packages (pip's cache as it is; with
   ``--cold``, an empty pip cache of its own); what it downloaded is the bytes this machine's network interfaces
   received meanwhile (``/proc/net/dev``, loopback excluded);
2. ``.venv/bin/python -m pytest --durations=25`` (the flag only adds pytest's report of the 25 slowest tests; the vLLM
   suite, which the main suite runs in ``.venv-vllm`` beside itself, reports its own 25 slowest into its log);
   meanwhile, how many cores were busy (:class:`CoresBusy`): whether the suite's wall time is work or waits, and
   where the CPU went: each pytest process's ledger (tests/ledger.py, on by ``$EAD_TEST_LEDGER``), summed per test
   file, its ten most expensive, and every file that grew by more than a quarter against the committed ledger
   (:data:`COMMITTED_LEDGER`; ``--write-ledger`` replaces it with the run's). Before it, the machine's speed
   (benchmarks/host_speed.py); on a machine faster than :data:`SLOWER_KIND`, that kind's time derived from it.

Then, with ``--time-fast-lane``, the fast lane (:data:`FAST_LANE_COMMAND`) in the same clone (what a developer
runs between edits). ``--fast-lane-only`` times only the fast lane, in this checkout, into its own block
(``--block fast-lane``); ``--counts-only`` writes pytest's counts and says the command was not timed. The counts
come from pytest's collection. The report goes to ``--out`` and, with ``--doc``, into the block ``test-suite``; with
``--readme``, a one-line summary into its block ``test-command``.

    python benchmarks/test_suite.py --workdir /tmp/ead-test-clone --time-fast-lane \\
        --out benchmarks/results/test_suite.md --doc docs/operations.md --readme README.md --write-ledger
    python benchmarks/test_suite.py --fast-lane-only --out benchmarks/results/fast_lane.md \\
        --doc docs/operations.md --block fast-lane
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))
import host_speed  # noqa: E402
from doc_blocks import replace_block  # noqa: E402

from ead.io import atomic_path  # noqa: E402
from tests import ledger  # noqa: E402

#: pytest's last collection line: "649 tests collected in 9.1s" or "633/649 tests collected (16 deselected) in 9s".
COLLECTED = re.compile(r"^(?:(\d+)/)?(\d+) tests? collected")
#: one line of pytest's --durations report: "481.23s call     tests/test_x.py::test_y[param]"
DURATION = re.compile(r"^(\d+\.\d+)s (setup|call|teardown)\s+(\S.*)$")
#: pytest's closing line: "== 834 passed, 2 skipped, 3 warnings in 2400.12s (0:40:00) =="
CLOSING = re.compile(r"^=+ (.*?) in ([\d.]+)s")
#: The fast lane's arguments to pytest: the unit tests (no ``slow`` mark), on two pytest-xdist workers that each start
#: on a contiguous half of the collection (so a module's fixtures are mostly made once) and take over the tail of the
#: other's when idle (whole files at a time left one worker idle for the last ~15 s).
FAST_LANE = ["-m", "not slow", "-n", "2", "--dist", "worksteal"]
FAST_LANE_COMMAND = '.venv/bin/python -m pytest -m "not slow" -n 2 --dist worksteal'
#: The slower machine kind the budget must hold on (2 cores, an AVX2-only AMD EPYC), by its speed: seconds per
#: benchmarks/host_speed.py reference step, derived from its SFT jobs (800 such steps in 28.0 and 28.5 min,
#: 2026-11-28/29), not measured by host_speed.py; the derivation:
#: TESTBED.md, "the same default DAG on an AVX-512 machine at level avx2 (predictions, written during the run)".
SLOWER_KIND = ("a 2-core AVX2-only AMD EPYC", 2.1)
#: the committed per-unit ledger the run's is compared with (tests/ledger.py)
COMMITTED_LEDGER = ROOT / "benchmarks" / "results" / "test_ledger.csv"
#: what setup.sh --tests installs with the system's package manager (workflow/scripts/slurm_local.sh install)
SYSTEM_PACKAGES = "slurm-wlm, munge (Debian)"


def cpu_jiffies() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs so far (Linux's /proc/stat; idle and iowait count as not busy)."""
    fields = [int(value) for value in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return sum(fields) - idle, sum(fields)


class CoresBusy:
    """How many of the machine's cores were busy while a command ran: /proc/stat sampled every ``every`` seconds in
    a thread: the mean number of cores busy over the run and the share of the samples with under half of them busy
    (where the command left the machine idle: waits, not work)."""

    def __init__(self, every: float = 5.0):
        self.every, self.samples = every, []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self):
        cores = os.cpu_count()
        last = cpu_jiffies()
        while not self._stop.wait(self.every):
            now = cpu_jiffies()
            if now[1] > last[1]:
                self.samples.append(cores * (now[0] - last[0]) / (now[1] - last[1]))
            last = now

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def busy_core_seconds(self, seconds: float) -> float | None:
        """The mean number of busy cores times ``seconds`` (the run's wall time); None if nothing was sampled."""
        return sum(self.samples) / len(self.samples) * seconds if self.samples else None

    def summary(self) -> str:
        if not self.samples:
            return "not sampled (the run was shorter than one sampling interval)"
        cores = os.cpu_count()
        idle_share = sum(busy < cores / 2 for busy in self.samples) / len(self.samples)
        return (f"{sum(self.samples) / len(self.samples):.2f} of {cores} cores busy on average (/proc/stat every "
                f"{self.every:.0f} s), under {cores / 2:g} busy {100 * idle_share:.0f}% of the time")


def run_timed(command: list[str], cwd: Path, log: Path, env: dict) -> tuple[float, str]:
    """Run ``command`` (it must succeed), its output to ``log``; (wall seconds, output)."""
    started = time.perf_counter()
    with open(log, "w") as output:
        result = subprocess.run(command, cwd=cwd, stdout=output, stderr=subprocess.STDOUT, env=env)
    seconds = time.perf_counter() - started
    text = log.read_text(errors="replace")
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed in {cwd} (exit {result.returncode}); log {log}:\n{text[-4000:]}")
    return seconds, text


def collected(python: Path, cwd: Path, *args: str) -> int:
    """Tests pytest selects with ``args`` (its collection only: nothing runs)."""
    result = subprocess.run([str(python), "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
                            cwd=cwd, capture_output=True, text=True)
    for line in reversed(result.stdout.splitlines()):
        if match := COLLECTED.match(line.strip()):
            return int(match.group(1) or match.group(2))
    raise SystemExit(f"{python} -m pytest --collect-only {' '.join(args)}: no collection line "
                     f"(exit {result.returncode}):\n{result.stdout[-3000:]}{result.stderr[-3000:]}")


def slowest(output: str, count: int = 25) -> list[tuple[float, str, str]]:
    """(seconds, phase, test) of pytest's --durations report in ``output``, slowest first."""
    matches = [DURATION.match(line.strip()) for line in output.splitlines()]
    rows = [(float(match.group(1)), match.group(2), match.group(3)) for match in matches if match]
    return sorted(rows, key=lambda row: -row[0])[:count]


def closing_match(output: str, source: str = "the output") -> re.Match:
    """pytest's last closing line in ``output`` (:data:`CLOSING`: its summary, then its seconds)."""
    for line in reversed(output.splitlines()):
        if match := CLOSING.match(line.strip()):
            return match
    raise SystemExit(f"no pytest closing line in {source}")


def closing_line(output: str) -> str:
    """pytest's summary ("834 passed, 3 warnings") from its closing line."""
    return closing_match(output).group(1)


def vllm_wall(output: str) -> str:
    """The vLLM suite's own wall time, from pytest's closing line in its log."""
    return minutes(float(closing_match(output, "the vLLM suite's log").group(2)))


def received_bytes() -> int:
    """Bytes received so far by this machine's network interfaces, loopback excluded (Linux's /proc/net/dev)."""
    lines = Path("/proc/net/dev").read_text().splitlines()[2:]
    return sum(int(line.split(":", 1)[1].split()[0]) for line in lines if line.split(":", 1)[0].strip() != "lo")


def size_gb(path: Path) -> float:
    result = subprocess.run(["du", "-sb", str(path)], capture_output=True, text=True, check=True)
    return int(result.stdout.split()[0]) / 1e9


def minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min"


def durations_table(rows: list[tuple[float, str, str]]) -> str:
    lines = ["| s | phase | test |", "|---:|---|---|"]
    lines += [f"| {seconds:.1f} | {phase} | `{test}` |" for seconds, phase, test in rows]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", type=Path, help="where to clone (must not exist)")
    parser.add_argument("--fast-lane-only", action="store_true",
                        help="only time the fast lane in this checkout (its own block, --block fast-lane)")
    parser.add_argument("--counts-only", action="store_true",
                        help="no run: count this checkout's tests and say the command was not timed at this commit")
    parser.add_argument("--cold", action="store_true", help="an empty pip cache of the run's own")
    parser.add_argument("--time-fast-lane", action="store_true",
                        help="then time the fast lane (FAST_LANE_COMMAND) in the clone")
    parser.add_argument("--out", type=Path, required=True, help="markdown report")
    parser.add_argument("--doc", type=Path, help="Markdown file whose block --block gets the report")
    parser.add_argument("--block", default="test-suite", help="name of the marked block in --doc")
    parser.add_argument("--readme", type=Path, help="Markdown file whose block test-command gets the summary line")
    parser.add_argument("--write-ledger", action="store_true",
                        help=f"write the run's per-unit ledger over the committed one ({COMMITTED_LEDGER.name})")
    args = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.strip()
    if args.counts_only:
        return write(args, *counts_only_report(commit))
    if args.fast_lane_only:
        # the suite checks that the block is this program's report, also while it is being timed: say so first
        write(args, f"Fast lane being timed at commit `{commit}` by `benchmarks/test_suite.py --fast-lane-only`.\n",
              None)
        return write(args, fast_lane_report(commit), None)
    if args.workdir is None or args.workdir.exists():
        parser.error("--workdir: give a path for a fresh clone (it must not exist)")
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(args.workdir)], check=True)
    logs = args.workdir.parent / f"{args.workdir.name}-logs"
    logs.mkdir(exist_ok=True)
    env = {**os.environ, "EAD_VLLM_SUITE_LOG": str(logs / "vllm-suite.log")}
    cache = None
    if args.cold:
        cache = Path(tempfile.mkdtemp(prefix="ead-pip-cache-"))
        env["PIP_CACHE_DIR"] = str(cache)

    received = received_bytes()
    setup_s, _ = run_timed(["bash", "workflow/scripts/setup.sh", "--tests"], args.workdir, logs / "setup.log", env)
    downloaded = (received_bytes() - received) / 1e9
    python = args.workdir / ".venv" / "bin" / "python"
    step_s = host_speed.measure("avx2")  # the machine's speed, before the suite loads it
    env[ledger.VARIABLE] = str(logs / "ledger")
    with CoresBusy() as busy:  # what the machine did meanwhile: both suites' work, or their waits
        pytest_s, output = run_timed([str(python), "-m", "pytest", "--durations=25"], args.workdir,
                                     logs / "pytest.log", env)
    vllm_log = (logs / "vllm-suite.log").read_text(errors="replace")
    fast_s = None
    if args.time_fast_lane:
        fast_s, _ = run_timed([str(python), "-m", "pytest", *FAST_LANE, "-p", "no:cacheprovider"], args.workdir,
                              logs / "fast-lane.log", env)
    whole, fast = collected(python, args.workdir), collected(python, args.workdir, "-m", "not slow")
    vllm = collected(args.workdir / ".venv-vllm" / "bin" / "python", args.workdir, "tests/vllm")
    installed = {name: size_gb(args.workdir / name) for name in (".venv", ".venv-vllm")}
    cache_note = (f"an empty pip cache; the installs downloaded {downloaded:.1f} GB" if cache
                  else f"pip's cache as the machine had it; the installs downloaded {downloaded:.1f} GB")

    block = (
        f"Test command timed at commit `{commit}`, {dt.date.today():%Y-%m-%d}, by `benchmarks/test_suite.py` in a "
        f"fresh clone on a {host_speed.machine()}, no GPU, with {cache_note}:\n\n"
        "| part | command | tests | wall time |\n|---|---|---:|---|\n"
        f"| installs | `bash workflow/scripts/setup.sh --tests` (`.venv` {installed['.venv']:.1f} GB, `.venv-vllm` "
        f"{installed['.venv-vllm']:.1f} GB; {SYSTEM_PACKAGES}) | | {minutes(setup_s)} |\n"
        f"| whole suite | `.venv/bin/python -m pytest` ({closing_line(output)}) | {whole} | {minutes(pytest_s)} |\n"
        f"| **the test command** | both of the above (README, `.ci/run`) | {whole} | "
        f"**{minutes(setup_s + pytest_s)}** |\n"
        f"| fast lane | `{FAST_LANE_COMMAND}` | {fast} | "
        f"{minutes(fast_s) if fast_s is not None else 'not timed'} |\n"
        f"| tests/vllm (one slow test of the suite runs them in `.venv-vllm`, beside the others) | "
        f"`.venv-vllm/bin/python -m pytest tests/vllm` ({closing_line(vllm_log)}) | {vllm} | "
        "within the whole suite |\n"
        f"\nWhile the whole suite ran: {busy.summary()}; the vLLM suite beside it took "
        f"{vllm_wall(vllm_log)}.\n"
        "\nThe 25 slowest of the main suite (pytest's `--durations`; the vLLM suite's wrapper is its wait for the "
        "suite):\n\n" + durations_table(slowest(output))
        + "\nThe 25 slowest of tests/vllm (its own `--durations`, running beside the main suite):\n\n"
        + durations_table(slowest(vllm_log))
        + "\n" + speed_paragraph(step_s, setup_s, pytest_s)
        + "\n" + ledger_report(ledger.by_unit(ledger.read(logs / "ledger")), args.write_ledger,
                                busy.busy_core_seconds(pytest_s)))
    readme_line = (f"Measured at commit `{commit}` ({dt.date.today():%Y-%m-%d}, fresh clone, a {host_speed.machine()}, "
                   f"{step_s:.2f} s per reference step): the "
                   f"test command takes {minutes(setup_s + pytest_s)} ({minutes(setup_s)} of installs), installs "
                   f"{installed['.venv'] + installed['.venv-vllm']:.1f} GB of venvs ({downloaded:.1f} GB downloaded"
                   + (", with an empty pip cache" if cache else "") + f") and, as root, {SYSTEM_PACKAGES}"
                   + ("" if (slow := slower_kind_minutes(step_s, setup_s, pytest_s)) is None else
                      f"; on the slower machine kind ({SLOWER_KIND[0]}, about {SLOWER_KIND[1]} s per reference step) "
                      f"about {slow:.1f} min, derived from the speed ratio, not measured")
                   + f". A first look, the unit tests only: the fast lane, `{FAST_LANE_COMMAND}`.\n")
    write(args, block, readme_line)


def speed_paragraph(step_s: float, setup_s: float, pytest_s: float) -> str:
    """The machine's speed beside the time, and, where it is faster than :data:`SLOWER_KIND`, the suite's time there
    derived from the speed ratio (the installs, mostly downloads and disk, as they were)."""
    name, slower_s = SLOWER_KIND
    text = (f"The machine's speed: {step_s:.2f} s per reference step (`benchmarks/host_speed.py --level avx2`, "
            "measured before the suite). ")
    derived = slower_kind_minutes(step_s, setup_s, pytest_s)
    if derived is None:
        return text + f"That is the slower machine kind ({name}, about {slower_s} s per step): the time above is it.\n"
    return text + (f"This is the faster machine kind; on the slower one ({name}, about {slower_s} s per step, "
                   f"{slower_s / step_s:.2f}x as long per step) the test command would take about "
                   f"**{derived:.1f} min (derived, not measured)**: the suite's time scaled by the speed ratio, the "
                   "installs as here.\n")


def slower_kind_minutes(step_s: float, setup_s: float, pytest_s: float) -> float | None:
    """The test command's minutes on :data:`SLOWER_KIND`, derived from a faster machine's (the suite's time scaled by
    the speed ratio, the installs as measured); None where this machine is about as slow (within a quarter)."""
    slower_s = SLOWER_KIND[1]
    return None if step_s * 1.25 >= slower_s else (setup_s + pytest_s * slower_s / step_s) / 60


def ledger_report(units: list[dict], write_ledger: bool, busy_core_s: float | None = None) -> str:
    """The suite's CPU by unit (tests/ledger.py): the total (beside ``busy_core_s``, what /proc/stat saw the cores
    do meanwhile), the ten most expensive units, and every unit that grew by more than a quarter against the
    committed ledger; with ``write_ledger``, the run's ledger replaces it."""
    total = sum(unit["core_s"] for unit in units)
    per_suite = {suite: sum(unit["core_s"] for unit in units if unit["suite"] == suite) for suite in ("main", "vllm")}
    machine = ("" if busy_core_s is None else
               f" The cores were busy for {busy_core_s / 60:.1f} core-minutes meanwhile (/proc/stat); what the ledger "
               "lacks of it is mostly processes no test waits for (Ray's workers and the vLLM engines they start in "
               "the verl runs) and the machine's own.")
    lines = [f"Where the suite's CPU went (core-seconds: user and system time of each test and of the processes it "
             f"waited for, `tests/ledger.py`): **{total / 60:.1f} core-minutes**, {per_suite['main'] / 60:.1f} in the "
             f"main suite and {per_suite['vllm'] / 60:.1f} in the vLLM suite.{machine} The ten most expensive units "
             "(a test file's tests and the fixtures it defines; a shared fixture's cost is its defining file's):\n",
             "| core-s | share | suite | unit | tests |", "|---:|---:|---|---|---:|"]
    lines += [f"| {unit['core_s']:.0f} | {100 * unit['core_s'] / total:.0f}% | {unit['suite']} | `{unit['unit']}` | "
              f"{unit['tests']} |" for unit in units[:10]]
    if COMMITTED_LEDGER.exists():
        grew = ledger.grown(units, ledger.read_units(COMMITTED_LEDGER))
        lines.append("\nAgainst the committed ledger (`benchmarks/results/test_ledger.csv`): " + (
            "; ".join(f"`{unit}` ({suite}) grew from {before:.0f} to {now:.0f} core-s" for suite, unit, before, now
                      in grew) + "." if grew else "no unit grew by more than a quarter."))
    else:
        lines.append("\nNo committed ledger to compare with (`benchmarks/results/test_ledger.csv`).")
    if write_ledger:
        ledger.write(COMMITTED_LEDGER, units, ledger.UNIT_COLUMNS)
    return "\n".join(lines) + "\n"


def fast_lane_report(commit: str) -> str:
    """The fast lane timed in this checkout (its venv as it is), with pytest's 25 slowest."""
    python = ROOT / ".venv" / "bin" / "python"
    with tempfile.TemporaryDirectory(prefix="ead-fast-lane-") as directory:
        seconds, output = run_timed([str(python), "-m", "pytest", *FAST_LANE, "-p", "no:cacheprovider",
                                     "--durations=25"], ROOT, Path(directory) / "fast-lane.log", dict(os.environ))
    return (f"Fast lane timed at commit `{commit}`, {dt.date.today():%Y-%m-%d}, by `benchmarks/test_suite.py "
            f"--fast-lane-only` on a {host_speed.machine()} (nothing else running): "
            f"`{FAST_LANE_COMMAND}`, {closing_line(output)}, **{minutes(seconds)}** ({seconds:.0f} s). "
            "Its 25 slowest (pytest's `--durations`):\n\n" + durations_table(slowest(output)))


def counts_only_report(commit: str) -> tuple[str, str]:
    """(block, README line) of a checkout whose test command was not timed: pytest's counts only."""
    python = ROOT / ".venv" / "bin" / "python"
    whole, fast = collected(python, ROOT), collected(python, ROOT, "-m", "not slow")
    vllm = collected(ROOT / ".venv-vllm" / "bin" / "python", ROOT, "tests/vllm")
    block = (f"Test suite at commit `{commit}`, counted {dt.date.today():%Y-%m-%d} by `benchmarks/test_suite.py "
             "--counts-only` (pytest's collection; the command was not timed at this commit):\n\n"
             "| part | command | tests |\n|---|---|---:|\n"
             f"| whole suite | `.venv/bin/python -m pytest` | {whole} |\n"
             f"| fast lane | `{FAST_LANE_COMMAND}` | {fast} |\n"
             f"| tests/vllm (run by one slow test of the suite in `.venv-vllm`) | "
             f"`.venv-vllm/bin/python -m pytest tests/vllm` | {vllm} |\n")
    readme_line = (f"The test command was not timed at commit `{commit}` ({whole} tests); `benchmarks/test_suite.py` "
                   f"times it from a fresh clone.\n")
    return block, readme_line


def write(args, block: str, readme_line: str | None) -> None:
    with atomic_path(args.out) as tmp:
        Path(tmp).write_text(f"# Test command\n\nCommand: `python {' '.join(sys.argv)}`\n\n{block}\n"
                             + (f"README line:\n\n{readme_line}" if readme_line else ""))
    if args.doc:
        replace_block(args.doc, args.block, block)
    if args.readme and readme_line:
        replace_block(args.readme, "test-command", readme_line)
    print(block)
    if readme_line:
        print(readme_line)


if __name__ == "__main__":
    main()
