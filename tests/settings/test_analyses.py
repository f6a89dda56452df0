"""The sampling analyses' settings (ead.settings.analyses): the model chooses the task, and bad values are named."""

import copy
from pathlib import Path

import pytest

from ead.settings import ConfigError, validate_config
from tests.conftest import SCHEMA, load

ROOT = Path(__file__).resolve().parents[2]


def with_analysis_change(section, key, value):
    """The default config with analyses.<section>.<key> (or the item `key` of the list analyses.<section>) = value."""
    config = copy.deepcopy(load("config.yaml"))
    config["analyses"][section][key] = value
    return config


def without_analysis_key(section, key):
    """The default config without analyses.<section>.<key>."""
    config = copy.deepcopy(load("config.yaml"))
    del config["analyses"][section][key]
    return config


def test_the_model_chooses_the_task_of_an_analysis():
    from ead.settings.analyses import analysis_model_settings, analysis_task

    config = load("config.yaml")
    hub = analysis_model_settings(config, "forking", "smollm2-135m-instruct")
    policy = analysis_model_settings(config, "forking", "tiny1m_sharp")
    assert analysis_task(config, "forking", "smollm2-135m-instruct") == "mmlu" and "prompt_format" not in hub
    assert hub["fork_points"] == [0, 16, 48] and "countdown" not in hub and "models" not in hub
    assert analysis_task(config, "forking", "tiny1m_sharp") == "countdown"
    assert policy["dataset"] == "countdown" and policy["prompt_format"] == "plain" and policy["split"] == "test"
    assert policy["fork_points"] == [0, 4, 8, 16] and policy["tau"] == hub["tau"]  # the block over the section
    assert "subjects" not in policy and "countdown" not in policy
    # the arithmetic policy: its task, its block (samplers included) over the majority section
    arith = analysis_model_settings(config, "majority_scaling", "tiny_arith")
    assert analysis_task(config, "majority_scaling", "tiny_arith") == "arithmetic" and arith["dataset"] == "arithmetic"
    assert arith["samples"] == 32 and arith["samplers"][0] == {"name": "ead"} and "max_solution_steps" not in arith
    assert analysis_model_settings(config, "majority_scaling", "smollm2-135m-instruct")["samplers"][0]["warmup"] == 10


