"""The grading policy: which task grades how, the settings, the worker pool, the cache, the vote keys.

``Grader.grade(response, reference, task) -> Grade(score, predicted, status)``; the module-level
:func:`grade` / :func:`grade_many` / :func:`same_answer` use one shared grader configured by
:func:`configure_grader` (job CLIs pass the config's ``grader:`` section, see :func:`add_grader_argument`).

Run one check from the shell: ``python -m ead.rewards --task math --reference 1/2 'so \\boxed{0.5}'``.
"""

from __future__ import annotations

import argparse
import atexit
import hashlib
import json
import logging
import threading
from collections import Counter, OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, fields
from typing import Sequence

from ead.data.tasks import get_task
from ead.rewards.extraction import (
    MAX_KEY_CHARS,
    extract_choice,
    fallback_key,
    gold_text,
    prediction_text,
)
from ead.rewards.worker import GraderTimeout, GraderWorkerError, Worker

__all__ = [
    "Grade",
    "Grader",
    "GraderSettings",
    "STATUSES",
    "TooManyTimeouts",
    "add_grader_argument",
    "configure_grader",
    "get_grader",
    "grade",
    "grade_many",
    "report_grades",
    "same_answer",
    "status_counts",
]

CACHE_SIZE = 1 << 16


@dataclass(frozen=True)
class Grade:
    score: float  # 1.0 correct, 0.0 otherwise
    predicted: str | None  # normalised final answer (majority-vote key); None if no answer was found
    status: str = "correct"  # one of STATUSES


#: Every Grade.status. ``timeout``: the answer used up its CPU budget twice (two workers); ``error``: the worker died
#: or answered garbage. Both score 0 and are never cached; jobs count them (:func:`report_grades`).
STATUSES = ("correct", "wrong", "no_answer", "timeout", "error")


@dataclass(frozen=True)
class GraderSettings:
    """The ``grader:`` section of configs/config.yaml (the defaults here equal the config's values)."""

    # CPU-time budget per answer (the worker's CPU seconds; wall-clock backstop 5x); past it twice -> 0
    timeout_s: float = 3.0
    workers: int = 1  # worker subprocesses (grade_many uses them in parallel)
    max_memory_mb: int = 3072  # address-space limit of each worker; a memory bomb becomes a MemoryError (score 0)
    # math: True grades a response with a box on its last box alone (docs/method.md, "Grading")
    last_boxed_only: bool = False
    max_timeout_share: float = 0.05  # a job whose share of timed-out answers exceeds this fails (TooManyTimeouts)

    def __post_init__(self):
        if isinstance(self.timeout_s, bool) or not isinstance(self.timeout_s, (int, float)) or not self.timeout_s > 0:
            raise ValueError(f"grader.timeout_s must be a number > 0, got {self.timeout_s!r}")
        if isinstance(self.workers, bool) or not isinstance(self.workers, int) or self.workers < 1:
            raise ValueError(f"grader.workers must be an integer >= 1, got {self.workers!r}")
        if isinstance(self.max_memory_mb, bool) or not isinstance(self.max_memory_mb, int) or self.max_memory_mb < 256:
            raise ValueError(f"grader.max_memory_mb must be an integer >= 256 (sympy needs it), got "
                             f"{self.max_memory_mb!r}")
        if not isinstance(self.last_boxed_only, bool):
            raise ValueError(f"grader.last_boxed_only must be true or false, got {self.last_boxed_only!r}")
        share = self.max_timeout_share
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 <= share <= 1:
            raise ValueError(f"grader.max_timeout_share must be a number in [0, 1], got {share!r}")

    @classmethod
    def from_mapping(cls, values: dict | None) -> "GraderSettings":
        """Settings from a config mapping; unknown keys fail with the list of known ones."""
        values = dict(values or {})
        known = [f.name for f in fields(cls)]
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise ValueError(f"unknown grader setting(s) {unknown}; known: {known}")
        return cls(**values)


