"""The RL grid's settings (ead.settings.rl): experiments -> cells with lr by n, the paper and verl profiles' grids,
and what a cell's job reads; the section's rules are tests/settings/test_rl_checks.py, the claims' test_claims.py."""

import copy
from pathlib import Path

import pytest
import yaml

from ead.settings import ConfigError, load_layered_config, validate_config
from ead.settings.rl import (
    Cell,
    cell_settings,
    expand_grid,
    grid_cells,
    learning_rate,
    rl_data,
    sampler_schedule,
)
from ead.workflow import rl_figures
from tests.conftest import (
    CELLS,
    CONFIG,
    D_MAX,
    GPU_SMOKE,
    PAPER,
    SCHEMA,
    VERL_CPU,
    load,
    profile,
)

ROOT = Path(__file__).resolve().parents[2]


D_MAX_OVERLAY = ROOT / "configs" / "ablations" / "d_max_sweep.yaml"


def test_rl_run_narrows_the_grid_and_its_claims_and_figures():
    from ead.settings.rl import expand_grid
    from ead.workflow import final_figures

    config = load_layered_config(ROOT / "configs" / "config.yaml", command_line={"rl": {"run": ["primary"]}})
    validate_config(config, SCHEMA)
    assert list(config["rl"]["experiments"]) == ["primary"]
    assert {c.sampler for c in expand_grid(config["rl"])} == {"tau1.0", "ead_tis"}
    assert {c["id"] for c in config["claims"]} == {"C2", "C3", "C15", "C16", "C17", "C2-curve",
                                                   "C15-curve"}  # on its cells
    assert not any(name.startswith(("fig04", "fig05", "fig10")) for name in final_figures(config))
    with pytest.raises(ConfigError, match=r"rl\.run = \['mian'\]: \['mian'\] not in rl\.experiments"):
        load_layered_config(ROOT / "configs" / "config.yaml", command_line={"rl": {"run": ["mian"]}})


def test_paper_experiments_change_policies_and_seeds_and_keep_the_defaults_grid():
    # the paper profile includes the decomposition overlay (EAD + TIS's halves apart), as configs/full.yaml does
    default = load("config.yaml", "ablations/decomposition.yaml")["rl"]["experiments"]
    paper = load("config.yaml", "paper.yaml")["rl"]["experiments"]
    assert set(paper) == set(default)
    for name, experiment in paper.items():
        assert experiment["samplers"] == default[name]["samplers"] and experiment["n"] == default[name]["n"], name
        assert experiment["seeds"] == [0], name
    assert paper["algorithms"]["algorithms"] == ["grpo", "clip_cov", "kl_cov"]


def test_a_sampler_is_one_schedule_document_checked_by_the_registry_on_either_backend():
    config = copy.deepcopy(load("config.yaml"))
    config["rl"]["samplers"]["half"] = {"name": "two_stage", "tau_early": 1.5, "switch": 8}
    with pytest.raises(ConfigError, match=r"rl\.samplers\.half: two_stage schedule: missing parameter\(s\) "
                                          r"\['tau_late'\]"):
        validate_config(config, SCHEMA)
    config["rl"]["samplers"]["half"] = {"name": "fixed", "tau": 1.0, "switch": 8}
    with pytest.raises(ConfigError, match=r"rl\.samplers\.half: Unknown parameter\(s\) \['switch'\] for schedule "
                                          r"'fixed'; known: \['tau'\]"):
        validate_config(config, SCHEMA)
    config["rl"]["samplers"]["half"] = {"name": "ead", "tau_max": "hot"}
    with pytest.raises(ConfigError, match=r"rl\.samplers\.half: ead schedule: tau_max must be a number, got 'hot'"):
        validate_config(config, SCHEMA)
    config["rl"]["samplers"]["half"] = {"name": "cosine"}
    with pytest.raises(ConfigError, match=r"rl\.samplers\.half: Unsupported schedule 'cosine'\. Supported"):
        validate_config(config, SCHEMA)
    config["rl"]["samplers"]["half"] = {"kind": "ead"}  # the old dialect is refused by the schema, naming the key
    with pytest.raises(ConfigError, match=r"rl\.samplers\.half"):
        validate_config(config, SCHEMA)
    paper = copy.deepcopy(load("config.yaml", "paper.yaml"))
    paper["rl"]["experiments"]["main"]["samplers"].append("hot_early")
    validate_config(paper, SCHEMA)  # the vLLM processor samples two_stage too (ead.samplers.vllm_processors)
    paper["rl"]["samplers"]["hot_early"].pop("switch")
    with pytest.raises(ConfigError, match=r"rl\.samplers\.hot_early: two_stage schedule: missing parameter"):
        validate_config(paper, SCHEMA)


