"""Run one RL grid cell with verl 0.9.1 (on GPUs, or on this CPU with rl.verl.device: cpu) and write its tables.

    python -m ead.rl.verl.run --settings CELL.json --model results/paper/models/qwen2.5-math-1.5b \\
        --train results/paper/data/train.parquet --val results/paper/data/val.parquet \\
        --run-dir results/rl_runs/<cell> --out-dir results/rl/<cell>

Writes into ``--run-dir``: ``agent_loop.yaml`` (our agent loop and the cell's schedule), ``overrides.txt`` (the
Hydra overrides, one per line: the run's provenance), ``metrics.jsonl`` (verl's file logger), ``validation/``
(verl's validation dumps) and ``checkpoints/``; then converts them (:mod:`ead.rl.verl.convert`) into
``--out-dir``: steps.csv, eval_problems.csv and eval.csv, the tables of the CPU backend (eval.csv at k = 1, 2, 4, ...
up to ``rl.eval.n``: the slice leaves rl.eval.k out, so changing it never reruns a verl job; the aggregation reports
the config's k from eval_problems.csv). ``--settings`` is the cell's document, resolved once in the DAG
(:func:`ead.settings.rl.verl_cell_settings`: the typed settings of :mod:`ead.settings.cell` with the verl backend
section, the verl and grader blocks); this job reads nothing else of the config.
A restarted job resumes from the last checkpoint (``trainer.resume_mode=auto``); the previous ``metrics.jsonl`` is
kept as ``metrics.<k>.jsonl`` because verl's file logger truncates its file on start.

``--check`` composes verl's config with the overrides (no GPU needed), prints the command and exits.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import importlib.util
import json
import math
import numbers
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from ead.io import atomic_path
from ead.rl.verl.convert import STEP_COLUMNS, convert_run, logged_training_steps, metrics_files
from ead.rl.verl.overrides import CellPaths, agent_loop_entries, compose_verl_config, verl_overrides
from ead.settings.base import ConfigError
from ead.settings.cell import CellSettings, VerlSettings
from ead.settings.rl import reported_ks


def read_cell(text: str) -> CellSettings:
    """The cell's settings from its document (ead.settings.cell refuses a missing, unknown or mistyped key, naming
    it); a CPU cell's document (no verl backend section), a measured schedule or a fixed training pool (CPU options)
    is refused too."""
    settings = CellSettings.from_json(text)
    if settings.backend is None:
        raise ConfigError("--settings is a CPU cell's document (backend: null): pass the document of "
                          "ead.settings.rl.verl_cell_settings (the workflow's rule rl_cell_verl does)")
    if settings.training.measured:
        raise ConfigError(f"sampler {settings.sampler!r}: `measured: true` is read by the CPU trainer only")
    if settings.budget.train_pool is not None:
        raise ConfigError(f"budget.train_pool = {settings.budget.train_pool}: a fixed training pool is read by the CPU "
                          "trainer only (verl draws its prompts from paper_data.train's data loader); set "
                          "rl.train_pool: null")
    return settings


def prepare(settings: CellSettings, paths: CellPaths) -> list[str]:
    """Write agent_loop.yaml and overrides.txt into the run directory; return the overrides."""
    run_dir = Path(paths.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    Path(paths.agent_loop_config).write_text(yaml.safe_dump(agent_loop_entries(settings), sort_keys=False))
    overrides = verl_overrides(settings, paths)
    (run_dir / "overrides.txt").write_text("\n".join(overrides) + "\n")
    return overrides


def check_trl_for_verl() -> None:
    """RuntimeError naming the installed TRL when verl's trainer could not start beside it: verl 0.9.1's FSDP engine
    (``verl.models.transformers.monkey_patch.apply_monkey_patch``) imports ``AutoModelForCausalLMWithValueHead`` from
    ``trl.experimental.ppo`` or ``trl`` whenever TRL is importable, and TRL 1.16 has it in neither, so every actor
    worker would fail at its start (the ``trl`` extra is for another environment: docs/use-ead.md, "TRL")."""
    if importlib.util.find_spec("trl") is None:
        return
    for module in ("trl.experimental.ppo", "trl"):
        try:
            if hasattr(importlib.import_module(module), "AutoModelForCausalLMWithValueHead"):
                return
        except ImportError:
            continue
    raise RuntimeError(f"TRL {importlib.metadata.version('trl')} is installed here, and verl 0.9.1's actor imports "
                       "AutoModelForCausalLMWithValueHead from TRL whenever TRL is installed; this TRL has none, so "
                       "verl's trainer would fail at its first worker. Run verl's cells in an environment without "
                       "TRL (this repository's .venv-vllm; `pip uninstall trl`)")


def trainer_environment(settings: VerlSettings, run_dir: Path) -> dict:
    """The trainer's environment: ours (the file logger's path, fault handlers on) plus, on ``rl.verl.device: cpu``,
    the CPU platform's (after its version check: :mod:`ead.rl.verl.cpu_stack`; the platform module itself loads inside
    verl's processes only)."""
    # PYTHONFAULTHANDLER: every Python process of the run (Ray's workers, vLLM's engine and workers inherit it) writes
    # its threads' tracebacks to the log when it dies by a fatal signal (SIGABRT, SIGSEGV): where an engine aborted
    env = {**os.environ, "VERL_FILE_LOGGER_PATH": str(run_dir / "metrics.jsonl"), "PYTHONFAULTHANDLER": "1"}
    if settings.device == "cpu":
        from ead.rl.verl.cpu_stack import TRAINER_ENVIRONMENT, check_versions

        check_versions()
        env.update(TRAINER_ENVIRONMENT)
    return env


