"""What every settings module shares (ead.settings.base): ConfigError and its suggested overrides, the schedule a
sampler document samples with, and lists that must name each value once."""

import pytest

from ead.settings.base import ConfigError, check_unique, sampler_training, schedule_document
from tests.conftest import CONFIG


def test_a_sampler_document_becomes_its_schedule_without_its_training_options():
    ead = schedule_document(CONFIG, {"name": "ead", "tis": "token", "tis_cap": 2.0}, "rl.samplers.x")
    assert ead["name"] == "ead" and ead["tau_max"] == CONFIG["ead"]["tau_max"] and "tis" not in ead
    assert schedule_document(CONFIG, {"name": "fixed", "tau": 0.6, "trains_at": "one"}, "rl.samplers.y") == {
        "name": "fixed", "tau": 0.6}
    with pytest.raises(ConfigError, match=r"^rl\.samplers\.z: .*tau_max"):
        schedule_document(CONFIG, {"name": "ead", "tau_max": "hot"}, "rl.samplers.z")
    with pytest.raises(ConfigError, match=r"^rl\.samplers\.w: .*hot_ead"):
        schedule_document(CONFIG, {"name": "hot_ead"}, "rl.samplers.w")


def test_a_list_that_is_a_set_names_a_repeated_value():
    check_unique("rl.experiments.main.seeds", [0, 1, 2])
    with pytest.raises(ConfigError, match=r"rl\.experiments\.main\.seeds = \[0, 0\]: 0 is listed twice"):
        check_unique("rl.experiments.main.seeds", [0, 0])


def test_a_config_error_carries_the_overrides_it_suggests():
    error = ConfigError("rl.eval.n = 4 is below k", suggested_overrides={"rl__eval__n": "16"})
    assert str(error) == "rl.eval.n = 4 is below k" and error.suggested_overrides == {"rl__eval__n": "16"}
    assert ConfigError("x").suggested_overrides in (None, {})


def test_a_samplers_training_options_default_in_one_place():
    rl = CONFIG["rl"]
    assert sampler_training(rl, {"name": "ead"}) == {"tis": "none", "tis_cap": rl["tis_cap"],
                                                      "trains_at": rl["fixed_tau_trains_at"], "measured": False}
    stated = {"name": "ead", "tis": "token", "tis_cap": 5.0, "trains_at": "one", "measured": True}
    assert sampler_training(rl, stated) == {key: stated[key] for key in ("tis", "tis_cap", "trains_at", "measured")}