def test_schedule_shape_samplers_and_per_sampler_training_temperature():
    from ead.settings.rl import Cell, cell_settings, sampler_schedule

    config = copy.deepcopy(load("config.yaml"))
    samplers = config["rl"]["samplers"]
    samplers["lin"] = {"name": "linear", "tau_max": 1.2, "tau_min": 0.1, "length": 32, "tis": "token"}
    samplers["mean"] = {"name": "ead_mean", "length": 32, "tau_max": 1.5}
    samplers["tau1.2_at1"] = {"name": "fixed", "tau": 1.2, "trains_at": "one", "tis": "token"}
    validate_config(config, SCHEMA)
    assert sampler_schedule(config, "lin") == {"name": "linear", "tau_max": 1.2, "tau_min": 0.1, "length": 32}
    assert sampler_schedule(config, "mean") == {"name": "ead_mean", **config["ead"], "tau_max": 1.5, "length": 32}
    cell = Cell("tiny1m_sharp", "dapo", "tau1.2_at1", 8, 0)
    assert cell_settings(config, cell).training.trains_at == "one"  # its own, over rl.fixed_tau_trains_at
    assert cell_settings(config, Cell("tiny1m_sharp", "dapo", "tau1.2", 8, 0)).training.trains_at == "behaviour"
    samplers["lin"]["tau_min"] = 2.0
    with pytest.raises(ConfigError, match=r"rl\.samplers\.lin: linear schedule: need 0 < tau_min <= tau_max"):
        validate_config(config, SCHEMA)
    samplers["lin"] = {"name": "ead", "length": 32}
    with pytest.raises(ConfigError, match=r"rl\.samplers\.lin: Unknown parameter\(s\) \['length'\] for schedule 'ead'"):
        validate_config(config, SCHEMA)
    samplers["lin"] = {"name": "ead", "trains_at": "one"}
    with pytest.raises(ConfigError, match=r"rl\.samplers\.lin\.trains_at = 'one': only a fixed-tau sampler"):
        validate_config(config, SCHEMA)
    paper = copy.deepcopy(load("config.yaml", "paper.yaml"))
    paper["rl"]["samplers"]["mean"] = samplers["mean"]
    paper["rl"]["experiments"]["main"]["samplers"].append("mean")
    validate_config(paper, SCHEMA)  # on verl too: the vLLM processor samples every registered schedule


def test_d_max_sweep_maps_the_authors_caps_to_the_testbeds_growth():
    ead, steps = D_MAX["ead"], D_MAX["rl"]["steps"]
    growth = ead["step_factor"] * steps  # d_s grows from d0 = 25 to 105 by step 16
    caps = {name: sampler_schedule(D_MAX, name)["d_max"] for name in ("ead_tis_dmax25", "ead_tis_dmax41",
                                                                       "ead_tis_dmax73")}
    # the authors' 200 / 300 / 500 of a 200 -> 700 range: 0, 0.2, 0.6 of the growth, and every cap clamps in the run
    assert [round((cap - ead["d0"]) / growth, 1) for cap in caps.values()] == [0.0, 0.2, 0.6]
    assert all(cap < ead["d0"] + growth for cap in caps.values())
    assert sampler_schedule(D_MAX, "ead_tis")["d_max"] >= ead["d0"] + growth  # the uncapped reference never clamps
    claims = [c for c in D_MAX["claims"] if c["figure"] == "d_max" and "baseline" in c]
    assert {(c["sampler"], c["metric"]) for c in claims} == {(s, m) for s in caps for m in ("pass@16", "pass@1")}
    assert {c["baseline"] for c in claims} == {"ead_tis"} and "ead_tis" in D_MAX["paired_baselines"]
    # and the frozen cap against the best fixed temperature (D7-D8, tests/claims/test_rl.py)
    best_of = [c for c in D_MAX["claims"] if c["figure"] == "d_max" and "best_of" in c]
    assert {(c["sampler"], c["metric"]) for c in best_of} == {("ead_tis_dmax25", m) for m in ("pass@16", "pass@1")}
    validate_config(D_MAX, SCHEMA)


