"""The test suite's CPU ledger: core-seconds per test and per shared fixture, so that the test command's time can be
told apart by where its work goes (benchmarks/test_suite.py writes the table and compares it with the committed one).

A pytest session records it when ``$EAD_TEST_LEDGER`` names a folder (tests/conftest.py registers :class:`Ledger`);
each pytest process (the main session, each pytest-xdist worker, the vLLM suite in ``.venv-vllm``, which inherits the
variable) writes its own ``ledger-<pid>.csv`` there at its end. A row's core-seconds are the user and system CPU time
of the process and of the children it waited for (``getrusage``: the Snakemake runs, the trainers, the installs a test
starts) between the row's start and end, so a process that no one waits for (a daemon left running) is not counted.
The cost of a fixture scoped wider than a function is its own row (``kind`` ``fixture``), taken out of the test that
happened to set it up, so a shared run is counted once and named. What no row holds (collection, imports, the
session's end) is the process's ``session`` row.

The columns (:data:`COLUMNS`) are one schema for the writer (:class:`Ledger`), the reader (:func:`read`) and the
tests (tests/repository/test_ledger.py); the per-unit totals (:data:`UNIT_COLUMNS`, :func:`by_unit`) are what
benchmarks/test_suite.py commits and compares (:func:`grown`).
"""

from __future__ import annotations

import csv
import inspect
import math
import os
import resource
import sys
import time
from pathlib import Path

import pytest

from ead.io import atomic_path

#: kind (test, fixture, session), name (a test's node id; a fixture's "<where it is defined>::<name>"; the session's
#: Python), unit (what the ledger adds up: a test's or fixture's file; the session's "session"), suite (main, or
#: vllm for the suite in .venv-vllm), core_s (CPU seconds of the process and its waited-for children), wall_s
COLUMNS = ("kind", "name", "unit", "suite", "core_s", "wall_s")
KINDS = ("test", "fixture", "session")
#: the variable that switches the ledger on and names its folder
VARIABLE = "EAD_TEST_LEDGER"
#: the main suite's test that waits for the vLLM suite: its children's time is the vLLM suite's, which that suite's
#: own ledger holds row by row, so the reader leaves this row out
VLLM_WRAPPER = "tests/end_to_end/test_vllm_suite.py::test_vllm_processor_suite_passes_in_the_vllm_venv"


def core_seconds() -> float:
    """CPU seconds (user + system) of this process and of every child it has waited for, so far."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def own_seconds() -> float:
    """CPU seconds (user + system) of this process alone, so far."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def is_xdist_controller(config) -> bool:
    """Whether this process hands the tests to pytest-xdist workers instead of running them."""
    return not hasattr(config, "workerinput") and getattr(config.option, "dist", "no") != "no"


def suite_name() -> str:
    """"vllm" in the vLLM suite's venv (.venv-vllm), "main" elsewhere."""
    return "vllm" if Path(sys.prefix).name == ".venv-vllm" else "main"


class Ledger:
    """The pytest plugin that records the rows; one per process, written at the session's end to ``folder``."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.rows: list[dict] = []
        self.suite = suite_name()
        self.started = time.perf_counter()
        self._fixtures_in_test = 0.0

    def _row(self, kind: str, name: str, unit: str, core_s: float, wall_s: float) -> float:
        self.rows.append({"kind": kind, "name": name, "unit": unit, "suite": self.suite, "core_s": round(core_s, 3),
                          "wall_s": round(wall_s, 3)})
        return core_s

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        self._fixtures_in_test = 0.0
        core, wall = core_seconds(), time.perf_counter()
        yield
        spent = core_seconds() - core - self._fixtures_in_test
        self._row("test", item.nodeid, item.nodeid.split("::")[0], spent, time.perf_counter() - wall)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_fixture_setup(self, fixturedef, request):
        if fixturedef.scope == "function":
            yield
            return
        core, wall = core_seconds(), time.perf_counter()
        yield
        where = fixture_home(fixturedef.func, request.config.rootpath)
        self._fixtures_in_test += self._row("fixture", f"{where}::{fixturedef.argname}", where,
                                            core_seconds() - core, time.perf_counter() - wall)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session):
        recorded = sum(row["core_s"] for row in self.rows)
        # getrusage counts from the process's start (its imports and collection included); a pytest-xdist controller
        # waits for its workers, whose own ledgers hold their time: its own CPU only
        spent = own_seconds() if is_xdist_controller(session.config) else core_seconds()
        self._row("session", sys.executable, "session", max(spent - recorded, 0.0), time.perf_counter() - self.started)
        write(self.folder / f"ledger-{os.getpid()}.csv", self.rows)


def fixture_home(function, root: Path) -> str:
    """The test file or conftest.py that defines a fixture, relative to the repository; a fixture of pytest's own or
    of a plugin: "<package>/file.py"."""
    path = Path(inspect.getfile(inspect.unwrap(function))).resolve()
    if path.is_relative_to(root / "tests"):
        return path.relative_to(root).as_posix()
    return f"<{path.parent.name}>/{path.name}"


def write(path: Path, rows: list[dict], columns: tuple[str, ...] = COLUMNS) -> None:
    """The rows as a CSV of ``columns`` (:data:`COLUMNS`, or :data:`UNIT_COLUMNS` for the per-unit ledger),
    atomically (:func:`ead.io.atomic_path`)."""
    with atomic_path(path) as temporary, open(temporary, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)


def seconds(value, path: Path, line: int, column: str) -> float:
    """``value`` as a number of seconds; ValueError naming file, line and column unless it is one >= 0."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if not number >= 0:  # also NaN
        raise ValueError(f"{path}:{line}: {column} {value!r} is not a non-negative number")
    return number


