"""The test suite's CPU ledger (tests/ledger.py): a pytest session with it on records each test's and each shared
fixture's core-seconds (its own and its waited-for children's), a shared fixture once and out of the test that set it
up, and a pytest-xdist controller does not count its workers twice; the reader refuses a damaged file; the comparison
names what grew."""

import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests import ledger

ROOT = Path(__file__).resolve().parents[2]
SPIN_S = 0.4

TEST_FILE = f'''
import subprocess, sys, time
import pytest

def spin(seconds):
    deadline = time.process_time() + seconds
    while time.process_time() < deadline:
        pass

@pytest.fixture(scope="module")
def shared():
    spin({SPIN_S})

def test_sets_up_the_shared_fixture(shared):
    pass

def test_uses_it_again(shared):
    pass

def test_spins_itself():
    spin({SPIN_S})

def test_waits_for_a_spinning_child():
    subprocess.run([sys.executable, "-c",
                    "import time\\nd = time.process_time() + {SPIN_S}\\nwhile time.process_time() < d: pass"],
                   check=True)
'''

CONFTEST = '''
import os
from pathlib import Path
from tests import ledger

def pytest_configure(config):
    config.pluginmanager.register(ledger.Ledger(Path(os.environ[ledger.VARIABLE])), "ead-test-ledger")
'''


def run_with_ledger(tmp_path: Path, *args: str) -> list[dict]:
    project, folder = tmp_path / "project", tmp_path / "ledger"
    (project / "tests").mkdir(parents=True)
    (project / "conftest.py").write_text(CONFTEST)
    (project / "tests" / "test_spin.py").write_text(textwrap.dedent(TEST_FILE))
    env = {**os.environ, ledger.VARIABLE: str(folder), "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir",
                             str(project), *args, "tests"], cwd=project, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    return ledger.read(folder)


def named(rows: list[dict], suffix: str) -> dict:
    (row,) = [row for row in rows if row["name"].endswith(suffix)]
    return row


def test_each_test_and_the_shared_fixture_get_their_own_core_seconds(tmp_path):
    rows = run_with_ledger(tmp_path)
    assert {row["suite"] for row in rows} == {"main"}
    fixture = named(rows, "::shared")
    assert fixture["kind"] == "fixture" and fixture["unit"] == "tests/test_spin.py"
    assert fixture["core_s"] >= 0.9 * SPIN_S
    # the fixture's time is its row's, not the test's that happened to set it up
    assert named(rows, "::test_sets_up_the_shared_fixture")["core_s"] < 0.5 * SPIN_S
    assert named(rows, "::test_spins_itself")["core_s"] >= 0.9 * SPIN_S
    waits = named(rows, "::test_waits_for_a_spinning_child")
    assert waits["core_s"] >= 0.9 * SPIN_S and waits["unit"] == "tests/test_spin.py"
    (session,) = [row for row in rows if row["kind"] == "session"]
    assert session["unit"] == "session" and session["core_s"] > 0  # at least the imports and collection

    units = {unit["unit"]: unit for unit in ledger.by_unit(rows)}
    assert units["tests/test_spin.py"]["tests"] == 4
    assert units["tests/test_spin.py"]["core_s"] == pytest.approx(
        sum(row["core_s"] for row in rows if row["unit"] == "tests/test_spin.py"), abs=0.1)


def test_an_xdist_controller_does_not_count_its_workers_again(tmp_path):
    pytest.importorskip("xdist")
    rows = run_with_ledger(tmp_path, "-n", "2")
    sessions = [row for row in rows if row["kind"] == "session"]
    assert len(sessions) == 3  # the controller and two workers, one file each
    work = sum(row["core_s"] for row in rows if row["kind"] != "session")
    assert work >= 2.7 * SPIN_S
    # the controller reaps its workers: counting its children would add all of their time (imports included) again
    assert min(row["core_s"] for row in sessions) < work


def write_rows(folder: Path, rows: list[dict]) -> Path:
    path = folder / "ledger-1.csv"
    ledger.write(path, rows)
    return path


def row(**values) -> dict:
    return {"kind": "test", "name": "tests/test_a.py::test_x", "unit": "tests/test_a.py", "suite": "main",
            "core_s": 1.0, "wall_s": 1.0, **values}


def test_the_reader_leaves_the_vllm_wrapper_out_and_refuses_damage_naming_file_and_line(tmp_path):
    write_rows(tmp_path, [row(), row(name=ledger.VLLM_WRAPPER, unit="tests/end_to_end/test_vllm_suite.py",
                                     core_s=900.0)])
    assert [r["name"] for r in ledger.read(tmp_path)] == ["tests/test_a.py::test_x"]

    path = write_rows(tmp_path, [row(), row(core_s=math.nan)])
    with pytest.raises(ValueError, match=rf"{path}:3: core_s 'nan' is not a non-negative number"):
        ledger.read(tmp_path)
    write_rows(tmp_path, [row(kind="module")])
    with pytest.raises(ValueError, match=r"ledger-1.csv:2: kind 'module'"):
        ledger.read(tmp_path)
    path.write_text("kind,name,core_s\ntest,x,1\n")
    with pytest.raises(ValueError, match="header"):
        ledger.read(tmp_path)
    with pytest.raises(FileNotFoundError, match=ledger.VARIABLE):
        ledger.read(tmp_path / "empty")


def test_the_comparison_names_what_grew_by_more_than_a_quarter_and_what_is_new(tmp_path):
    units = [{"suite": "main", "unit": "a", "tests": 1, "core_s": 130.0},   # +30%: named
             {"suite": "main", "unit": "b", "tests": 1, "core_s": 120.0},   # +20%: not
             {"suite": "vllm", "unit": "c", "tests": 1, "core_s": 50.0},    # new: named
             {"suite": "main", "unit": "d", "tests": 1, "core_s": 5.0}]     # new but below the floor
    path = tmp_path / "units.csv"
    ledger.write(path, [{"suite": "main", "unit": "a", "tests": 1, "core_s": 100.0},
                        {"suite": "main", "unit": "b", "tests": 1, "core_s": 100.0}], ledger.UNIT_COLUMNS)
    committed = ledger.read_units(path)
    assert ledger.grown(units, committed) == [("vllm", "c", 0.0, 50.0), ("main", "a", 100.0, 130.0)]
    path.write_text("suite,unit,tests,core_s\nmain,a,1,-3\n")
    with pytest.raises(ValueError, match=r"units.csv:2: core_s '-3'"):
        ledger.read_units(path)
