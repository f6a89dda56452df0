"""The premise probe's settings: the policies it can probe, the table it reads for each, its job's typed document."""

import json
from pathlib import Path

import pytest

from ead.settings import ConfigError, load_layered_config, validate_config
from ead.settings.premises import ProbeSettings, premise_data, premise_group_by, premise_settings

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
    assert premise_group_by(config) == "key" and premise_settings(config).group_by == "key"
    default = load_layered_config(DEFAULT)
    # no group_by in the default's settings document: its probe's command (and so its run) is unchanged
    assert premise_group_by(default) is None and "group_by" not in premise_settings(default).to_document()
    with pytest.raises(ConfigError, match="group_by"):
        load_layered_config(DEFAULT, command_line={"premises": {"group_by": 3}})


def test_the_probes_document_reads_back_to_itself_and_refuses_a_stray_or_missing_key_by_name():
    for config in (load_layered_config(DEFAULT), load_layered_config(DEFAULT, POSITIVE_CONTROL)):
        settings = premise_settings(config)
        assert ProbeSettings.from_json(settings.to_json()) == settings
    document = premise_settings(load_layered_config(DEFAULT)).to_document()
    with pytest.raises(ConfigError, match=r"^probe settings: unknown key 'premises.hott'$"):
        ProbeSettings.from_document({**document, "premises": {**document["premises"], "hott": "hot_early"}})
    with pytest.raises(ConfigError, match=r"^probe settings: missing key 'baseline'$"):
        ProbeSettings.from_document({key: value for key, value in document.items() if key != "baseline"})
    with pytest.raises(ConfigError, match=r"^probe settings: 'steps\[1\]' = '16' is not an integer$"):
        ProbeSettings.from_document({**document, "steps": [1, "16"]})
    with pytest.raises(ConfigError, match=r"^probe settings: not a JSON document"):
        ProbeSettings.from_json("{'split': 'val'}")


def test_the_probe_job_refuses_a_settings_document_with_a_stray_key_naming_it(capsys):
    from ead.analyses.premises import main

    document = premise_settings(load_layered_config(DEFAULT)).to_document()
    with pytest.raises(SystemExit):
        main(["--model", "m", "--data", "d.parquet", "--settings", json.dumps({**document, "limt": 8}),
              "--threads", "1", "--out", "o.csv", "--verdicts", "v.csv"])
    assert "--settings: probe settings: unknown key 'limt'" in capsys.readouterr().err
