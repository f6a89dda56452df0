"""The one grader: scores a response against a reference, for evaluation AND as the RL reward.

``grade(response, reference, task) -> Grade(score, predicted, status)``; ``grade_many`` for batches.

Tasks (the ``source`` column of the data tables can be passed as ``task`` directly):

* ``math``, ``math500``, ``gsm8k``: the final answer is the content of the LAST ``\\boxed{}`` (nested braces
  handled); if there is none, the last "#### X" or "answer is X" phrase (no last-number guessing). It is
  compared with the reference by math-verify (``parse`` + ``verify``). ``predicted`` is a normalised key for
  majority voting: the canonical sympy string of the parsed answer (floats made rational, ``x = 7`` -> ``7``,
  polynomials expanded), so math-verify-equivalent answers usually share a key. Use :func:`same_answer` to
  merge the few keys that still differ (e.g. ``sqrt(2)/2`` vs ``1/sqrt(2)``).
* ``mmlu``: the chosen letter, from ``\\boxed{B}``, "answer is (B)", "Answer: B", "(B)", "B)" or a bare
  "B" (in that priority); exact match with the reference letter.
* ``countdown``: the verified equation chain (see :mod:`ead.data.countdown`); ``reference`` is the problem,
  ``"3 5 7 12 -> 41"`` or the prompt text. A bare ``\\boxed{41}`` scores 0.

Never hangs or crashes on a response. math-verify's own timeout uses ``signal.alarm`` and only works in a
main thread, so parsing and verification run in persistent worker subprocesses (plain ``subprocess``, so
it works from threads, daemonic multiprocessing workers and Ray actors). Each answer gets a hard wall-clock
limit (``timeout_s``, default 3 s): past it the worker is killed and replaced, and the answer scores 0 with
status ``timeout``. Inside the worker a softer interval timer (0.8 x limit) interrupts Python-level work
without the restart, an address-space limit turns memory bombs into MemoryError, and a CPU-time limit kills
an orphaned worker stuck in C code. Extracted answers longer than ``MAX_ANSWER_CHARS`` score 0 unparsed.
Results are kept in an LRU cache keyed by (task, extracted answer, reference).

Settings (environment, read at first use): ``EAD_GRADER_TIMEOUT_S`` (3), ``EAD_GRADER_WORKERS`` (1),
``EAD_GRADER_MAX_MEMORY_MB`` (3072).

Run one check from the shell: ``python -m ead.rewards --task math --reference 1/2 'so \\boxed{0.5}'``.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import select
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Sequence

__all__ = [
    "Grade",
    "Grader",
    "MAX_ANSWER_CHARS",
    "TASKS",
    "extract_boxed",
    "extract_choice",
    "extract_math_answer",
    "get_grader",
    "grade",
    "grade_many",
    "same_answer",
]

# Task name -> kind of grading. Unknown names fail with this list.
TASKS = {"math": "math", "math500": "math", "gsm8k": "math", "mmlu": "choice", "countdown": "countdown"}

MAX_ANSWER_CHARS = 512  # longest MATH reference answer is ~150 characters
MAX_REFERENCE_CHARS = 4096
TAIL_CHARS = 4096  # phrase fallbacks and letter search look only at the end of a response
DEFAULT_TIMEOUT_S = 3.0
CACHE_SIZE = 1 << 16
WORKER_STARTUP_TIMEOUT_S = 120.0  # importing sympy + math-verify on a loaded machine


@dataclass(frozen=True)
class Grade:
    score: float  # 1.0 correct, 0.0 otherwise
    predicted: str | None  # normalised final answer (majority-vote key); None if no answer was found
    status: str = "correct"  # correct | wrong | no_answer | too_long | timeout | error


# ---------------------------------------------------------------------------------------------------------
# Answer extraction (pure string work in the calling process; linear time in the response length)
# ---------------------------------------------------------------------------------------------------------

_BOX_COMMANDS = ("\\boxed", "\\fbox")


def extract_boxed(text: str) -> str | None:
    """Content of the last ``\\boxed{...}`` (or ``\\fbox{...}``), nested braces handled; None if absent.

    ``\\boxed 7`` (no braces) yields ``7``. An unclosed last box yields None rather than a guess.
    """
    if not isinstance(text, str):
        return None
    start = max(text.rfind(command) for command in _BOX_COMMANDS)
    if start < 0:
        return None
    command_end = start + (len("\\boxed") if text.startswith("\\boxed", start) else len("\\fbox"))
    rest = text[command_end:]
    stripped = rest.lstrip()
    if not stripped.startswith("{"):
        match = re.match(r"\s+([^\s$]+)", rest)  # "\boxed 7"
        return match.group(1) if match else None
    open_at = command_end + (len(rest) - len(stripped))
    depth = 0
    for position in range(open_at, len(text)):
        char = text[position]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return text[open_at + 1 : position].strip()
    return None


_PHRASE_RES = (
    re.compile(r"####\s*([^\n]+)"),
    re.compile(r"answer is[:\s]*\$?([^\n$]+?)\$?\s*(?:\.\s|\.?$|\n)", re.IGNORECASE),
)


def extract_math_answer(response: str) -> str | None:
    """The final answer of a math response: last ``\\boxed{}``, else the last "#### X" / "answer is X"."""
    boxed = extract_boxed(response)
    if boxed is not None:
        return boxed
    tail = response[-TAIL_CHARS:]
    for pattern in _PHRASE_RES:
        matches = pattern.findall(tail)
        if matches:
            return matches[-1].strip().rstrip(".").strip()
    return None


def extract_choice(response: str, letters: str = "ABCD") -> str | None:
    """The multiple-choice letter a response picked (see the module docstring for the accepted forms)."""
    if not isinstance(response, str):
        return None
    group = f"[{letters}]"
    boxed = extract_boxed(response[-TAIL_CHARS:])
    if boxed is not None:
        match = re.match(rf"^\s*(?:\\text\{{|\\mathrm\{{|\\textbf\{{)?\s*\(?({group})\)?(?![A-Za-z])", boxed)
        if match:
            return match.group(1)
    tail = response[-TAIL_CHARS:]
    patterns = (
        rf"(?i:answer)(?:\s+is)?\s*[:：]?\s*(?i:option\s*)?[\(\[]?\**({group})\b",
        rf"\(({group})\)",
        rf"(?m)(?:^|\s)({group})\)",
    )
    for pattern in patterns:
        matches = re.findall(pattern, tail)
        if matches:
            return matches[-1]
    bare = re.fullmatch(rf"\s*\**({group})[.:]?\**\s*", tail)
    return bare.group(1) if bare else None


def _fallback_key(answer: str) -> str:
    """A cheap string key for answers the worker could not canonicalise (voting still groups exact repeats)."""
    key = re.sub(r"\\left|\\right|\\[,!;: ]|\s+|\$", "", answer)
    return key[:MAX_ANSWER_CHARS]


def _strip_math_delimiters(answer: str) -> str:
    answer = answer.strip()
    while len(answer) >= 2 and answer[0] == "$" and answer[-1] == "$":
        answer = answer[1:-1].strip()
    return answer


# ---------------------------------------------------------------------------------------------------------
# Worker subprocess (parent side)
# ---------------------------------------------------------------------------------------------------------

class GraderTimeout(Exception):
    """The worker did not answer within the time limit (it has been killed)."""


class GraderWorkerError(Exception):
    """The worker died or answered garbage (it has been killed)."""


class _Process:
    """One worker subprocess speaking JSON lines over pipes."""

    def __init__(self, max_memory_mb: int):
        # Run this file as a script, with sys.path[0] removed so src/ead/*.py can never shadow the stdlib,
        # and without importing the ead package (start-up is sympy + math-verify only, ~1.4 s).
        bootstrap = (
            "import sys, runpy; sys.path.pop(0); "
            f"runpy.run_path({os.path.abspath(__file__)!r}, run_name='__ead_grader_worker__')"
        )
        env = dict(os.environ, EAD_GRADER_MAX_MEMORY_MB=str(max_memory_mb), PYTHONUNBUFFERED="1")
        self.popen = subprocess.Popen(
            [sys.executable, "-c", bootstrap],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            close_fds=True,
        )
        self.ready = False
        self.buffer = b""

    def alive(self) -> bool:
        return self.popen.poll() is None

    def read_line(self, deadline: float) -> dict:
        fd = self.popen.stdout.fileno()
        while b"\n" not in self.buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise GraderTimeout
            readable, _, _ = select.select([fd], [], [], remaining)
            if not readable:
                raise GraderTimeout
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise GraderWorkerError("worker closed its output")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        try:
            return json.loads(line)
        except ValueError as error:
            raise GraderWorkerError(f"bad worker reply {line[:100]!r}") from error

    def wait_ready(self) -> None:
        if not self.ready:
            reply = self.read_line(time.monotonic() + WORKER_STARTUP_TIMEOUT_S)
            if not reply.get("ready"):
                raise GraderWorkerError(f"worker did not start: {reply}")
            self.ready = True

    def kill(self) -> None:
        try:
            self.popen.kill()
            self.popen.wait(timeout=5)
        except Exception:  # noqa: BLE001 - already gone
            pass
        for stream in (self.popen.stdin, self.popen.stdout):
            try:
                stream.close()
            except Exception:  # noqa: BLE001
                pass


class _Worker:
    """A worker slot: the current process, killed and replaced on any trouble.

    After the first kill the slot keeps a warm standby process, so a later kill swaps in a ready worker
    instead of making the next answer wait ~1.4 s for sympy to import.
    """

    def __init__(self, timeout_s: float, max_memory_mb: int, soft_timeout_fraction: float):
        self.timeout_s = timeout_s
        self.max_memory_mb = max_memory_mb
        self.soft_timeout_s = soft_timeout_fraction * timeout_s
        self.current: _Process | None = None
        self.standby: _Process | None = None
        self.restarts = 0

    def kill(self) -> None:
        for process in (self.current, self.standby):
            if process is not None:
                process.kill()
        self.current = self.standby = None

    def restart(self) -> None:
        if self.current is not None:
            self.current.kill()
        self.restarts += 1
        if self.standby is not None and self.standby.alive():
            self.current = self.standby
        else:
            self.current = _Process(self.max_memory_mb)
        self.standby = _Process(self.max_memory_mb)  # starts importing now, in the background

    def request(self, payload: dict) -> dict:
        """Send one request; the time limit starts once the worker is ready. Kills the worker on failure."""
        try:
            if self.current is None or not self.current.alive():
                self.current = _Process(self.max_memory_mb)
            self.current.wait_ready()
        except (GraderTimeout, GraderWorkerError, OSError) as error:
            self.restart()
            raise GraderWorkerError(f"worker start failed: {error!r}") from error
        payload = dict(payload, soft_timeout_s=self.soft_timeout_s,
                       cpu_budget_s=max(self.timeout_s, self.soft_timeout_s) + 2)
        try:
            self.current.popen.stdin.write((json.dumps(payload) + "\n").encode())
            self.current.popen.stdin.flush()
            return self.current.read_line(time.monotonic() + self.timeout_s)
        except GraderTimeout:
            self.restart()
            raise
        except (GraderWorkerError, OSError, ValueError) as error:
            self.restart()
            raise GraderWorkerError(repr(error)) from error


class Grader:
    """Grading with a pool of math-verify workers, a hard per-answer time limit and an LRU cache.

    Thread-safe. Most code uses the module-level :func:`grade` / :func:`grade_many`, which share one
    default instance configured from the environment (see the module docstring).
    """

    def __init__(self, timeout_s: float = DEFAULT_TIMEOUT_S, n_workers: int = 1, max_memory_mb: int = 3072,
                 cache_size: int = CACHE_SIZE, soft_timeout_fraction: float = 0.8):
        """``soft_timeout_fraction``: the worker interrupts itself (no restart) at this fraction of
        ``timeout_s``; values >= 1 leave only the hard kill (used by the tests to exercise it)."""
        if timeout_s <= 0 or n_workers < 1:
            raise ValueError(f"timeout_s must be > 0 and n_workers >= 1, got timeout_s={timeout_s}, n_workers={n_workers}")
        self.timeout_s = timeout_s
        self.n_workers = n_workers
        self.max_memory_mb = max_memory_mb
        self.soft_timeout_fraction = soft_timeout_fraction
        self.cache_size = cache_size
        self._cache: OrderedDict = OrderedDict()
        self._cache_lock = threading.Lock()
        self._idle: list[_Worker] = []
        self._all: list[_Worker] = []
        self._pool_lock = threading.Condition()
        self.stats = {"requests": 0, "cache_hits": 0, "timeouts": 0, "worker_errors": 0}

    # -- worker pool --------------------------------------------------------------------------------------
    def _acquire(self) -> _Worker:
        with self._pool_lock:
            while not self._idle and len(self._all) >= self.n_workers:
                self._pool_lock.wait()
            if self._idle:
                return self._idle.pop()
            worker = _Worker(self.timeout_s, self.max_memory_mb, self.soft_timeout_fraction)
            self._all.append(worker)
            return worker

    def _release(self, worker: _Worker) -> None:
        with self._pool_lock:
            self._idle.append(worker)
            self._pool_lock.notify()

    def _ask(self, payload: dict) -> dict:
        worker = self._acquire()
        try:
            return worker.request(payload)
        finally:
            self._release(worker)

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
        """Score one response (see the module docstring). Raises only for a bad ``task`` or ``reference``."""
        kind = TASKS.get(task)
        if kind is None:
            raise ValueError(f"Unknown task {task!r}; known tasks: {sorted(TASKS)}")
        if not isinstance(reference, str) or not reference.strip():
            raise ValueError(f"Reference for task {task!r} must be a non-empty string, got {reference!r}")
        if not isinstance(response, str):
            return Grade(0.0, None, "no_answer")
        if kind == "choice":
            return self._grade_choice(response, reference)
        if kind == "countdown":
            return self._grade_countdown(response, reference)
        return self._grade_math(response, reference)

    def _grade_choice(self, response: str, reference: str) -> Grade:
        letter = reference.strip().strip("()").upper()
        if len(letter) != 1 or not letter.isalpha():
            raise ValueError(f"MMLU reference must be a single letter like 'B', got {reference!r}")
        predicted = extract_choice(response)
        if predicted is None:
            return Grade(0.0, None, "no_answer")
        return Grade(float(predicted == letter), predicted, "correct" if predicted == letter else "wrong")

    def _grade_countdown(self, response: str, reference: str) -> Grade:
        from ead.data.countdown import parse_problem, verify_chain  # local: keeps the worker import-light

        check = verify_chain(response, parse_problem(reference))
        if check.boxed is None:
            return Grade(0.0, None, "no_answer")
        predicted = check.boxed.strip()
        return Grade(float(check.valid), predicted, "correct" if check.valid else "wrong")

    def _grade_math(self, response: str, reference: str) -> Grade:
        reference = reference.strip()
        if len(reference) > MAX_REFERENCE_CHARS:
            raise ValueError(f"Reference longer than {MAX_REFERENCE_CHARS} characters: {reference[:80]!r}...")
        if "\\boxed" in reference or "\\fbox" in reference:
            reference = extract_boxed(reference) or reference
        reference = _strip_math_delimiters(reference)
        answer = extract_math_answer(response)
        if answer is None:
            return Grade(0.0, None, "no_answer")
        answer = _strip_math_delimiters(answer)
        if not answer:
            return Grade(0.0, None, "no_answer")
        if len(answer) > MAX_ANSWER_CHARS:
            return Grade(0.0, None, "too_long")
        cache_key = ("math", answer, reference)
        cached = self._cache_get(cache_key)
        if cached is not None:
            return cached
        self.stats["requests"] += 1
        try:
            reply = self._ask({"op": "grade", "gold": reference, "pred": answer})
        except GraderTimeout:
            self.stats["timeouts"] += 1
            result = Grade(0.0, _fallback_key(answer), "timeout")
        except GraderWorkerError:
            self.stats["worker_errors"] += 1
            result = Grade(0.0, _fallback_key(answer), "error")
        else:
            key = reply.get("key") or _fallback_key(answer)
            if reply.get("error") == "soft_timeout":
                self.stats["timeouts"] += 1
                result = Grade(0.0, key, "timeout")
            elif reply.get("error"):
                result = Grade(0.0, key, "error")
            else:
                correct = bool(reply.get("ok"))
                result = Grade(float(correct), key, "correct" if correct else "wrong")
        self._cache_put(cache_key, result)
        return result

    def grade_many(self, responses: Sequence[str], references: Sequence[str], tasks: str | Sequence[str]) -> list[Grade]:
        """Grade a batch in order; uses all workers in parallel. ``tasks`` is one name or one per response."""
        if isinstance(tasks, str):
            tasks = [tasks] * len(responses)
        if not len(responses) == len(references) == len(tasks):
            raise ValueError(f"grade_many got {len(responses)} responses, {len(references)} references, {len(tasks)} tasks")
        items = list(zip(responses, references, tasks))
        if self.n_workers == 1 or len(items) < 2:
            return [self.grade(*item) for item in items]
        with ThreadPoolExecutor(self.n_workers) as pool:
            return list(pool.map(lambda item: self.grade(*item), items))

    def same_answer(self, a: str, b: str) -> bool:
        """True if two extracted answers (or vote keys) are math-verify-equivalent, within the time limit."""
        a, b = _strip_math_delimiters(str(a)), _strip_math_delimiters(str(b))
        if a == b:
            return True
        if max(len(a), len(b)) > MAX_ANSWER_CHARS:
            return False
        cache_key = ("same", a, b)
        cached = self._cache_get(cache_key)
        if cached is not None:
            return cached
        try:
            reply = self._ask({"op": "grade", "gold": a, "pred": b})
            result = bool(reply.get("ok")) and not reply.get("error")
        except (GraderTimeout, GraderWorkerError):
            result = False
        self._cache_put(cache_key, result)
        return result


_default: Grader | None = None
_default_lock = threading.Lock()


def get_grader() -> Grader:
    """The shared default :class:`Grader`, configured from ``EAD_GRADER_*`` environment variables."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Grader(
                timeout_s=float(os.environ.get("EAD_GRADER_TIMEOUT_S", DEFAULT_TIMEOUT_S)),
                n_workers=int(os.environ.get("EAD_GRADER_WORKERS", 1)),
                max_memory_mb=int(os.environ.get("EAD_GRADER_MAX_MEMORY_MB", 3072)),
            )
            atexit.register(_default.close)
        return _default


