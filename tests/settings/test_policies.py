"""The tiny policies' settings (ead.settings.policies): sharpened copies, SFT references, and the strategy
positive control."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from ead.settings import ConfigError, load_layered_config, validate_config
from tests.conftest import SCHEMA, load

ROOT = Path(__file__).resolve().parents[2]


def test_a_sharpened_policy_copies_a_trained_one_and_is_nothing_else():
    config = copy.deepcopy(load("config.yaml"))
    config["policies"]["sharp"] = {"sharpen": {"policy": "tiny1m", "temperature": 0.5}}
    validate_config(config, SCHEMA)
    config["policies"]["sharper"] = {"sharpen": {"policy": "sharp", "temperature": 0.5}}
    with pytest.raises(ConfigError, match=r"policies\.sharper\.sharpen\.policy = 'sharp' is not a trained policy"):
        validate_config(config, SCHEMA)
    del config["policies"]["sharper"]
    config["policies"]["sharp"]["shape"] = config["policies"]["tiny1m"]["shape"]  # trained and copied at once
    with pytest.raises(ConfigError, match=r"policies\.sharp"):
        validate_config(config, SCHEMA)
    config["policies"]["sharp"] = {"sharpen": {"policy": "tiny1m", "temperature": 1.5}}  # that would flatten
    with pytest.raises(ConfigError, match=r"policies\.sharp\.sharpen\.temperature"):
        validate_config(config, SCHEMA)


def test_sft_reference_is_random_or_canonical_and_canonical_needs_countdown():
    from ead.settings.policies import sft_settings

    config = copy.deepcopy(load("config.yaml", "ablations/testbed_canonical.yaml"))
    validate_config(config, SCHEMA)
    assert sft_settings(config, "tiny1m_canon")["reference"] == "canonical"
    assert sft_settings(config, "tiny1m")["reference"] == "random"  # unless stated
    config["policies"]["tiny1m_canon"]["sft"]["reference"] = "canonicl"
    with pytest.raises(ConfigError, match=r"policies\.tiny1m_canon\.sft\.reference = 'canonicl': 'canonicl' is not "
                                          r"one of \['random', 'canonical', 'largest_first'\]"):
        validate_config(config, SCHEMA)
    config["policies"]["tiny1m_canon"]["sft"]["reference"] = "canonical"
    config["policies"]["tiny1m_canon"]["task"] = "arithmetic"
    with pytest.raises(ConfigError, match=r"policies\.tiny1m_canon\.sft\.reference = 'canonical': task 'arithmetic' "
                                          r"offers \['random'\]"):
        validate_config(config, SCHEMA)


def test_the_positive_control_overlay_trains_a_strategy_policy_from_its_biased_teacher():
    from ead.settings.policies import policy_task, sft_settings

    config = load_layered_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "ablations" /
                                 "positive_control.yaml")
    validate_config(config, SCHEMA)
    assert policy_task(config, "tiny_strategy") == "strategy"
    settings = sft_settings(config, "tiny_strategy")
    assert settings["teacher_bias"] == config["policies"]["tiny_strategy"]["teacher"]["bias"]
    assert "teacher_bias" not in sft_settings(config, "tiny1m")  # the other policies' SFT commands are unchanged
    assert config["rl"]["task"] == "strategy" and config["rl"]["run"] == ["positive_control"]  # its RL experiment

    wrong = copy.deepcopy(config)
    wrong["policies"]["tiny1m"]["teacher"] = {"bias": 0.9}
    with pytest.raises(ConfigError, match=r"policies\.tiny1m\.teacher needs a task with a biased teacher \(strategy; "
                                          r"its task is 'countdown'\)"):
        validate_config(wrong, SCHEMA)
    wrong = copy.deepcopy(config)
    del wrong["data"]["strategy"]
    with pytest.raises(ConfigError, match=r"policies\.tiny_strategy\.task = 'strategy' has no data\.strategy section"):
        validate_config(wrong, SCHEMA)
    wrong = copy.deepcopy(config)
    wrong["policies"]["tiny1m_sharp"]["teacher"] = {"bias": 0.9}  # a sharpened copy has its source's training
    with pytest.raises(ConfigError, match=r"policies\.tiny1m_sharp"):
        validate_config(wrong, SCHEMA)


def test_a_run_uses_the_policies_its_experiments_probe_and_analyses_name_and_their_sources():
    from ead.settings.policies import used_policies

    default = load("config.yaml")
    assert used_policies(default) == list(default["policies"])  # the default uses every policy it defines
    smoke = load("config.yaml", "smoke.yaml")
    assert used_policies(smoke) == list(smoke["policies"])
    # the positive control keeps the default's policies defined but runs only its own
    config = load_layered_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "ablations" /
                                 "positive_control.yaml")
    assert set(config["policies"]) > {"tiny_strategy"}
    assert used_policies(config) == ["tiny_strategy"]
    # a sharpened policy brings the trained one it copies; an analysis model that is no policy is not one
    config = copy.deepcopy(config)
    config["premises"]["policies"] = ["tiny1m_sharp"]
    config["analyses"]["forking"]["models"] = ["smollm2-135m-instruct"]
    assert used_policies(config) == ["tiny1m", "tiny1m_sharp", "tiny_strategy"]
    # a fork-sharpened policy brings its source too
    pool = load_layered_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "ablations" / "fixed_pool.yaml")
    assert used_policies(pool) == ["tiny1m", "tiny1m_sharp", "tiny1m_fork"]


FORK = {"policy": "tiny1m", "temperature": 0.2, "positions": 8, "steps": 400, "batch_size": 64, "lr": 5.0e-4,
        "seed": 0}


def test_a_fork_sharpened_policy_copies_a_trained_countdown_one_and_its_job_gets_every_setting():
    """policies.<p>.fork_sharpen (ead.models.fork_sharpen): a copy of a trained policy, with its source's task; its
    job gets every distillation setting as a flag (the source is its --model), and it is neither trained by SFT nor
    a sharpened copy."""
    from ead.settings.policies import (
        fork_sharpen_settings,
        fork_sharpened_policies,
        policy_task,
        sharpened_policies,
        trained_policies,
    )

    config = load_layered_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "ablations" / "fixed_pool.yaml")
    validate_config(config, SCHEMA)
    assert config["policies"]["tiny1m_fork"]["fork_sharpen"] == FORK
    assert fork_sharpened_policies(config) == ["tiny1m_fork"]
    assert "tiny1m_fork" not in trained_policies(config) + sharpened_policies(config)
    assert policy_task(config, "tiny1m_fork") == "countdown"
    assert fork_sharpen_settings(config, "tiny1m_fork") == {key: value for key, value in FORK.items()
                                                            if key != "policy"}

    wrong = copy.deepcopy(config)
    wrong["policies"]["tiny1m_fork"]["fork_sharpen"]["policy"] = "tiny1m_sharp"
    with pytest.raises(ConfigError, match=r"policies\.tiny1m_fork\.fork_sharpen\.policy = 'tiny1m_sharp' is not a "
                                          r"trained policy"):
        validate_config(wrong, SCHEMA)
    wrong = copy.deepcopy(config)
    wrong["policies"]["tiny1m_fork"]["fork_sharpen"]["policy"] = "tiny_arith"
    wrong["rl"]["experiments"]["fixed_pool"]["policies"] = ["tiny1m_sharp"]  # (the grid's task check comes first)
    wrong["premises"]["policies"] = ["tiny1m_sharp"]
    with pytest.raises(ConfigError, match=r"policies\.tiny1m_fork\.fork_sharpen: its source is trained on "
                                          r"'arithmetic'"):
        validate_config(wrong, SCHEMA)
    for key, value in (("positions", 0), ("temperature", 1.5), ("lr", "5e-4")):
        wrong = copy.deepcopy(config)
        wrong["policies"]["tiny1m_fork"]["fork_sharpen"][key] = value
        with pytest.raises(ConfigError, match=rf"policies\.tiny1m_fork\.fork_sharpen\.{key}"):
            validate_config(wrong, SCHEMA)
    wrong = copy.deepcopy(config)
    del wrong["policies"]["tiny1m_fork"]["fork_sharpen"]["seed"]
    with pytest.raises(ConfigError, match=r"policies\.tiny1m_fork"):
        validate_config(wrong, SCHEMA)
    wrong = copy.deepcopy(config)
    wrong["policies"]["tiny1m_fork"]["sharpen"] = {"policy": "tiny1m", "temperature": 0.2}  # two kinds at once
    with pytest.raises(ConfigError, match=r"policies\.tiny1m_fork"):
        validate_config(wrong, SCHEMA)


def test_the_mechanism_map_overlay_crosses_fork_rarity_with_execution_fragility_in_the_teacher_alone():
    from ead.settings.policies import sft_settings

    config = load_layered_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "ablations" /
                                 "mechanism_map.yaml")
    validate_config(config, SCHEMA)
    settings = {name: sft_settings(config, name) for name in config["premises"]["policies"]}
    assert {(s["teacher_bias"], s.get("teacher_execution_noise")) for s in settings.values()} == {
        (bias, noise) for bias in (0.98, 0.95, 0.85) for noise in (None, 0.03)}
    teacherless = [{k: v for k, v in s.items() if not k.startswith("teacher")} for s in settings.values()]
    assert all(s == teacherless[0] for s in teacherless)  # the same shape and SFT: only the teacher differs
    assert set(config["rl"]["experiments"]["mechanism_map"]["policies"]) == set(settings)
    assert {claim["smallest_effect"] for claim in config["claims"]} == {0.02}
    assert all(claim["policy"] in settings and claim["over"] == "curve" for claim in config["claims"])
    wrong = copy.deepcopy(config)
    wrong["policies"]["map_p02_fragile"]["teacher"]["execution_noise"] = 1.5
    with pytest.raises(ConfigError, match=r"policies\.map_p02_fragile\.teacher\.execution_noise"):
        validate_config(wrong, SCHEMA)