class Grader:
    """Grading with a pool of math-verify workers, a per-answer CPU-time budget and an LRU cache.

    Thread-safe. Most code uses the module-level :func:`grade` / :func:`grade_many`, which share one
    default instance (see :func:`configure_grader`).
    """

    def __init__(self, timeout_s: float = GraderSettings.timeout_s, n_workers: int = GraderSettings.workers,
                 max_memory_mb: int = GraderSettings.max_memory_mb,
                 last_boxed_only: bool = GraderSettings.last_boxed_only,
                 max_timeout_share: float = GraderSettings.max_timeout_share,
                 cache_size: int = CACHE_SIZE, soft_timeout_fraction: float = 1.0):
        """``timeout_s``: the CPU-time budget of one answer. ``soft_timeout_fraction``: the worker interrupts itself
        (no restart) after this fraction of the budget in CPU time; values > 1 leave only the kernel's CPU-time kill
        (used by the tests to exercise it)."""
        self.settings = GraderSettings(timeout_s=timeout_s, workers=n_workers, max_memory_mb=max_memory_mb,
                                       last_boxed_only=last_boxed_only, max_timeout_share=max_timeout_share)
        self.timeout_s = timeout_s
        self.n_workers = n_workers
        self.max_memory_mb = max_memory_mb
        self.last_boxed_only = last_boxed_only
        self.soft_timeout_fraction = soft_timeout_fraction
        self.cache_size = cache_size
        self._cache: OrderedDict = OrderedDict()
        self._cache_lock = threading.Lock()
        self._idle: list[Worker] = []
        self._all: list[Worker] = []
        self._pool_lock = threading.Condition()
        self.stats = {"requests": 0, "cache_hits": 0, "timeouts": 0, "worker_errors": 0, "retries": 0}

    @classmethod
    def from_settings(cls, settings: GraderSettings, **kwargs) -> "Grader":
        return cls(timeout_s=settings.timeout_s, n_workers=settings.workers, max_memory_mb=settings.max_memory_mb,
                   last_boxed_only=settings.last_boxed_only, max_timeout_share=settings.max_timeout_share, **kwargs)

    # -- worker pool --------------------------------------------------------------------------------------
    def _acquire(self) -> Worker:
        with self._pool_lock:
            while not self._idle and len(self._all) >= self.n_workers:
                self._pool_lock.wait()
            if self._idle:
                return self._idle.pop()
            worker = Worker(self.timeout_s, self.max_memory_mb, self.soft_timeout_fraction)
            self._all.append(worker)
            return worker

    def _release(self, worker: Worker) -> None:
        with self._pool_lock:
            self._idle.append(worker)
            self._pool_lock.notify()

    def _ask(self, payload: dict, fresh: bool = False) -> dict:
        """One request to a free worker; ``fresh`` replaces that worker's process first (its warm standby)."""
        worker = self._acquire()
        try:
            if fresh:
                worker.restart()
            return worker.request(payload)
        finally:
            self._release(worker)

    def _ask_with_retry(self, payload: dict) -> tuple[dict | None, str | None]:
        """(reply, None), or (None, "timeout" | "error"). A timed-out request is retried once on a fresh worker: a
        budget can run out by chance (a page fault storm, a slow first parse), and a timeout scores 0."""
        alive_after_timeout = False
        for attempt in range(2):
            try:  # a worker the kernel or the backstop killed has been replaced already; one that interrupted
                reply = self._ask(payload, fresh=alive_after_timeout)  # itself (soft timeout) is replaced here
            except GraderTimeout:
                alive_after_timeout = False
            except GraderWorkerError:
                return None, "error"
            else:
                if reply.get("error") != "soft_timeout":
                    return reply, None
                alive_after_timeout = True
            if attempt == 0:
                self.stats["retries"] += 1
        return None, "timeout"

    def close(self) -> None:
        """Stop all worker processes (they also exit on their own when this process ends)."""
        with self._pool_lock:
            for worker in self._all:
                worker.kill()
            self._all.clear()
            self._idle.clear()

    @property
    def restarts(self) -> int:
        return sum(worker.restarts for worker in self._all)

    # -- cache --------------------------------------------------------------------------------------------
    # Keys are digests: the texts are up to a few KB each, and 65536 of them should not cost 100s of MB.
    @staticmethod
    def _key(*parts: str) -> bytes:
        digest = hashlib.blake2b(digest_size=16)
        for part in parts:
            digest.update(part.encode("utf-8", "surrogatepass"))
            digest.update(b"\x00")
        return digest.digest()

    def _cache_get(self, key):
        with self._cache_lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                self.stats["cache_hits"] += 1
                return self._cache[key]
        return None

    def _cache_put(self, key, value) -> None:
        with self._cache_lock:
            self._cache[key] = value
            self._cache.move_to_end(key)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)

    def clear_cache(self) -> None:
        with self._cache_lock:
            self._cache.clear()

    # -- grading ------------------------------------------------------------------------------------------
    def grade(self, response: str, reference: str, task: str) -> Grade:
        """Score one response (see docs/method.md, "Grading"). Raises only for a bad ``task`` or ``reference``."""
        graded = get_task(task)  # how this task grades (ead.data.tasks); a ValueError naming the known ones
        if not isinstance(reference, str) or not reference.strip():
            raise ValueError(f"Reference for task {task!r} must be a non-empty string, got {reference!r}")
        if not isinstance(response, str):
            return Grade(0.0, None, "no_answer")
        if graded.grading == "choice":
            return self._grade_choice(response, reference)
        if graded.grading == "verifier":
            return self._grade_verifier(graded, response, reference)
        return self._grade_math(response, reference)

    def _grade_choice(self, response: str, reference: str) -> Grade:
        letter = reference.strip().strip("()").upper()
        if len(letter) != 1 or not letter.isalpha():
            raise ValueError(f"MMLU reference must be a single letter like 'B', got {reference!r}")
        predicted = extract_choice(response)
        if predicted is None:
            return Grade(0.0, None, "no_answer")
        return Grade(float(predicted == letter), predicted, "correct" if predicted == letter else "wrong")

    @staticmethod
    def _grade_verifier(task, response: str, reference: str) -> Grade:
        """The task's own verifier decides (ead.data.tasks.Task.verify); its answer is the vote key."""
        valid, answer = task.verify(response, reference)
        if answer is None:
            return Grade(0.0, None, "no_answer")
        return Grade(float(valid), answer, "correct" if valid else "wrong")

    def _grade_math(self, response: str, reference: str) -> Grade:
        gold = gold_text(reference)
        pred = prediction_text(response, self.last_boxed_only)
        if pred is None:
            return Grade(0.0, None, "no_answer")
        # pred already reflects last_boxed_only, so one cache serves either setting.
        cache_key = self._key("math", pred, gold)
        cached = self._cache_get(cache_key)
        if cached is not None:
            return cached
        self.stats["requests"] += 1
        reply, failure = self._ask_with_retry({"op": "grade", "gold": gold, "pred": pred})
        if failure is not None:  # not cached: a later call (another step, a quieter machine) tries again
            self.stats["timeouts" if failure == "timeout" else "worker_errors"] += 1
            return Grade(0.0, fallback_key(pred), failure)
        if reply.get("error"):
            result = Grade(0.0, fallback_key(pred), "error")
        elif not reply.get("found"):
            result = Grade(0.0, None, "no_answer")
        else:
            correct = bool(reply.get("ok"))
            result = Grade(float(correct), reply.get("key"), "correct" if correct else "wrong")
        self._cache_put(cache_key, result)
        return result

    def grade_many(self, responses: Sequence[str], references: Sequence[str],
                   tasks: str | Sequence[str]) -> list[Grade]:
        """Grade a batch in order; uses all workers in parallel. ``tasks`` is one name or one per response."""
        if isinstance(tasks, str):
            tasks = [tasks] * len(responses)
        if not len(responses) == len(references) == len(tasks):
            raise ValueError(f"grade_many got {len(responses)} responses, {len(references)} references, "
                             f"{len(tasks)} tasks")
        items = list(zip(responses, references, tasks))
        if self.n_workers == 1 or len(items) < 2:
            return [self.grade(*item) for item in items]
        with ThreadPoolExecutor(self.n_workers) as pool:
            return list(pool.map(lambda item: self.grade(*item), items))

    def same_answer(self, a: str, b: str) -> bool:
        """True if two answers or vote keys are math-verify-equivalent, within the time limit.

        Both are parsed as references (bare text wrapped in ``$...$``), so LaTeX answers and the sympy-syntax
        vote keys of :attr:`Grade.predicted` (``sqrt(2)/2``) both work.
        """
        a, b = str(a).strip(), str(b).strip()
        if a == b:
            return True
        if not a or not b or max(len(a), len(b)) > MAX_KEY_CHARS:
            return False
        cache_key = self._key("same", a, b)
        cached = self._cache_get(cache_key)
        if cached is not None:
            return cached
        reply, failure = self._ask_with_retry({"op": "grade", "gold": gold_text(a), "pred": gold_text(b)})
        if failure is not None:  # not cached, like a timed-out grade
            return False
        result = bool(reply.get("ok")) and not reply.get("error")
        self._cache_put(cache_key, result)
        return result