#: prctl option (linux/prctl.h): orphaned descendants are reparented to this process instead of init
PR_SET_CHILD_SUBREAPER = 36


def adopt_orphans() -> None:
    """Become the subreaper of everything the trainer starts (Linux): when the trainer dies under Ray (a lost Ray head,
    a crash), Ray's agents and vLLM's engine processes are orphaned and keep their memory; reparented here, they can be
    stopped (:func:`stop_leftover_processes`)."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def descendants() -> set[int]:
    import psutil

    return {process.pid for process in psutil.Process().children(recursive=True)}


def stop_leftover_processes(keep: set[int], grace_s: float = 10.0) -> list[str]:
    """Terminate (then kill) every process descending from this one but those in ``keep``; returns their names."""
    import psutil

    leftover = [process for process in psutil.Process().children(recursive=True) if process.pid not in keep]
    names = []
    for process in leftover:
        try:
            names.append(process.name())
            process.terminate()
        except psutil.NoSuchProcess:
            pass
    _, alive = psutil.wait_procs(leftover, timeout=grace_s)
    for process in alive:
        try:
            process.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(alive, timeout=grace_s)
    return names


#: prctl option (linux/prctl.h): the signal this process gets when its parent dies
PR_SET_PDEATHSIG = 1

#: vLLM's lines saying its engine is gone for good: a worker process died (vLLM then shuts the executor down), or the
#: engine core hit a fatal error. verl 0.9.1's trainer does not notice: it waits for the rollout forever.
ENGINE_FATAL = re.compile(r"Worker proc \S+ died unexpectedly|EngineCore encountered a fatal error|EngineDeadError")
#: Ray colours its workers' prefixes; a quoted line is read without them
ANSI_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


@dataclass(frozen=True)
class Watchdog:
    """When to stop a trainer that will not finish. ``fatal_grace_s``: how long after vLLM's first fatal line the
    trainer may take to exit by itself. Progress is a training step logged to ``metrics.jsonl``; once one is, a gap
    longer than ``max(stall_floor_s, stall_factor x the longest gap so far)`` is a stall (before the first step, only
    the engine's fatal lines and the trainer's exit count: start-up and the first validation vary too much)."""

    fatal_grace_s: float = 30.0
    stall_floor_s: float = 900.0
    stall_factor: float = 5.0
    poll_s: float = 1.0

    def __post_init__(self):
        for name in ("fatal_grace_s", "stall_floor_s", "stall_factor", "poll_s"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value <= 0:
                raise ValueError(f"Watchdog: {name} must be a finite number > 0, got {value!r}")


class TrainerStopped(RuntimeError):
    """The trainer was stopped from outside: this process got SIGTERM or SIGHUP (or its parent died)."""


def die_with_parent() -> None:
    """Get SIGTERM when the parent (Snakemake, a test) dies, even by SIGKILL (Linux), and turn SIGTERM and SIGHUP into
    :class:`TrainerStopped`, so that the trainer and everything it started are stopped on the way out."""
    def stop(signum, frame):
        raise TrainerStopped(f"ead.rl.verl.run got signal {signum}")

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGHUP, stop)
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() == 1:  # the parent died before the call above
            raise TrainerStopped("ead.rl.verl.run's parent is gone")


def log_location() -> str:
    """Where this process's output goes (the rule's or test's log), for an error message to name."""
    try:
        target = os.readlink("/proc/self/fd/1")
    except OSError:
        return "this job's output"
    return target if target.startswith("/") and Path(target).is_file() else "this job's output"


