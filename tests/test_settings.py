"""The whole config's validation (ead.settings): shipped profiles and ablations are valid, each bad value fails
with one message naming the key and the value."""

import copy
from pathlib import Path

import pytest
import yaml

from ead.settings import ConfigError, load_layered_config, validate_config
from ead.settings.layering import restated_keys
from tests.conftest import GPU_SMOKE, SCHEMA, VERL_CPU, load, profile

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("profile", [("config.yaml",), ("config.yaml", "smoke.yaml"), ("config.yaml", "paper.yaml"),
                                     ("config.yaml", "full.yaml")])
def test_shipped_profiles_are_valid(profile):
    validate_config(load(*profile), SCHEMA)


def with_change(section, key, value):
    config = copy.deepcopy(load("config.yaml"))
    config[section][key] = value
    return config


@pytest.mark.parametrize(
    "config, expected",
    [
        (with_change("ead", "tau_maxx", 1.2), r"unknown key\(s\) ead\.tau_maxx"),
        (with_change("ead", "tau_max", "hot"), r"ead\.tau_max = 'hot': 'hot' is not of type 'number'"),
        (with_change("ead", "warmup", 2.5), r"ead\.warmup = 2\.5: 2\.5 is not of type 'integer'"),
        # the schedule's own checks, named under the ead block (one check, in ead.schedule)
        (with_change("ead", "tau_min", 1.5), r"ead: .*tau_min must be <= tau_max, got tau_min=1\.5 > tau_max=1\.2"),
        (with_change("ead", "d0", 0), r"ead: .*d0 must be > 0, got d0=0"),
        (with_change("ead", "d0", -5), r"ead: .*d0 must be > 0, got d0=-5"),
        (with_change("ead", "warmup", -1), r"ead: .*warmup \(c\) must be >= 0, got warmup=-1"),
        (with_change("schedule_figure", "decays", []), r"schedule_figure\.decays = \[\]"),
        (with_change("schedule_figure", "decays", [25, 50000]),
         r"schedule_figure\.decays = \[25, 50000\]: every decay rate must be <= ead\.d_max = 40000"),
        (with_change("base_eval", "n", 8), r"base_eval\.n = 8 must be >= every k in base_eval\.k = \[1, 16\]"),
        # YAML's .nan / .inf are numbers to JSON Schema; the schema's numbers are finite
        (with_change("ead", "tau_max", float("nan")), r"ead\.tau_max = nan: must be a finite number"),
        (with_change("ead", "tau_min", float("inf")), r"ead\.tau_min = inf: must be a finite number"),
        (with_change("ead", "d_max", float("-inf")), r"ead\.d_max = -inf: must be a finite number"),
        (with_change("grader", "timeout_s", 0), r"grader\.timeout_s = 0: 0 is less than or equal to the minimum of 0"),
        (with_change("grader", "last_boxed_only", "yes"), r"grader\.last_boxed_only = 'yes': 'yes' is not of type"),
        (with_change("grader", "timeout", 3), r"unknown key\(s\) grader\.timeout"),
        (with_change("base_eval", "every", 8), r"unknown key\(s\) base_eval\.every"),
        (with_change("base_eval", "greedy", True), r"unknown key\(s\) base_eval\.greedy"),
        (with_change("premises", "baseline", "tau9"), r"premises\.baseline = 'tau9' is not one of premises\.samplers"),
        (with_change("premises", "samplers", ["tau1.0", "hot"]),
         r"premises\.samplers = .*\['hot'\] not defined in rl\.samplers"),
        (with_change("premises", "policies", ["tiny9"]),
         r"premises\.policies = \['tiny9'\]: \['tiny9'\] not defined"),
        (with_change("premises", "group_sizes", [4, 32]),
         r"premises\.group_sizes = \[4, 32\]: \[32\] exceed premises\.n = 16"),
        (with_change("claims", 0, {"id": "C1", "figure": "fig04", "statement": "s", "policy": "tiny1m_sharp",
                                   "algorithm": "dapo", "n": 8, "smallest_effect": 0.02, "sampler": "ead",
                                   "baseline": "tau2.0", "metric": "pass@16"}),
         r"claims\[0\] \(C1\)\.baseline: the cell .* = \('tiny1m_sharp', 'dapo', 'tau2\.0', 8\) is not in the "
         r"grid"),
        (with_change("claims", 0, {"id": "C1", "figure": "fig04", "statement": "s", "policy": "tiny1m_sharp",
                                   "algorithm": "dapo", "n": 8, "smallest_effect": 0.02, "sampler": "ead",
                                   "baseline": "tau1.0", "metric": "pass@32"}),
         r"claims\[0\] \(C1\)\.metric = 'pass@32': k exceeds rl\.eval\.n = 16"),
        (with_change("claims", 1, {"id": "C1", "figure": "fig04", "statement": "s", "policy": "tiny1m",
                                   "algorithm": "dapo", "n": 8, "smallest_effect": 0.02, "sampler": "ead",
                                   "baseline": "tau1.0", "metric": "pass@16"}),
         r"claims\[1\] \(C1\): the id 'C1' is used twice"),
        (with_change("premises", "ead", "tau1.0"), r"premises\.ead = 'tau1\.0' is a 'fixed' sampler, not 'ead'"),
        # k is a set: a repeated k duplicated every Pass@k / Worst@k row of the evaluation tables
        (with_change("base_eval", "k", [1, 16, 16]), r"base_eval\.k = \[1, 16, 16\]: .* non-unique elements"),
        (with_change("rl", "eval", {**load("config.yaml")["rl"]["eval"], "k": [4, 4]}),
         r"rl\.eval\.k = \[4, 4\]: .* non-unique elements"),
    ],
)
def test_bad_values_name_key_and_value(config, expected):
    with pytest.raises(ConfigError, match=expected) as info:
        validate_config(config, SCHEMA)
    assert "\n" not in str(info.value)