def grade(response: str, reference: str, task: str) -> Grade:
    """Score one response with the default grader."""
    return get_grader().grade(response, reference, task)


def grade_many(responses: Sequence[str], references: Sequence[str], tasks: str | Sequence[str]) -> list[Grade]:
    """Score a batch with the default grader (order preserved)."""
    return get_grader().grade_many(responses, references, tasks)


def same_answer(a: str, b: str) -> bool:
    """math-verify equivalence of two answers or vote keys, with the default grader."""
    return get_grader().same_answer(a, b)


# ---------------------------------------------------------------------------------------------------------
# Worker subprocess (child side). Runs as a script: only the standard library, sympy and math-verify.
# ---------------------------------------------------------------------------------------------------------

class _SoftTimeout(BaseException):
    """Raised by the worker's interval timer; a BaseException so math-verify's ``except Exception`` lets it through."""


def _canonical_key(parsed) -> str | None:
    """A majority-vote key for a math-verify parse: equal keys for the common equivalent spellings."""
    import sympy

    expressions = [item for item in parsed if isinstance(item, (sympy.Basic, sympy.MatrixBase))]
    if not expressions:
        return None
    expr = expressions[0]
    # "x = 7" votes with "7": an assignment to a plain symbol is its right-hand side (as math-verify treats it).
    if isinstance(expr, sympy.Eq) and isinstance(expr.lhs, sympy.Symbol):
        expr = expr.rhs
    if isinstance(expr, sympy.Basic):
        floats = expr.atoms(sympy.Float)
        if floats:  # 0.5 and 1/2 share a key; a Float's decimal string is its exact rational value here
            expr = expr.xreplace({value: sympy.Rational(str(value)) for value in floats})
        if expr.free_symbols and not isinstance(expr, (sympy.Set, sympy.Tuple, sympy.core.relational.Relational)):
            expr = sympy.expand(expr)
        elif not expr.free_symbols and isinstance(expr, sympy.Expr):
            expr = expr.doit()
    return str(expr)[:MAX_ANSWER_CHARS]