def test_ead_schedule_is_the_papers():
    assert PAPER["ead"] == {"tau_max": 1.2, "tau_min": 0.1, "d0": 25, "step_factor": 5, "d_max": 40000,
                            "warmup": 10, "decay_scale": 20}
    assert sampler_schedule(PAPER, "ead_tmin0.8")["tau_min"] == 0.8  # the 7B model's floor
    assert sampler_schedule(PAPER, "ead_aggressive")["tau_max"] == 2.0  # App. B's aggressive schedule
    assert PAPER["rl"]["samplers"]["ead_tis"] == {"name": "ead", "tis": "token", "tis_cap": 2.0}
    assert [sampler_schedule(PAPER, f"tau{t}")["tau"] for t in ("0.6", "1.0", "1.2")] == [0.6, 1.0, 1.2]


def test_minimal_rl_recipe_sizes_and_learning_rates():
    rl = PAPER["rl"]
    assert rl["backend"] == "verl"
    assert (rl["steps"], rl["prompts_per_step"], rl["mini_batches"], rl["max_new_tokens"]) == (500, 1024, 4, 3072)
    assert [learning_rate(rl, n) for n in (4, 8, 16)] == [1e-6, 2e-6, 4e-6]
    assert (rl["eval"]["n"], rl["eval"]["tau"], rl["eval"]["every"]) == (16, 1.0, 20) and 16 in rl["eval"]["k"]
    assert rl["algorithms"]["dapo"] == {"loss_mode": "vanilla", "clip_ratio_low": 0.2, "clip_ratio_high": 0.28,
                                        "loss_agg_mode": "token-mean", "use_kl_loss": False}
    grpo = rl["algorithms"]["grpo"]
    assert (grpo["use_kl_loss"], grpo["kl_loss_coef"], grpo["kl_loss_type"]) == (True, 0.001, "low_var_kl")
    clip_cov = rl["algorithms"]["clip_cov"]
    assert (clip_cov["clip_cov_ratio"], clip_cov["clip_cov_lb"], clip_cov["clip_cov_ub"]) == (0.0002, 1.0, 5.0)


@pytest.mark.parametrize("experiment, policies, samplers, n", [
    ("main", {"qwen2.5-math-1.5b", "llama-3.2-1b-instruct"}, {"tau0.6", "tau1.0", "tau1.2", "ead", "ead_tis"}, {8}),
    ("larger_model", {"qwen2.5-math-7b"}, {"tau0.6", "tau1.0", "tau1.2", "ead_tmin0.8"}, {8}),
    ("rollout_scaling", {"qwen2.5-math-1.5b", "llama-3.2-1b-instruct"}, {"tau1.0", "ead"}, {4, 8, 16}),
    ("off_policy", {"qwen2.5-math-1.5b"}, {"ead_aggressive", "ead_aggressive_tis"}, {8}),
])
def test_grid_uses_the_papers_models_and_samplers(experiment, policies, samplers, n):
    cells = expand_grid(PAPER["rl"], [experiment])
    assert {c.policy for c in cells} == policies
    assert {c.sampler for c in cells} == samplers and {c.n for c in cells} == n