# ---------------------------------------------------------------------------------------------------------
# The shared default grader
# ---------------------------------------------------------------------------------------------------------

_default: Grader | None = None
_default_settings = GraderSettings()
_default_lock = threading.Lock()


def configure_grader(settings: GraderSettings | dict | None = None, **overrides) -> GraderSettings:
    """Set the shared grader's settings (a ``GraderSettings``, a config mapping, and/or keyword overrides).

    Job CLIs call this once at start-up with the config's ``grader:`` section. If the shared grader already
    runs with other settings it is closed and the next call builds a new one. Returns the settings in force.
    """
    global _default, _default_settings
    if isinstance(settings, GraderSettings):
        settings = asdict(settings)
    new = GraderSettings.from_mapping({**(settings or {}), **overrides})
    with _default_lock:
        if _default is not None and _default.settings != new:
            _default.close()
            _default = None
        _default_settings = new
    return new


def get_grader() -> Grader:
    """The shared default :class:`Grader` (settings from :func:`configure_grader`, else the defaults)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Grader.from_settings(_default_settings)
            atexit.register(_default.close)
        return _default


def add_grader_argument(parser: argparse.ArgumentParser) -> None:
    """``--grader JSON``: the config's ``grader:`` section, as the workflow rules pass it to job CLIs."""
    parser.add_argument("--grader", type=_settings_from_json, default=None, metavar="JSON",
                        help='grader settings, e.g. \'{"timeout_s": 3, "workers": 1, "max_memory_mb": 3072, '
                             '"last_boxed_only": true}\' (default: those values)')