def _worker_main() -> None:  # pragma: no cover - exercised through the subprocess in tests
    import logging
    import resource
    import signal

    protocol_out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything a library prints goes to stderr, never into the protocol stream
    sys.stdout = sys.stderr

    memory = int(os.environ.get("EAD_GRADER_MAX_MEMORY_MB", "3072")) * 2**20
    try:
        resource.setrlimit(resource.RLIMIT_AS, (memory, resource.getrlimit(resource.RLIMIT_AS)[1]))
    except (ValueError, OSError):
        pass
    logging.disable(logging.CRITICAL)  # math-verify logs every failed parse

    from math_verify import parse, verify

    def on_alarm(signum, frame):
        raise _SoftTimeout

    signal.signal(signal.SIGALRM, on_alarm)

    parent = os.getppid()

    def watch_parent():  # exit if the parent dies while we are idle (stdin EOF also covers this)
        while True:
            time.sleep(2)
            if os.getppid() != parent:
                os._exit(0)

    threading.Thread(target=watch_parent, daemon=True).start()

    gold_cache: OrderedDict = OrderedDict()

    def parse_answer(text: str):
        return parse("\\boxed{" + text + "}", parsing_timeout=None)

    def parse_gold(text: str):
        if text in gold_cache:
            gold_cache.move_to_end(text)
            return gold_cache[text]
        parsed = parse_answer(text)
        gold_cache[text] = parsed
        if len(gold_cache) > 4096:
            gold_cache.popitem(last=False)
        return parsed

    # Warm up lazy imports inside math-verify/sympy so the first real answer is not charged for them.
    verify(parse_gold("\\frac{1}{2}"), parse_answer("0.5"), timeout_seconds=None)
    _canonical_key(parse_answer("x^2+1"))
    protocol_out.write(json.dumps({"ready": True}) + "\n")

    for line in sys.stdin:
        reply = {"ok": False, "key": None}
        try:
            request = json.loads(line)
            # Per-request CPU ceiling: the kernel kills us if C code (e.g. a huge integer power) runs away
            # after the parent has gone; normally the parent's wall-clock kill comes first.
            used = resource.getrusage(resource.RUSAGE_SELF)
            cpu_now = used.ru_utime + used.ru_stime
            limit = int(cpu_now + float(request.get("cpu_budget_s", 5))) + 1
            resource.setrlimit(resource.RLIMIT_CPU, (limit, resource.RLIM_INFINITY))
            signal.setitimer(signal.ITIMER_REAL, float(request.get("soft_timeout_s", 2.0)))
            try:
                pred = parse_answer(request["pred"])
                gold = parse_gold(request["gold"])
                reply["ok"] = bool(gold) and bool(pred) and verify(gold, pred, timeout_seconds=None)
                try:  # a key that cannot be built in time must not lose the verdict
                    reply["key"] = _canonical_key(pred)
                except BaseException:  # noqa: BLE001
                    reply["key"] = None
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        except _SoftTimeout:
            reply = {"ok": False, "key": None, "error": "soft_timeout"}
        except BaseException as error:  # noqa: BLE001 - any failure is a wrong answer, never a crash
            reply = {"ok": False, "key": None, "error": type(error).__name__}
        try:
            protocol_out.write(json.dumps(reply) + "\n")
        except (TypeError, ValueError):
            protocol_out.write(json.dumps({"ok": False, "key": None, "error": "unserialisable"}) + "\n")


def _cli() -> None:
    import argparse

    parser = argparse.ArgumentParser(description="Grade one response (prints the Grade).")
    parser.add_argument("--task", required=True, choices=sorted(TASKS))
    parser.add_argument("--reference", required=True)
    parser.add_argument("response")
    args = parser.parse_args()
    print(grade(args.response, args.reference, args.task))


if __name__ == "__ead_grader_worker__":
    _worker_main()
elif __name__ == "__main__":
    _cli()