def test_unknown_top_level_key():
    config = load("config.yaml")
    config["eadd"] = {}
    with pytest.raises(ConfigError, match=r"unknown key\(s\) eadd"):
        validate_config(config, SCHEMA)


#: Ablations meant for some profiles only, and the error that names why over the others: beyond_the_paper trains the
#: tiny CPU policies with CPU-only schedules and claims Pass@16 (smoke evaluates 4 samples).
REFUSED_ABLATIONS = {("beyond_the_paper.yaml", "paper.yaml"): r"rl\.algorithms\.dapo_fork20\.forking_token_fraction: "
                                                             r"forking-token training is a loss option of the CPU",
                     ("beyond_the_paper.yaml", "smoke.yaml"): r"claims\[3\] \(B1\)\.metric = 'pass@16': k exceeds",
                     # the d_max sweep is mapped to the CPU testbed's 16 steps and its tiny policy (the paper profile
                     # would need its own caps for 500 steps and its hub models); at smoke size its claims are on
                     # Pass@16 (tests/end_to_end/test_overlays_at_smoke_size.py layers a smoke-sized version)
                     ("d_max_sweep.yaml", "smoke.yaml"): r"claims\[3\] \(D1\)\.metric = 'pass@16': k exceeds",
                     ("d_max_sweep.yaml", "paper.yaml"):
                         r"rl\.experiments\.d_max_sweep\.policies = \['tiny1m_sharp'\]: not in paper_models",
                     # likewise the measured schedule's RL experiment (its claims on Pass@16; the CPU trainer only)
                     ("measured_schedule.yaml", "smoke.yaml"): r"claims\[4\] \(M2\)\.metric = 'pass@16': k exceeds",
                     # (over paper its included calibrated contrast is refused first: tiny1m, as tiny1m_sharp, is not a
                     # paper model)
                     ("measured_schedule.yaml", "paper.yaml"): r"calibrated_contrast\.yaml: rl\.experiments\.main\."
                                                               r"policies = \['tiny1m'\]: not in paper_models",
                     # the positive control's claims read Pass@16; its task is the CPU trainer's strategy task
                     ("positive_control.yaml", "smoke.yaml"): r"\(P5\)\.metric = 'pass@16': k exceeds",
                     ("positive_control.yaml", "paper.yaml"): r"rl\.task = 'strategy': the verl backend trains on",
                     # the mechanism map: its breakdown's four phases need more than smoke's two training steps;
                     # its task is the CPU trainer's strategy task
                     ("mechanism_map.yaml", "smoke.yaml"): r"rl\.breakdown\.phases = 4 exceeds rl\.steps = 2",
                     ("mechanism_map.yaml", "paper.yaml"): r"rl\.task = 'strategy': the verl backend trains on",
                     # its exploratory TIS cells build on it (include), and are refused where it is
                     ("mechanism_map_tis.yaml", "smoke.yaml"): r"rl\.breakdown\.phases = 4 exceeds rl\.steps = 2",
                     ("mechanism_map_tis.yaml", "paper.yaml"): r"rl\.task = 'strategy': the verl backend trains on",
                     ("mechanism_map_replication.yaml", "smoke.yaml"):
                         r"rl\.breakdown\.phases = 4 exceeds rl\.steps = 2",
                     ("mechanism_map_replication.yaml", "paper.yaml"):
                         r"rl\.task = 'strategy': the verl backend trains on",
                     ("mechanism_map_trl.yaml", "smoke.yaml"): r"rl\.breakdown\.phases = 4 exceeds rl\.steps = 2",
                     ("mechanism_map_trl.yaml", "paper.yaml"): r"rl\.task = 'strategy': the verl backend trains on",
                     # a fixed training pool is the CPU trainer's option; its comparison claims Pass@16 (Q6)
                     ("fixed_pool.yaml", "smoke.yaml"): r"\(Q6\)\.metric = 'pass@16': k exceeds",
                     ("fixed_pool.yaml", "paper.yaml"): r"rl\.train_pool = .*: a fixed training pool is an option of "
                                                        r"the CPU trainer",
                     # the calibrated contrast adds the CPU testbed's tiny1m, which the paper profile does not have
                     ("calibrated_contrast.yaml", "paper.yaml"): r"rl\.experiments\.main\.policies = \['tiny1m'\]: "
                                                                 r"not in paper_models",
                     # the authors' revised recipe is the paper profile's (its claims name the hub models)
                     **{("revised_recipe.yaml", *profile): r"\(R1\)\.sampler: the cell .*'qwen2\.5-math-1\.5b'.* "
                        r"is not in the grid" for profile in [(), ("smoke.yaml",), ("full.yaml",)]}}


