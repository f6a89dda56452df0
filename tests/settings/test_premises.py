"""The premise probe's settings: which policies it can probe, and the table it reads for each."""

from pathlib import Path

import pytest

from ead.settings import ConfigError, load_layered_config, validate_config
from ead.settings.premises import premise_data, premise_group_by, premise_settings

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"
DEFAULT = ROOT / "configs" / "config.yaml"
POSITIVE_CONTROL = ROOT / "configs" / "ablations" / "positive_control.yaml"


def test_the_positive_control_probes_its_strategy_policy_on_the_strategy_table():
    config = load_layered_config(DEFAULT, POSITIVE_CONTROL)
    validate_config(config, SCHEMA)
    assert config["premises"]["policies"] == ["tiny_strategy"]
    assert premise_data(config, "tiny_strategy") == "results/data/strategy.parquet"
    default = load_layered_config(DEFAULT)
    assert {premise_data(default, policy) for policy in default["premises"]["policies"]} == {
        "results/data/countdown.parquet"}


def test_a_policy_of_a_task_without_failure_types_is_refused():
    with pytest.raises(ConfigError, match=r"\['tiny_arith'\] are not policies of a task the probe classifies"):
        load_layered_config(DEFAULT, command_line={"premises": {"policies": ["tiny_arith"]}})


def test_the_probe_by_key_is_asked_for_by_the_positive_control_alone():
    config = load_layered_config(DEFAULT, POSITIVE_CONTROL)
    assert premise_group_by(config) == "key" and premise_settings(config)["group_by"] == "key"
    default = load_layered_config(DEFAULT)
    # no group_by in the default's settings: its probe's command (and so its run) is unchanged
    assert premise_group_by(default) is None and "group_by" not in premise_settings(default)
    with pytest.raises(ConfigError, match="group_by"):
        load_layered_config(DEFAULT, command_line={"premises": {"group_by": 3}})
