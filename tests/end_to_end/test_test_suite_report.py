"""The test command's report (benchmarks/test_suite.py): how busy the cores were while the suite ran, and the vLLM
suite's own wall time from its log."""

import importlib.util
import os
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("test_suite_report", REPO / "benchmarks" / "test_suite.py")
test_suite = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(test_suite)


def test_cores_busy_samples_a_spinning_thread():
    """One spinning thread: every sample sees at least most of a core busy (the machine's other work can only add),
    none more than the machine has."""
    with test_suite.CoresBusy(every=0.2) as busy:
        deadline = time.perf_counter() + 1.5
        while time.perf_counter() < deadline:
            pass
    assert len(busy.samples) >= 3  # about 7; fewer where a loaded machine delays the sampling thread
    assert all(0 <= sample <= os.cpu_count() + 1e-9 for sample in busy.samples)
    assert sorted(busy.samples)[len(busy.samples) // 2] >= 0.8


def test_the_summary_is_the_mean_and_the_share_under_half_the_cores(monkeypatch):
    monkeypatch.setattr(test_suite.os, "cpu_count", lambda: 2)
    busy = test_suite.CoresBusy(every=5)
    busy.samples = [2.0, 2.0, 0.5, 1.5]
    assert busy.summary() == ("1.50 of 2 cores busy on average (/proc/stat every 5 s), under 1 busy 25% of the "
                              "time")


def test_cores_busy_without_a_sample_says_so():
    with test_suite.CoresBusy(every=60) as busy:
        pass
    assert busy.samples == [] and busy.summary().startswith("not sampled")


def test_the_vllm_suites_wall_time_is_its_closing_lines():
    log = "...\n=========== 54 passed, 1 skipped, 14 warnings in 2581.40s (0:43:01) ===========\n"
    assert test_suite.vllm_wall(log) == "43.0 min"
    with pytest.raises(SystemExit, match="no pytest closing line"):
        test_suite.vllm_wall("collected 55 items\n")


def test_a_faster_machine_derives_the_slower_kinds_time_and_says_it_is_derived(monkeypatch):
    monkeypatch.setattr(test_suite, "SLOWER_KIND", ("the slow kind", 2.0))
    text = test_suite.speed_paragraph(1.0, setup_s=120.0, pytest_s=600.0)
    # installs as measured, the suite twice as long: 2 + 20 minutes
    assert "1.00 s per reference step" in text and "faster machine kind" in text
    assert "**22.0 min (derived, not measured)**" in text
    slow = test_suite.speed_paragraph(1.9, setup_s=120.0, pytest_s=600.0)
    assert "slower machine kind" in slow and "derived" not in slow


def test_the_ledger_report_ranks_units_names_growth_and_writes_only_when_asked(tmp_path, monkeypatch):
    committed = tmp_path / "test_ledger.csv"
    monkeypatch.setattr(test_suite, "COMMITTED_LEDGER", committed)
    units = [{"suite": "main", "unit": f"tests/test_{index}.py", "tests": 1, "core_s": float(100 - index)}
             for index in range(12)]
    report = test_suite.ledger_report(units, write_ledger=False)
    assert "No committed ledger" in report and not committed.exists()
    table = [line for line in report.splitlines() if line.startswith("| ") and "core-s" not in line]
    assert len(table) == 10 and "`tests/test_0.py`" in table[0] and "`tests/test_9.py`" in table[-1]
    test_suite.ledger_report(units, write_ledger=True)
    assert "no unit grew" in test_suite.ledger_report(units, write_ledger=False)
    units[3] = {**units[3], "core_s": 200.0}
    assert "`tests/test_3.py` (main) grew from 97 to 200 core-s" in test_suite.ledger_report(units, False)


def test_the_ledger_report_sets_the_machines_busy_core_minutes_beside_its_total(tmp_path, monkeypatch):
    monkeypatch.setattr(test_suite, "COMMITTED_LEDGER", tmp_path / "none.csv")
    busy = test_suite.CoresBusy(every=5)
    busy.samples = [1.5, 2.0]
    assert busy.busy_core_seconds(600.0) == 1050.0
    units = [{"suite": "main", "unit": "tests/test_a.py", "tests": 2, "core_s": 600.0},
             {"suite": "vllm", "unit": "tests/vllm/test_b.py", "tests": 1, "core_s": 300.0}]
    report = test_suite.ledger_report(units, False, busy.busy_core_seconds(600.0))
    assert "**15.0 core-minutes**, 10.0 in the main suite and 5.0 in the vLLM suite." in report
    assert "busy for 17.5 core-minutes meanwhile" in report
    assert test_suite.CoresBusy(every=5).busy_core_seconds(600.0) is None