class TrainerOutput:
    """The trainer's output, copied line by line to this process's stdout (the cell's log), with vLLM's first fatal
    line kept (a reader thread)."""

    def __init__(self, stream):
        self.first_fatal: str | None = None
        self.fatal_at: float | None = None
        self.thread = threading.Thread(target=self._copy, args=(stream,), daemon=True)
        self.thread.start()

    def _copy(self, stream) -> None:
        for line in iter(stream.readline, b""):
            sys.stdout.buffer.write(line)
            sys.stdout.buffer.flush()
            if self.first_fatal is None and ENGINE_FATAL.search(text := line.decode(errors="replace")):
                self.first_fatal, self.fatal_at = ANSI_COLOUR.sub("", text).strip(), time.monotonic()


class Progress:
    """Training steps logged to ``metrics.jsonl`` and the gaps between them."""

    def __init__(self, run_dir: Path, watchdog: Watchdog):
        self.path, self.watchdog = run_dir / "metrics.jsonl", watchdog  # this attempt's log (an earlier one is renamed)
        self.marker = f'"{STEP_COLUMNS["reward_mean"]}"'.encode()  # in a training step's line only (is_training_record)
        self.steps, self.last_at, self.longest_gap, self.size = 0, time.monotonic(), 0.0, -1

    def bound(self) -> float:
        return max(self.watchdog.stall_floor_s, self.watchdog.stall_factor * self.longest_gap)

    def stalled_for(self) -> float | None:
        """Seconds since the last step if that is past the bound, else None."""
        now = time.monotonic()
        try:
            size = self.path.stat().st_size
            steps = self.steps if size == self.size else sum(
                1 for line in self.path.read_bytes().splitlines() if self.marker in line)
        except OSError:  # not written yet
            size, steps = -1, 0
        self.size = size
        if steps > self.steps:
            if self.steps:
                self.longest_gap = max(self.longest_gap, now - self.last_at)
            self.steps, self.last_at = steps, now
            return None
        return now - self.last_at if self.steps and now - self.last_at > self.bound() else None