def test_hub_models_are_the_papers():
    assert {name: entry["hub_id"] for name, entry in PAPER["paper_models"].items()} == {
        "qwen2.5-math-1.5b": "Qwen/Qwen2.5-Math-1.5B", "llama-3.2-1b-instruct": "meta-llama/Llama-3.2-1B-Instruct",
        "qwen2.5-math-7b": "Qwen/Qwen2.5-Math-7B", "llama-3-8b-instruct": "meta-llama/Meta-Llama-3-8B-Instruct",
        "deepseek-r1-distill-llama-8b": "deepseek-ai/DeepSeek-R1-Distill-Llama-8B"}
    assert {c.algorithm for c in expand_grid(PAPER["rl"], ["algorithms"])} >= {"grpo", "clip_cov"}
    assert PAPER["analyses"]["entropy_by_position"]["models"] == ["llama-3-8b-instruct"]
    assert PAPER["analyses"]["forking"]["models"] == ["deepseek-r1-distill-llama-8b"]
    assert PAPER["analyses"]["majority_scaling"]["models"] == ["qwen2.5-math-1.5b", "qwen2.5-math-7b"]


def test_grid_is_the_deduplicated_union_of_experiments_with_lr_by_n():
    rl = CONFIG["rl"]
    cells = expand_grid(rl)
    assert len(cells) == len(set(cells))
    main = expand_grid(rl, ["main"])
    assert len(main) == 1 * 5 * 1  # policies x samplers x seeds (tiny1m's: configs/ablations/calibrated_contrast.yaml)
    replicate = expand_grid(rl, ["main_replicate"])  # the sharpened policy's second seed of main
    assert {(c.policy, c.seed) for c in replicate} == {("tiny1m_sharp", 1)} and len(replicate) == 5
    shared = Cell("tiny1m_sharp", "dapo", "tau1.0", 8, 0)
    assert shared in main and shared in expand_grid(rl, ["rollout_scaling"])
    assert [learning_rate(rl, n) for n in (4, 8, 16)] == [2.5e-5, 5.0e-5, 1.0e-4]
    settings = cell_settings(CONFIG, Cell("tiny1m", "dapo", "ead_tmin0.8", 8, 1))
    assert settings.schedule == {"name": "ead", **CONFIG["ead"], "tau_min": 0.8}
    assert settings.training.lr == 5.0e-5 and settings.training.tis == "none"
    assert cell_settings(CONFIG, Cell("tiny1m", "dapo", "ead_tis", 8, 0)).training.tis == "token"
    assert cell_settings(CONFIG, Cell("tiny1m", "dapo", "tau0.6", 8, 0)).schedule == {"name": "fixed", "tau": 0.6}
    # a policy's rl_lr_scale multiplies the lr-by-n rule (the sharpened policy: by its sharpening temperature)
    sharp = CONFIG["policies"]["tiny1m_sharp"]
    assert sharp["rl_lr_scale"] == sharp["sharpen"]["temperature"]
    assert cell_settings(CONFIG, shared).training.lr == pytest.approx(5.0e-5 * sharp["rl_lr_scale"])


