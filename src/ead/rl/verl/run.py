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
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from ead.io import atomic_path
from ead.rl.verl.convert import convert_run, logged_training_steps, metrics_files
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


def trainer_environment(settings: VerlSettings, run_dir: Path) -> dict:
    """The trainer's environment: ours plus, on ``rl.verl.device: cpu``, the CPU platform's (after its version check:
    :mod:`ead.rl.verl.cpu_stack`; the platform module itself loads inside verl's processes only)."""
    env = {**os.environ, "VERL_FILE_LOGGER_PATH": str(run_dir / "metrics.jsonl")}
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


def run_trainer(command: list[str], env: dict, run_dir: Path) -> None:
    """Run verl's trainer; a failure is one error naming the exit status and where its log went. Processes the trainer
    leaves running are stopped either way."""
    adopt_orphans()
    before = descendants()
    result = subprocess.run(command, env=env)
    leftover = stop_leftover_processes(keep=before)
    if leftover:
        print(f"ead.rl.verl.run: stopped {len(leftover)} processes the trainer left running: {sorted(set(leftover))}",
              file=sys.stderr, flush=True)
    if result.returncode != 0:
        status = result.returncode
        reason = f"killed by signal {-status}" if status < 0 else f"exit status {status}"
        raise RuntimeError(f"verl's trainer failed ({reason}) for {run_dir}; its output is above in this log. No table "
                           "written; rerunning resumes from the last checkpoint (trainer.resume_mode=auto)")


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
    resume = max((step for step in saved if logged >= set(range(1, step + 1))), default=0)
    for step in saved:
        if step > resume:
            print(f"ead.rl.verl.run: checkpoint global_step_{step} is ahead of the logged steps (the job was stopped "
                  f"between verl's checkpoint and its metrics); removed, resuming from step {resume}", flush=True)
            shutil.rmtree(checkpoints / f"global_step_{step}")
    marker = checkpoints / "latest_checkpointed_iteration.txt"
    if resume:
        with atomic_path(marker) as tmp:
            Path(tmp).write_text(str(resume))
    elif marker.exists():
        marker.unlink()
    return resume


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
    env = trainer_environment(settings.backend.verl, run_dir)
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