def read(folder: Path) -> list[dict]:
    """Every process's rows in ``folder`` (its ``ledger-*.csv``), the vLLM suite's wrapper left out; refuses a file
    whose header is not :data:`COLUMNS` or whose row has a kind outside :data:`KINDS` or a time that is not a
    non-negative number, naming file and line."""
    paths = sorted(Path(folder).glob("ledger-*.csv"))
    if not paths:
        raise FileNotFoundError(f"{folder}: no ledger-*.csv (was the suite run with ${VARIABLE} set to it?)")
    rows = []
    for path in paths:
        with open(path, newline="") as handle:
            reader = csv.DictReader(handle)
            if tuple(reader.fieldnames or ()) != COLUMNS:
                raise ValueError(f"{path}: header {reader.fieldnames}, expected {list(COLUMNS)}")
            for line, row in enumerate(reader, start=2):
                if row["kind"] not in KINDS:
                    raise ValueError(f"{path}:{line}: kind {row['kind']!r} is none of {KINDS}")
                for column in ("core_s", "wall_s"):
                    row[column] = seconds(row[column], path, line, column)
                if row["name"] != VLLM_WRAPPER:
                    rows.append(row)
    return rows


#: the committed per-unit ledger (benchmarks/results/test_ledger.csv): suite, unit, tests (how many of its tests
#: ran), core_s (their and its fixtures' core-seconds)
UNIT_COLUMNS = ("suite", "unit", "tests", "core_s")


def by_unit(rows: list[dict]) -> list[dict]:
    """Core-seconds per (suite, unit): each test file's tests and the fixtures it defines, and each suite's session
    remainder; most expensive first."""
    totals: dict[tuple[str, str], dict] = {}
    for row in rows:
        unit = totals.setdefault((row["suite"], row["unit"]),
                                 {"suite": row["suite"], "unit": row["unit"], "tests": 0, "core_s": 0.0})
        unit["tests"] += row["kind"] == "test"
        unit["core_s"] += row["core_s"]
    return sorted(({**unit, "core_s": round(unit["core_s"], 1)} for unit in totals.values()),
                  key=lambda unit: -unit["core_s"])


def read_units(path: Path) -> dict[tuple[str, str], float]:
    """Core-seconds per (suite, unit) of a per-unit ledger; refuses another header or a value that is not a
    non-negative number, naming file and line."""
    with open(path, newline="") as handle:
        reader = csv.DictReader(handle)
        if tuple(reader.fieldnames or ()) != UNIT_COLUMNS:
            raise ValueError(f"{path}: header {reader.fieldnames}, expected {list(UNIT_COLUMNS)}")
        units = {}
        for line, row in enumerate(reader, start=2):
            units[(row["suite"], row["unit"])] = seconds(row["core_s"], path, line, "core_s")
    return units


def grown(now: list[dict], committed: dict[tuple[str, str], float], share: float = 0.25,
          floor_s: float = 10.0) -> list[tuple[str, str, float, float]]:
    """(suite, unit, committed core-seconds, now) of every unit that grew by more than ``share`` of its committed
    core-seconds, or is new, and costs at least ``floor_s`` now (below it, a unit's time is noise); largest growth
    first."""
    rows = [(unit["suite"], unit["unit"], committed.get((unit["suite"], unit["unit"]), 0.0), unit["core_s"])
            for unit in now]
    rows = [row for row in rows if row[3] >= floor_s and row[3] > (1 + share) * row[2]]
    return sorted(rows, key=lambda row: row[2] - row[3])
