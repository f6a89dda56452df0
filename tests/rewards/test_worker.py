"""math-verify in worker subprocesses under a CPU-time budget (ead.rewards.worker): adversarial answers score 0
within the limit, from threads too, and a worker that cannot interrupt itself is killed."""

from __future__ import annotations

import threading
import time

import pytest

from ead.rewards import Grade, Grader
from ead.rewards.worker import WALL_BACKSTOP_FACTOR
from tests.conftest import ADVERSARIAL, LIMIT_S

MARGIN_S = 1.0  # process kill + pipe round trip + the kernel's whole-second CPU limit


WORKER_START_S = 4.0  # a fresh worker importing sympy for the retry (not charged to the answer's budget)


KERNEL_KILL_S = 2.0  # C code the soft timer cannot interrupt runs until RLIMIT_CPU, 1-2 s past the budget


#: What a timed-out answer may cost in wall time, however loaded the machine: two attempts (a retry on a fresh
#: worker), each ended by the CPU budget or at the latest by the parent's wall-clock backstop, and a worker start.
#: (Idle, an attempt takes its CPU budget: LIMIT_S, or up to KERNEL_KILL_S more in C code.)
TIMEOUT_COST_S = 2 * (WALL_BACKSTOP_FACTOR * (LIMIT_S + KERNEL_KILL_S) + MARGIN_S) + WORKER_START_S


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_adversarial_answers_score_zero_within_the_limit(grader, name):
    started = time.monotonic()
    result = grader.grade(ADVERSARIAL[name], "4", "math")
    elapsed = time.monotonic() - started
    assert result.score == 0.0
    assert elapsed < TIMEOUT_COST_S, f"{name} took {elapsed:.2f} s"
    assert grader.grade("\\boxed{4}", "4", "math").score == 1.0  # the grader still works afterwards


def test_hard_kill_when_the_worker_cannot_interrupt_itself():
    """With the in-worker soft timer disabled, the kernel's CPU-time limit kills a runaway answer (twice: the retry)."""
    budget_s = 0.1  # the kernel's limit still lands on a whole CPU second past the budget: 1-2 s per attempt
    grader = Grader(timeout_s=budget_s, soft_timeout_fraction=100.0)
    try:
        grader.grade("\\boxed{1}", "1", "math")
        started = time.monotonic()
        result = grader.grade("\\boxed{9^{9^{9^{9}}}}", "4", "math")
        elapsed = time.monotonic() - started
        assert result == Grade(0.0, "9^{9^{9^{9}}}", "timeout")
        assert elapsed < 2 * (WALL_BACKSTOP_FACTOR * (budget_s + KERNEL_KILL_S) + MARGIN_S) + WORKER_START_S
        assert grader.restarts == 2 and grader.stats["retries"] == 1
        assert grader.grade("\\boxed{4}", "4", "math").score == 1.0  # a fresh worker took over
    finally:
        grader.close()


def test_time_limit_holds_from_threads():
    grader = Grader(timeout_s=LIMIT_S, n_workers=2)
    results, elapsed = {}, {}

    def run(name):
        started = time.monotonic()
        results[name] = grader.grade(ADVERSARIAL[name], "4", "math")
        elapsed[name] = time.monotonic() - started

    try:
        grader.grade_many(["\\boxed{1}", "\\boxed{1}"], ["1", "2"], "math")  # warm both workers
        threads = [threading.Thread(target=run, args=(name,)) for name in ("power_tower", "big_expansion", "huge_sum")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
    finally:
        grader.close()
    assert all(result.score == 0.0 for result in results.values()) and len(results) == 3
    # Three answers on two workers: the third waits for a free worker, so allow two timed-out answers.
    assert max(elapsed.values()) < 2 * TIMEOUT_COST_S, elapsed