@pytest.mark.parametrize("ablation", sorted(p.name for p in (ROOT / "configs" / "ablations").glob("*.yaml")))
@pytest.mark.parametrize("profile", [[], ["smoke.yaml"], ["paper.yaml"], ["full.yaml"]])
def test_shipped_ablations_layer_over_every_profile(ablation, profile):
    delta = yaml.safe_load((ROOT / "configs" / "ablations" / ablation).read_text())
    refused = REFUSED_ABLATIONS.get((ablation, *profile))
    if refused:
        with pytest.raises(ConfigError, match=refused):
            load("config.yaml", *profile, f"ablations/{ablation}")
        return
    load("config.yaml", *profile, f"ablations/{ablation}")  # layered and checked
    base = load("config.yaml")
    assert restated_keys(base, delta) == []  # an ablation states only what it changes
    assert len(list((ROOT / "configs" / "ablations").glob("*.yaml"))) >= 2


@pytest.mark.parametrize(("override", "message"), [
    ({"rl": {"experiments": {"main": {"seeds": [0, 0]}}}},
     r"rl\.experiments\.main\.seeds = \[0, 0\]: 0 is listed twice"),
    ({"rl": {"experiments": {"main": {"samplers": ["tau1.0", "tau1.0", "ead_tis"]}}}},
     r"rl\.experiments\.main\.samplers = .*'tau1\.0' is listed twice"),
    # (the schema's uniqueItems already says it for these)
    ({"analyses": {"entropy_by_position": {"models": ["tiny1m", "tiny1m"]}}},
     r"analyses\.entropy_by_position\.models = .*non-unique elements"),
    ({"premises": {"samplers": ["tau1.0", "ead", "ead"]}}, r"premises\.samplers = .*'ead' is listed twice"),
    ({"paired_baselines": ["tau1.0", "tau1.0"]}, r"paired_baselines = .*non-unique elements"),
])
def test_a_repeated_value_in_a_list_that_is_a_set_is_refused_naming_the_key(override, message):
    with pytest.raises(ConfigError, match=message):
        load_layered_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "smoke.yaml", command_line=override)


@pytest.mark.parametrize("names", [VERL_CPU, GPU_SMOKE])
def test_the_verl_profiles_are_valid_and_state_only_deltas(names):
    validate_config(profile(*names), ROOT / "workflow" / "schemas" / "config.schema.yaml")
    assert restated_keys(profile("config.yaml"), yaml.safe_load((ROOT / "configs" / names[-1]).read_text())) == []