def run_trainer(command: list[str], env: dict, run_dir: Path, watchdog: Watchdog = Watchdog()) -> None:
    """Run verl's trainer and watch it; a failure is one error naming what happened and where its log went. Processes
    the trainer leaves running are stopped either way.

    Stopped with everything it started (Ray's head and workers, vLLM's engines): ``fatal_grace_s`` after vLLM says its
    engine died, if the trainer has not exited by then (verl waits for a dead rollout forever); when no training step
    is logged within the stall bound (:class:`Watchdog`); and when this process is told to stop (SIGTERM, SIGHUP, its
    parent's death: :func:`die_with_parent`)."""
    adopt_orphans()
    before = descendants()
    trainer = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    output, progress = TrainerOutput(trainer.stdout), Progress(run_dir, watchdog)
    failure = None
    try:
        while trainer.poll() is None:
            time.sleep(watchdog.poll_s)
            if output.fatal_at is not None and time.monotonic() - output.fatal_at > watchdog.fatal_grace_s:
                failure = (f"vLLM's rollout engine died ({output.first_fatal!r}) and verl's trainer did not stop "
                           f"within {watchdog.fatal_grace_s:.0f} s")
            elif (stalled := progress.stalled_for()) is not None:
                failure = (f"verl's trainer logged no training step for {stalled:.0f} s (the bound: max("
                           f"{watchdog.stall_floor_s:g} s, {watchdog.stall_factor:g} x the longest gap between steps "
                           f"so far), here {progress.bound():.0f} s)")
            if failure:
                break
    finally:
        leftover = stop_leftover_processes(keep=before)
        trainer.wait()
        output.thread.join(timeout=10)
    if leftover and not failure:
        print(f"ead.rl.verl.run: stopped {len(leftover)} processes the trainer left running: {sorted(set(leftover))}",
              file=sys.stderr, flush=True)
    rerun = "No table written; rerunning resumes from the last checkpoint (trainer.resume_mode=auto)"
    if failure:
        raise RuntimeError(f"{failure}; stopped it and the {len(leftover)} processes it started for {run_dir}. The "
                           f"cell's log: {log_location()}. {rerun}")
    if trainer.returncode != 0:
        status = trainer.returncode
        reason = f"killed by signal {-status}" if status < 0 else f"exit status {status}"
        fatal = f"; vLLM's rollout engine died first: {output.first_fatal!r}" if output.first_fatal else ""
        raise RuntimeError(f"verl's trainer failed ({reason}) for {run_dir}{fatal}; its output is above in "
                           f"{log_location()}. {rerun}")


def align_checkpoints_with_log(run_dir: Path) -> int:
    """Make verl resume from the newest checkpoint whose steps are all in the file logger; returns that step (0: start
    afresh). verl 0.9.1 saves a step's checkpoint before it validates and logs the step (``trainer/ppo/v1/
    trainer_base.py`` ``fit``), so a job killed in between leaves a checkpoint ahead of its log: resumed from it, verl
    would never log that step again and the cell could never convert (a partial run). Newer checkpoints are removed
    and ``latest_checkpointed_iteration.txt`` (what ``resume_mode=auto`` reads) points at the kept one."""
    checkpoints = run_dir / "checkpoints"
    saved = sorted(int(path.name.removeprefix("global_step_")) for path in checkpoints.glob("global_step_*")
                   if path.name.removeprefix("global_step_").isdigit())
    if not saved:
        return 0
    logged = set(logged_training_steps(run_dir))
    # verl writes a step's validation dump in a thread after it logs the step, so a job stopped meanwhile leaves a
    # damaged dump that no later step rewrites: resume from before it, so that verl validates that step again
    damaged = damaged_validation_dumps(run_dir)
    first_damaged = min(damaged, default=math.inf)
    resume = max((step for step in saved if logged >= set(range(1, step + 1)) and step < first_damaged), default=0)
    for step in sorted(damaged):
        print(f"ead.rl.verl.run: validation dump {damaged[step]}; removed, resuming from step {resume}, before it",
              flush=True)
        (run_dir / "validation" / f"{step}.jsonl").unlink()
    for step in saved:
        if step > resume:
            print(f"ead.rl.verl.run: checkpoint global_step_{step} is ahead of the logged steps or of a complete "
                  f"validation dump (the job was stopped between them); removed, resuming from step {resume}",
                  flush=True)
            shutil.rmtree(checkpoints / f"global_step_{step}")
    marker = checkpoints / "latest_checkpointed_iteration.txt"
    if resume:
        with atomic_path(marker) as tmp:
            Path(tmp).write_text(str(resume))
    elif marker.exists():
        marker.unlink()
    return resume


