"""A cell -> verl's Hydra overrides (ead.rl.verl.overrides): every cell of the paper and verl profiles composes
with verl 0.9.1's real config and passes its validation, verl's entry point accepts the runner's command, and the
overrides equal the snapshot in tests/fixtures/verl_overrides.json."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib
import yaml

from ead.rl.verl import overrides
from ead.rl.verl.overrides import CellPaths, compose_verl_config, verl_overrides
from ead.settings import load_layered_config
from ead.settings.cell import CellSettings
from ead.settings.rl import Cell, cell_settings, expand_grid, verl_cell_settings
from ead.settings.rl import verl_cell_settings as cell_document
from ead.tables import evaluated_steps, expected_eval_steps
from tests.conftest import (
    CELLS,
    GPU_SMOKE,
    PAPER,
    PATHS,
    VERL_CPU,
    profile,
    profile_by_name,
)

ROOT = Path(__file__).resolve().parents[3]


def test_verls_test_freq_validates_at_the_evaluated_steps_the_trainer_and_the_completeness_check_use():
    """verl 0.9.1 validates before training (val_before_train), at every multiple of test_freq and at the last step
    (trainer/ppo/v1/trainer_base.py, fit); with ead.rl.verl.overrides.validation_frequency those are exactly
    evaluated_steps, whatever rl.eval.every and rl.steps, and the completeness check expects the same."""
    import dataclasses

    from ead.rl.verl.overrides import validation_frequency

    settings = verl_cell_settings(profile_by_name("verl_cpu"), Cell("tiny_arith", "dapo", "ead", 4, 0))
    for steps in range(1, 13):
        for every in range(1, 16):
            cell = dataclasses.replace(settings, budget=dataclasses.replace(settings.budget, steps=steps),
                                       eval=dataclasses.replace(settings.eval, every=every))
            test_freq = validation_frequency(cell)
            verl_validates = [0, *(step for step in range(1, steps + 1) if step == steps or step % test_freq == 0)]
            assert verl_validates == evaluated_steps(steps, every), (steps, every)
            expected = expected_eval_steps(steps, every, own_sampler=False)
            assert expected({"evaluated_with": "eval_tau"}) == verl_validates


def load_profile(name: str) -> dict:
    return load_layered_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / f"{name}.yaml")


def test_the_processor_name_verl_gets_names_the_class_and_the_package_registers_no_vllm_plugin():
    """verl's engines get the processor by name; the package itself declares no ``vllm.logits_processors`` entry
    point, which vLLM would load into every engine of the environment (docs/use-ead.md, "vLLM")."""
    import importlib

    module, name = overrides.EAD_PROCESSOR_FQCN.split(":")
    assert name in importlib.import_module(module).__all__
    assert "vllm.logits_processors" not in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"].get(
        "entry-points", {})


def covering_cells(cells) -> list[Cell]:
    """A few cells of ``cells`` in which every policy, algorithm, sampler and rollout n appears at least once (greedy:
    each cell taken brings the most values not yet seen), in grid order."""
    dimensions = ("policy", "algorithm", "sampler", "n")
    def values(cell):
        return {(dimension, getattr(cell, dimension)) for dimension in dimensions}

    missing = set().union(*map(values, cells))
    chosen = []
    while missing:
        best = max(cells, key=lambda cell: len(missing & values(cell)))
        chosen.append(best)
        missing -= values(best)
    return [cell for cell in cells if cell in chosen]


#: Composing one cell with Hydra costs ~0.7 s, so the fast lane composes a covering set of the paper grid (every
#: policy, algorithm, sampler and n: each value our overrides write) and the whole suite every cell (marked slow).
COVERING = covering_cells(CELLS)
PAPER_CELLS = [pytest.param(cell, id=f"{cell.policy}-{cell.algorithm}-{cell.sampler}-n{cell.n}",
                            marks=() if cell in COVERING else pytest.mark.slow) for cell in CELLS]


def test_the_covering_cells_name_every_policy_algorithm_sampler_and_n_of_the_paper_grid():
    for dimension in ("policy", "algorithm", "sampler", "n"):
        assert {getattr(cell, dimension) for cell in COVERING} == {getattr(cell, dimension) for cell in CELLS}
    assert len(COVERING) < len(CELLS)


@pytest.fixture(scope="module")
def composed():
    """verl's real ppo_trainer config with our overrides for a cell of the paper grid, composed once per cell the
    session runs."""
    configs = {}

    def compose(cell):
        if cell not in configs:
            configs[cell] = overrides.compose_verl_config(overrides.verl_overrides(cell_document(PAPER, cell), PATHS))
        return configs[cell]

    return compose


@pytest.mark.parametrize("cell", PAPER_CELLS)
def test_every_paper_cell_composes_with_verls_config(composed, cell):
    cfg = composed(cell)
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


@pytest.mark.parametrize("cell", PAPER_CELLS)
def test_composed_configs_pass_verls_own_validation(composed, cell):
    """verl's main_ppo checks (batch divisibility over GPUs, micro batches, actor/rollout dataclasses) accept
    each cell, and the rollout-correction block builds verl's typed TIS config."""
    from omegaconf import OmegaConf
    from verl.trainer.config.algorithm import RolloutCorrectionConfig
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import omega_conf_to_dataclass
    from verl.utils.config import validate_config as verl_validate_config

    cfg = composed(cell)
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


def test_every_verl_cells_overrides_equal_the_snapshot_taken_before_the_cell_document():
    """The verl cell went from a raw config slice re-resolved in the job to one document resolved in the
    DAG. tests/fixtures/verl_overrides.json holds every paper, gpu_smoke and verl_cpu cell's composed overrides and
    agent-loop entries made by the code before that change (plus, for verl_cpu, the three worker counts its profile
    set later); the document must give exactly the same."""
    snapshot = json.loads((ROOT / "tests" / "fixtures" / "verl_overrides.json").read_text())
    paths = overrides.CellPaths(model="/m", train_files="/train.parquet", val_files="/val.parquet",
                                agent_loop_config="/run/agent_loop.yaml", run_dir="/run")
    now = {}
    for profile in ("paper", "gpu_smoke", "verl_cpu"):  # noqa: F402 (a local name; the helper profile is not used here)
        config = load_profile(profile)
        for cell in expand_grid(config["rl"]):
            document = CellSettings.from_json(cell_document(config, cell).to_json())  # as the rule passes it
            now[f"{profile}:{cell.directory}"] = {"overrides": overrides.verl_overrides(document, paths),
                                                  "agent_loop": overrides.agent_loop_entries(document)}
    assert sorted(now) == sorted(snapshot)
    for key in snapshot:
        assert now[key] == snapshot[key], key


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
