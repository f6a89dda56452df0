"""The rl section's own rules (ead.settings.rl_checks): experiments checked against the backend's policies, keys
and values refused by name, the paper profile's CPU-only options and the verl backend's limits."""

import json
from pathlib import Path

import pytest

from ead.settings import ConfigError, load_layered_config, validate_config
from tests.conftest import (
    CONFIG,
    PAPER,
    SCHEMA,
    load,
    paper_config,
)

ROOT = Path(__file__).resolve().parents[2]
D_MAX_OVERLAY = ROOT / "configs" / "ablations" / "d_max_sweep.yaml"
DEFAULT = ROOT / "configs" / "config.yaml"
POSITIVE_CONTROL = ROOT / "configs" / "ablations" / "positive_control.yaml"
FIXED_POOL = ROOT / "configs" / "ablations" / "fixed_pool.yaml"


def test_an_experiment_a_profile_leaves_alone_is_checked_against_the_backends_policies():
    """One check for both backends: the verl backend's policies are paper_models, so an experiment that keeps
    config.yaml's tiny policies under `rl.backend: verl` is refused by name."""
    config = load("config.yaml", "paper.yaml")
    config["rl"]["experiments"]["main"]["policies"] = ["tiny1m"]
    with pytest.raises(ConfigError, match=r"rl\.experiments\.main\.policies = \['tiny1m'\]: not in paper_models"):
        validate_config(config, SCHEMA)


def with_rl(path, value):
    config = json.loads(json.dumps(CONFIG))
    target = config["rl"]
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return config


@pytest.mark.parametrize("path, value, message", [
    (("experiments", "main", "samplers"), ["tau0.6", "tau0.7"],
     r"rl\.experiments\.main\.samplers = \['tau0\.7'\]: not defined; known samplers"),
    (("experiments", "main", "policies"), ["tiny2m"], r"rl\.experiments\.main\.policies = \['tiny2m'\]: not defined"),
    (("experiments", "main", "n"), [32], r"rl\.experiments\.main\.n = 32 has no learning rate in rl\.lr_by_n"),
    (("samplers", "hot"), {"name": "fixed", "tau": 0}, r"rl\.samplers\.hot: fixed schedule: tau must be > 0"),
    (("samplers", "bad_ead"), {"name": "ead", "tau_min": 1.5}, r"rl\.samplers\.bad_ead: ead schedule: .*tau_min"),
    (("eval", "n"), 8, r"rl\.eval\.n = 8 must be >= every k in rl\.eval\.k"),
    (("mini_batches",), 3, r"rl\.mini_batches = 3 equal mini-batches"),
    (("fixed_tau_trains_at",), "logits", r"rl\.fixed_tau_trains_at"),
])
def test_rl_config_errors_name_the_key_and_value(path, value, message):
    with pytest.raises(ConfigError, match=message):
        validate_config(with_rl(path, value), SCHEMA)


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
    # hub data is graded as math unless an entry names a synthetic task: one task per run
    (lambda c: c["paper_data"].update(val={"task": "arithmetic", "limit": 8}),
     "paper_data.val is arithmetic data, paper_data.train math: one task per run"),
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


@pytest.mark.parametrize("pool, message", [
    ({"size": 8, "seed": 0}, r"rl\.train_pool\.size = 8 is below rl\.prompts_per_step = 16"),
    ({"size": 0, "seed": 0}, r"rl\.train_pool.*size"),
    ({"size": 64}, r"rl\.train_pool"),
    ({"size": 64, "seed": 0, "every": 2}, r"rl\.train_pool"),
    (64, r"rl\.train_pool"),
])
def test_a_bad_training_pool_is_refused_naming_the_key(pool, message):
    with pytest.raises(ConfigError, match=message):
        validate_config(with_rl(("train_pool",), pool), SCHEMA)


def test_the_verl_backend_refuses_a_fixed_training_pool_by_name():
    config = paper_config()
    config["rl"]["train_pool"] = {"size": 64, "seed": 0}
    with pytest.raises(ConfigError, match=r"rl\.train_pool = .*: a fixed training pool is an option of the CPU "
                                          r"trainer"):
        validate_config(config, SCHEMA)


def test_the_trl_trainer_refuses_a_grid_with_cells_trl_cannot_train_naming_setting_and_cell():
    config = with_rl(("trainer",), "trl")
    with pytest.raises(ConfigError, match=r"rl\.trainer = 'trl' cannot train these cells: rl\.algorithms\.clip_cov"
                                          r"\.loss_mode='clip_cov' .* in rl\.experiments\.algorithms \(clip_cov, "):
        validate_config(config, SCHEMA)
    config["rl"]["run"] = ["main", "primary"]  # DAPO with fixed tau, EAD and EAD + TIS: all TRL can train
    validate_config(config, SCHEMA)
    paper = paper_config()
    paper["rl"]["trainer"] = "trl"
    with pytest.raises(ConfigError, match=r"rl\.trainer = 'trl' trains the CPU backend's cells"):
        validate_config(paper, SCHEMA)