def test_reported_ks_are_the_powers_of_two_up_to_n_and_n():
    from ead.settings.rl import reported_ks

    assert reported_ks(16) == [1, 2, 4, 8, 16] and reported_ks(12) == [1, 2, 4, 8, 12] and reported_ks(1) == [1]


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
    # decomposition: claims only, no figure; main_replicate and primary: the CPU testbed's second seed of main and its
    # 3-seed comparison, here main's cells
    assert set(rl["experiments"]) == FIGURE_EXPERIMENTS | {"decomposition", "main_replicate", "primary"}
    assert set(expand_grid(rl, ["main_replicate"])) <= set(expand_grid(rl, ["main"]))
    assert set(expand_grid(rl, ["primary"])) <= set(expand_grid(rl, ["main"]))
    small, fixed = ["qwen2.5-math-1.5b", "llama-3.2-1b-instruct"], ["tau0.6", "tau1.0", "tau1.2"]
    assert {name: cells for name, cells in rl["experiments"].items() if name not in ("main_replicate", "primary")} == {
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


DEFAULT = ROOT / "configs" / "config.yaml"


POSITIVE_CONTROL = ROOT / "configs" / "ablations" / "positive_control.yaml"


def test_the_positive_control_grid_is_its_strategy_policy_alone():
    config = load_layered_config(DEFAULT, POSITIVE_CONTROL)
    validate_config(config, SCHEMA)
    cells = grid_cells(config)
    assert {cell.policy for cell in cells} == {"tiny_strategy"}
    assert {cell.sampler for cell in cells} == {"tau0.6", "tau1.0", "tau1.2", "ead", "ead_tis"}
    assert rl_data(config) == "results/data/strategy.parquet"
    assert {cell_settings(config, cell).task for cell in cells} == {"strategy"}
    claimed = {(claim["sampler"], claim["baseline"]) for claim in config["claims"]}
    assert {("ead", "tau1.0"), ("ead", "tau1.2"), ("ead_tis", "ead")} <= claimed
    assert rl_data(load_layered_config(DEFAULT)) == "results/data/countdown.parquet"


FIXED_POOL = ROOT / "configs" / "ablations" / "fixed_pool.yaml"


def test_the_fixed_pool_overlay_trains_tau_1_on_a_pool_of_64_problems_for_two_policies():
    """No pool by default (every step's prompts from the whole train split); the overlay's cells draw theirs from one
    pool of 64, the same document for every seed, tau 1.0 only."""
    assert CONFIG["rl"]["train_pool"] is None
    assert cell_settings(CONFIG, Cell("tiny1m_sharp", "dapo", "tau1.0", 8, 0)).budget.train_pool is None
    config = load_layered_config(DEFAULT, FIXED_POOL)
    validate_config(config, SCHEMA)
    cells = grid_cells(config)
    # the pilot (tau 1.0, seeds 0-2, both policies) and the comparison on tiny1m_sharp (five samplers, seeds 0-3)
    assert {(cell.policy, cell.sampler, cell.algorithm, cell.n) for cell in cells} == {
        ("tiny1m_sharp", sampler, "dapo", 8) for sampler in ("tau0.6", "tau1.0", "tau1.2", "ead", "ead_tis")} | {
        ("tiny1m_fork", "tau1.0", "dapo", 8)}
    assert sorted({cell.seed for cell in cells if cell.policy == "tiny1m_fork"}) == [0, 1, 2]
    assert sorted({cell.seed for cell in cells if cell.policy == "tiny1m_sharp"}) == [0, 1, 2, 3]
    pools = {cell_settings(config, cell).budget.train_pool for cell in cells}
    assert len(pools) == 1 and (pool := pools.pop()).size == 64 and pool.seed == 0
    default_budget = cell_settings(CONFIG, Cell("tiny1m_sharp", "dapo", "tau1.0", 8, 0)).budget
    budget = cell_settings(config, Cell("tiny1m_sharp", "dapo", "tau1.0", 8, 0)).budget
    assert {**budget.__dict__, "train_pool": None} == default_budget.__dict__  # the default budget otherwise


def test_the_pool_comparison_claims_read_the_pool_and_g4_is_measured_on_it_too():
    """The fixed-pool overlay's claims are on the training pool; such a claim needs a pool and an evaluation metric,
    and with a pool G4's rule is also applied to it (its own table, rl_learns_pool_runs)."""
    from ead.settings.rl import rl_learns_pool_runs

    config = load_layered_config(DEFAULT, FIXED_POOL)
    validate_config(config, SCHEMA)
    assert {claim["evaluated_with"] for claim in config["claims"]} == {"train_pool"}
    assert [claim["id"] for claim in config["claims"]] == ["Q1", "Q2", "Q3", "Q4", "Q5", "Q6"]
    assert rl_learns_pool_runs(config) and not rl_learns_pool_runs(CONFIG)
    wrong = copy.deepcopy(config)
    wrong["rl"]["train_pool"] = None
    with pytest.raises(ConfigError, match=r"claims\[0\] \(Q1\)\.evaluated_with = 'train_pool' needs rl\.train_pool"):
        validate_config(wrong, SCHEMA)
    wrong = copy.deepcopy(config)
    wrong["claims"][0].update(metric="entropy", over="last")
    with pytest.raises(ConfigError, match=r"'entropy' is a training metric"):
        validate_config(wrong, SCHEMA)