@pytest.mark.parametrize(
    "config, expected",
    [
        (with_analysis_change("forking", "fork_points", [0, -25]),
         r"analyses\.forking\.fork_points = \[0, -25\]: every prefix length must be >= 0"),
        (with_analysis_change("forking", "fork_points", [0, 200]),
         r"analyses\.forking\.fork_points = \[0, 200\]: .* < analyses\.forking\.max_new_tokens = 96"),
        (with_analysis_change("forking", "continuations", 4),
         r"analyses\.forking\.continuations = 4 must be >= every K in analyses\.forking\.k = \[1, 3, 8\]"),
        (with_analysis_change("forking", "prefix_selection", "first"),
         r"analyses\.forking\.prefix_selection = 'first'"),
        (with_analysis_change("majority_scaling", "samples", 0), r"analyses\.majority_scaling\.samples = 0"),
        (with_analysis_change("majority_scaling", "samplers", [{"name": "fixed", "tau": -1}]),
         r"analyses\.majority_scaling\.samplers\[0\]: fixed schedule: tau must be > 0"),
        (with_analysis_change("majority_scaling", "samplers", [{"name": "ead", "tau_maxx": 2}]),
         r"analyses\.majority_scaling\.samplers\[0\]: Unknown parameter\(s\) \['tau_maxx'\] for schedule 'ead'"),
        (with_analysis_change("majority_scaling", "samplers", [{"name": "ead"}, {"name": "ead", "d0": 25}]),
         r"analyses\.majority_scaling\.samplers = .*a sampler is listed twice"),
        (with_analysis_change("entropy_by_position", "dataset", "aime"),
         r"analyses\.entropy_by_position\.dataset = 'aime'"),
        (with_analysis_change("entropy_by_position", "models", ["llama-3-8b-instruct"]),
         r"analyses\.entropy_by_position\.models = \['llama-3-8b-instruct'\]: unknown model\(s\) "
         r"\['llama-3-8b-instruct'\]; "
         r"known: \['smollm2-135m-instruct', 'tiny1m', 'tiny1m_sharp', 'tiny_arith'\] \(the offline model, the tiny "
         r"policies"),
        (with_analysis_change("majority_scaling", "models", []), r"analyses\.majority_scaling\.models = \[\]"),
        (with_analysis_change("forking", "subjects", []), r"analyses\.forking\.subjects = \[\]"),
        (with_analysis_change("majority_scaling", "models", ["smollm2-135m-instruct", "tiny1m"]),
         r"analyses\.majority_scaling\.models = .*'tiny1m' is a countdown policy, and Maj@N votes on answers"),
        (without_analysis_key("majority_scaling", "arithmetic"),
         r"analyses\.majority_scaling\.models = .*'tiny_arith' is a arithmetic policy and needs "
         r"analyses\.majority_scaling\.arithmetic"),
        (with_analysis_change("majority_scaling", "arithmetic",
                              {"split": "test", "samplers": [{"name": "fixed", "tau": 2}] * 2}),
         r"analyses\.majority_scaling\.arithmetic\.samplers = .*a sampler is listed twice"),
        (with_analysis_change("claims", 0, {"id": "F3", "figure": "fig09", "statement": "s", "smallest_effect": 0.02,
                                            "analysis": "majority_scaling", "model": "tiny_arith", "metric": "maj@64"}),
         r"analyses\.claims\[0\] \(F3\)\.metric = 'maj@64': N must be in 1\.\.the model's samples = 32"),
        (with_analysis_change("claims", 0, {"id": "F3", "figure": "fig09", "statement": "s", "smallest_effect": 0.02,
                                            "analysis": "majority_scaling", "model": "tiny_arith", "metric": "pass@8"}),
         r"analyses\.claims\[0\] \(F3\)\.metric = 'pass@8': a majority claim compares maj@N"),
        (with_analysis_change("forking", "countdown", {**load("config.yaml")["analyses"]["forking"]["countdown"],
                                                       "fork_points": [0, 64]}),
         r"analyses\.forking\.countdown\.fork_points = \[0, 64\]: every prefix length must be >= 0 and < "
         r"analyses\.forking\.countdown\.max_new_tokens = 64"),
        (with_analysis_change("forking", "countdown", {"split": "dev"}),
         r"analyses\.forking\.countdown\.split = 'dev'"),
        (with_analysis_change("entropy_by_position", "countdown", {"split": "test", "samples": 4, "epochs": 2}),
         r"unknown key\(s\) analyses\.entropy_by_position\.countdown\.epochs"),
        (with_analysis_change("claims", 0, {"id": "F1", "figure": "fig01", "statement": "s", "smallest_effect": 0.02,
                                            "analysis": "entropy_by_position", "model": "tiny1m_sharp", "early": 4,
                                            "late": 64}),
         r"analyses\.claims\[0\] \(F1\): early = 4, late = 64 must satisfy 0 < early <= late < the model's "
         r"max_new_tokens = 64"),
        (with_analysis_change("claims", 0, {"id": "F2", "figure": "fig02", "statement": "s", "smallest_effect": 0.02,
                                            "analysis": "forking", "model": "tiny1m_sharp", "metric": "maj@16"}),
         r"analyses\.claims\[0\] \(F2\)\.metric = 'maj@16': Maj@k needs unique answers; countdown's are not"),
        (with_analysis_change("claims", 0, {"id": "F2", "figure": "fig02", "statement": "s", "smallest_effect": 0.02,
                                            "analysis": "forking", "model": "tiny1m_sharp", "metric": "pass@32"}),
         r"analyses\.claims\[0\] \(F2\)\.metric = 'pass@32': k exceeds the model's continuations = 16"),
        (with_analysis_change("claims", 0, {"id": "C1", "figure": "fig01", "statement": "s", "smallest_effect": 0.02,
                                            "analysis": "entropy_by_position", "model": "qwen", "early": 4, "late": 8}),
         r"analyses\.claims\[0\] \(C1\): the id 'C1' is used twice"),
        (with_analysis_change("claims", 0, {"id": "F9", "figure": "fig01", "statement": "s", "smallest_effect": 0.02,
                                            "analysis": "entropy_by_position", "model": "qwen", "early": 4, "late": 8}),
         r"analyses\.claims\[0\] \(F9\)\.model = 'qwen' is not one of analyses\.entropy_by_position\.models"),
    ],
)
def test_bad_analysis_values_name_key_and_value(config, expected):
    with pytest.raises(ConfigError, match=expected) as info:
        validate_config(config, SCHEMA)
    assert "\n" not in str(info.value)


def test_analysis_engine_must_be_known():
    config = copy.deepcopy(load("config.yaml"))
    config["analyses"]["engine"] = "vLLM"
    with pytest.raises(ConfigError, match=r"analyses\.engine = 'vLLM'"):
        validate_config(config, SCHEMA)


def test_analyses_section_is_required():
    config = load("config.yaml")
    del config["analyses"]
    with pytest.raises(ConfigError, match=r"analyses: the section is required"):
        validate_config(config, SCHEMA)


def test_the_offline_model_is_made_only_when_an_analysis_lists_it():
    from ead.settings import load_layered_config
    from ead.settings.analyses import offline_models_analysed

    root = Path(__file__).resolve().parents[2]
    assert offline_models_analysed(load_layered_config(root / "configs" / "config.yaml")) == ["smollm2-135m-instruct"]
    control = load_layered_config(root / "configs" / "config.yaml", root / "configs" / "ablations" /
                                  "positive_control.yaml")
    assert offline_models_analysed(control) == []
