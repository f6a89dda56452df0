"""The grader's worker subprocesses: math-verify under a CPU-time budget, from any thread.

math-verify's own timeout uses ``signal.alarm`` and only works in a main thread, so parsing and verification
run in persistent worker subprocesses (plain ``subprocess``, so it works from threads, daemonic
multiprocessing workers and Ray actors), speaking JSON lines over pipes (see :func:`serve`).

The limit is what an answer costs, not how busy the machine is: each request gets a budget of the worker's own CPU
time. Inside the worker a CPU-time interval timer (``ITIMER_PROF``) interrupts Python-level work at the budget
without a restart, and the kernel's CPU-time limit (``RLIMIT_CPU``, a second later) kills a worker stuck in C code
(a huge integer power). The parent keeps only a wall-clock backstop :data:`WALL_BACKSTOP_FACTOR` times the budget
(a worker that is stopped or starved); past it the worker is killed and replaced (a warm standby takes over). A
wall-clock limit used to turn right answers into timeouts on a loaded machine. An address-space limit
turns memory bombs into MemoryError.

Parent side: :class:`Worker` (one slot, restarted on trouble). Child side: :func:`serve`. The pool, cache
and policy are in :mod:`ead.rewards.grader`. Not run directly; ``python -m ead.rewards`` grades one answer.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from pathlib import Path

__all__ = ["GraderTimeout", "GraderWorkerError", "WALL_BACKSTOP_FACTOR", "Worker", "WORKER_STARTUP_TIMEOUT_S", "serve"]

WORKER_STARTUP_TIMEOUT_S = 120.0  # importing sympy + math-verify on a loaded machine
#: The parent's wall-clock backstop per request, in multiples of the CPU budget: a worker on a loaded machine gets a
#: share of a core, so its wall time exceeds its CPU time; only a stopped or starved worker reaches this.
WALL_BACKSTOP_FACTOR = 5.0
# The directory holding the ``ead`` package this file belongs to (src/ in a checkout).
_SOURCE_ROOT = str(Path(__file__).resolve().parents[2])


# ---------------------------------------------------------------------------------------------------------
# Parent side
# ---------------------------------------------------------------------------------------------------------

class GraderTimeout(Exception):
    """The answer used up its CPU budget (the worker was killed by the kernel), or the worker did not answer within
    the wall-clock backstop (the parent killed it)."""


class GraderWorkerError(Exception):
    """The worker died or answered garbage (it has been killed)."""


class _Process:
    """One worker subprocess speaking JSON lines over pipes."""

    def __init__(self, max_memory_mb: int):
        # Import the worker from the same source tree as this process (not whichever ``ead`` an editable
        # install points at), with sys.path[0] (the working directory) replaced so nothing there can shadow
        # a module. The worker imports only the standard library, sympy, math-verify and ead.rewards/ead.data.
        bootstrap = (
            f"import sys; sys.path[0] = {_SOURCE_ROOT!r}; "
            f"from ead.rewards.worker import serve; serve({int(max_memory_mb)})"
        )
        self.popen = subprocess.Popen(
            [sys.executable, "-c", bootstrap],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=dict(os.environ, PYTHONUNBUFFERED="1"),
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


class Worker:
    """A worker slot: the current process, killed and replaced on any trouble.

    After the first kill the slot keeps a warm standby process, so a later kill swaps in a ready worker
    instead of making the next answer wait ~1.4 s for sympy to import.
    """

    def __init__(self, timeout_s: float, max_memory_mb: int, soft_timeout_fraction: float):
        """``timeout_s``: CPU-time budget per request; the soft timer fires at ``soft_timeout_fraction`` of it."""
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
        """Send one request; the limits start once the worker is ready. Kills the worker on failure.

        Raises GraderTimeout when the budget ran out in C code (the kernel's CPU limit killed the worker) or the
        wall-clock backstop passed; a budget that ran out in Python comes back as ``{"error": "soft_timeout"}``."""
        try:
            if self.current is None or not self.current.alive():
                self.current = _Process(self.max_memory_mb)
            self.current.wait_ready()
        except (GraderTimeout, GraderWorkerError, OSError) as error:
            self.restart()
            raise GraderWorkerError(f"worker start failed: {error!r}") from error
        # the kernel's kill, a second past the budget (RLIMIT_CPU counts whole seconds)
        cpu_budget_s = self.timeout_s + 1
        payload = dict(payload, soft_timeout_s=self.soft_timeout_s, cpu_budget_s=cpu_budget_s)
        try:
            self.current.popen.stdin.write((json.dumps(payload) + "\n").encode())
            self.current.popen.stdin.flush()
            return self.current.read_line(time.monotonic() + WALL_BACKSTOP_FACTOR * (cpu_budget_s + 1))
        except GraderTimeout:
            self.restart()
            raise
        except (GraderWorkerError, OSError, ValueError) as error:
            killed_by_cpu_limit = self._killed_by_cpu_limit()
            self.restart()
            if killed_by_cpu_limit:
                raise GraderTimeout from error
            raise GraderWorkerError(repr(error)) from error

    def _killed_by_cpu_limit(self) -> bool:
        """Whether the current worker died of the kernel's CPU-time limit (SIGXCPU, or SIGKILL at the hard limit)."""
        import signal

        try:
            code = self.current.popen.wait(timeout=5)
        except Exception:  # noqa: BLE001 - still running: it answered garbage
            return False
        return code in (-signal.SIGXCPU, -signal.SIGKILL)


# ---------------------------------------------------------------------------------------------------------
# Child side. Imports only the standard library, sympy, math-verify and ead.rewards.extraction.
# ---------------------------------------------------------------------------------------------------------

class _SoftTimeout(BaseException):
    """Raised by the worker's interval timer; a BaseException so math-verify's ``except Exception`` lets it through."""


def serve(max_memory_mb: int) -> None:  # pragma: no cover - exercised through the subprocess in tests
    """The worker's main loop: one JSON request per stdin line, one JSON reply per line on the real stdout.

    Requests: ``{"op": "grade", "gold": text, "pred": text, "soft_timeout_s": s, "cpu_budget_s": s}``, the
    texts as :mod:`ead.rewards.extraction` prepares them. Reply: ``{"ok": bool, "key": str | None,
    "found": bool}`` (``found``: math-verify extracted something from ``pred``), plus ``"error"`` on failure.
    """
    import logging
    import resource
    import signal

    protocol_out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything a library prints goes to stderr, never into the protocol stream
    sys.stdout = sys.stderr

    try:  # a worker killed by its CPU limit (SIGXCPU) must not leave a core file in the job's directory
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ValueError, OSError):
        pass
    memory = int(max_memory_mb) * 2**20
    try:
        resource.setrlimit(resource.RLIMIT_AS, (memory, resource.getrlimit(resource.RLIMIT_AS)[1]))
    except (ValueError, OSError):
        pass
    logging.disable(logging.CRITICAL)  # math-verify logs every failed parse

    from math_verify import verify

    from ead.rewards.extraction import canonical_key, parse_text

    def on_alarm(signum, frame):
        raise _SoftTimeout

    signal.signal(signal.SIGPROF, on_alarm)

    parent = os.getppid()

    def watch_parent():  # exit if the parent dies while we are idle (stdin EOF also covers this)
        while True:
            time.sleep(2)
            if os.getppid() != parent:
                os._exit(0)

    threading.Thread(target=watch_parent, daemon=True).start()

    gold_cache: OrderedDict = OrderedDict()  # references repeat across samples; parse each once

    def parse_gold(text: str):
        if text in gold_cache:
            gold_cache.move_to_end(text)
            return gold_cache[text]
        parsed = parse_text(text)
        gold_cache[text] = parsed
        if len(gold_cache) > 4096:
            gold_cache.popitem(last=False)
        return parsed

    # Warm up lazy imports inside math-verify/sympy so the first real answer is not charged for them.
    verify(parse_gold("$\\frac{1}{2}$"), parse_text("so \\boxed{0.5}"), timeout_seconds=None)
    canonical_key(parse_text("$x^2+1$"))
    protocol_out.write(json.dumps({"ready": True}) + "\n")

    for line in sys.stdin:
        reply = {"ok": False, "key": None, "found": False}
        try:
            request = json.loads(line)
            # The request's CPU budget: the soft timer (CPU time, ITIMER_PROF) interrupts Python-level work; the
            # kernel's CPU limit (whole seconds, a little later) kills us if C code (a huge integer power) runs away.
            used = resource.getrusage(resource.RUSAGE_SELF)
            cpu_now = used.ru_utime + used.ru_stime
            limit = int(cpu_now + float(request.get("cpu_budget_s", 5))) + 1
            resource.setrlimit(resource.RLIMIT_CPU, (limit, resource.RLIM_INFINITY))
            signal.setitimer(signal.ITIMER_PROF, float(request.get("soft_timeout_s", 2.0)))
            try:
                pred = parse_text(request["pred"])
                gold = parse_gold(request["gold"])
                reply["found"] = bool(pred)
                reply["ok"] = bool(gold) and bool(pred) and verify(gold, pred, timeout_seconds=None)
                try:  # a key that cannot be built in time must not lose the verdict
                    reply["key"] = canonical_key(pred)
                except BaseException:  # noqa: BLE001
                    reply["key"] = None
            finally:
                signal.setitimer(signal.ITIMER_PROF, 0)
        except _SoftTimeout:
            reply = {"ok": False, "key": None, "found": False, "error": "soft_timeout"}
        except BaseException as error:  # noqa: BLE001 - any failure is a wrong answer, never a crash
            reply = {"ok": False, "key": None, "found": False, "error": type(error).__name__}
        try:
            protocol_out.write(json.dumps(reply) + "\n")
        except (TypeError, ValueError):
            protocol_out.write(json.dumps({"ok": False, "key": None, "error": "unserialisable"}) + "\n")