def damaged_validation_dumps(run_dir: Path) -> dict[int, str]:
    """{step: what is wrong} for each of verl's validation dumps (``validation/{step}.jsonl``) that is not whole: a
    last line without its newline (cut mid-line) or a line that is not a JSON object."""
    damaged = {}
    for path in (run_dir / "validation").glob("*.jsonl"):
        if not path.stem.isdigit():
            continue
        text = path.read_text(errors="replace")
        if text and not text.endswith("\n"):
            damaged[int(path.stem)] = f"{path} ends mid-line (the job was stopped while verl wrote it)"
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            try:
                ok = isinstance(json.loads(line), dict)
            except ValueError:
                ok = False
            if not ok:
                damaged[int(path.stem)] = f"{path} line {number} is not a JSON object"
                break
    return damaged


def keep_previous_metrics(run_dir: Path) -> None:
    current = run_dir / "metrics.jsonl"
    if current.exists():
        current.rename(run_dir / f"metrics.{len(metrics_files(run_dir))}.jsonl")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--settings", required=True,
                        help="the cell's document (ead.settings.rl.verl_cell_settings(...).to_json()): a file path or "
                             "the JSON itself")
    parser.add_argument("--model", required=True, help="local model directory")
    parser.add_argument("--train", required=True, help="verl-format training parquet")
    parser.add_argument("--val", required=True, help="verl-format validation parquet")
    parser.add_argument("--run-dir", required=True)
    parser.add_argument("--out-dir", required=True, help="where steps.csv, eval_problems.csv, eval.csv go")
    parser.add_argument("--check", action="store_true", help="compose verl's config and print the command only")
    args = parser.parse_args(argv)

    text = args.settings if args.settings.lstrip().startswith("{") else Path(args.settings).read_text()
    settings = read_cell(text)
    run_dir = Path(args.run_dir).resolve()
    paths = CellPaths(model=str(Path(args.model).resolve()), train_files=str(Path(args.train).resolve()),
                      val_files=str(Path(args.val).resolve()), agent_loop_config=str(run_dir / "agent_loop.yaml"),
                      run_dir=str(run_dir))
    try:
        overrides = prepare(settings, paths)
    except OSError as error:
        raise SystemExit(f"ead.rl.verl.run: cannot write the run directory {run_dir}: {error}") from None
    command = [sys.executable, "-m", "verl.trainer.main_ppo", *overrides]
    print(shlex.join(command), flush=True)
    composed = compose_verl_config(overrides)  # unknown keys or bad values fail here, before any GPU is touched
    if args.check:
        return
    check_trl_for_verl()
    env = trainer_environment(settings.backend.verl, run_dir)
    die_with_parent()
    align_checkpoints_with_log(run_dir)
    keep_previous_metrics(run_dir)
    run_trainer(command, env, run_dir)
    convert_run(run_dir, {**settings.cell_columns(), **settings.table_columns()}, reported_ks(settings.eval.n),
                args.out_dir, seed=settings.eval.seed,
                entropy_temperature=float(composed.actor_rollout_ref.rollout.temperature),
                total_steps=settings.budget.steps)


if __name__ == "__main__":
    from ead.rl.verl.cpu_stack import UnsupportedStackError

    try:
        main()
    except (ConfigError, UnsupportedStackError, RuntimeError, ValueError, FileNotFoundError) as error:
        # one line naming what is wrong (the rule's log keeps the trainer's own output above it)
        sys.exit(f"ead.rl.verl.run: {error}")