def _settings_from_json(text: str) -> GraderSettings:
    try:
        values = json.loads(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"--grader must be a JSON object, got {text!r}: {error}") from None
    if not isinstance(values, dict):
        raise argparse.ArgumentTypeError(f"--grader must be a JSON object, got {text!r}")
    try:
        return GraderSettings.from_mapping(values)
    except (TypeError, ValueError) as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def grade(response: str, reference: str, task: str) -> Grade:
    """Score one response with the shared grader."""
    return get_grader().grade(response, reference, task)


def grade_many(responses: Sequence[str], references: Sequence[str], tasks: str | Sequence[str]) -> list[Grade]:
    """Score a batch with the shared grader (order preserved)."""
    return get_grader().grade_many(responses, references, tasks)


def same_answer(a: str, b: str) -> bool:
    """math-verify equivalence of two answers or vote keys, with the shared grader."""
    return get_grader().same_answer(a, b)


# ---------------------------------------------------------------------------------------------------------
# What a job reports about its grades
# ---------------------------------------------------------------------------------------------------------

class TooManyTimeouts(RuntimeError):
    """A job's share of timed-out answers passed ``grader.max_timeout_share``: its scores would be noisy."""


def status_counts(grades) -> dict[str, int]:
    """{status: count} over :data:`STATUSES` (every status present, zeros included) for Grades or status strings."""
    counts = Counter(grade if isinstance(grade, str) else grade.status for grade in grades)
    unknown = sorted(set(counts) - set(STATUSES))
    if unknown:
        raise ValueError(f"unknown grade status(es) {unknown}; known: {list(STATUSES)}")
    return {status: counts.get(status, 0) for status in STATUSES}


def report_grades(grades, what: str, log: logging.Logger | None = None,
                  max_timeout_share: float | None = None) -> dict[str, int]:
    """Log how ``grades`` (Grades, statuses, or a {status: count} mapping) came out, and raise
    :class:`TooManyTimeouts` if their share of timeouts exceeds ``max_timeout_share`` (default: the shared grader's
    ``grader.max_timeout_share``). ``what`` names the job or step in both. Returns the counts."""
    counts = dict(grades) if isinstance(grades, dict) else status_counts(grades)
    total = sum(counts.values())
    bound = _default_settings.max_timeout_share if max_timeout_share is None else max_timeout_share
    timeouts = counts.get("timeout", 0)
    (log or logging.getLogger("ead.rewards")).info(
        "%s: graded %d answers: %s", what, total, ", ".join(f"{status} {counts.get(status, 0)}" for status in STATUSES))
    if total and timeouts / total > bound:
        raise TooManyTimeouts(
            f"{what}: {timeouts} of {total} answers ({timeouts / total:.1%}) timed out in the grader (each after two "
            f"tries of grader.timeout_s = {_default_settings.timeout_s} CPU seconds), more than "
            f"grader.max_timeout_share = {bound}; their scores of 0 would pass for wrong answers. Rerun the job; if it "
            "fails again, raise grader.timeout_s (the answers are costly to verify) or grader.max_timeout_share")
    return counts
