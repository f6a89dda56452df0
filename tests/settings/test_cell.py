"""The RL cell's settings contract (ead.settings.cell): what the DAG makes is what the job reads, and a document that is
not one (an unknown, missing or mistyped key) fails when it is read, naming the key; one rule says which steps are
evaluated, for the CPU trainer, the completeness check and verl's test_freq."""

from pathlib import Path

import pytest

from ead.settings import ConfigError
from ead.settings.cell import CellSettings
from ead.settings.rl import Cell, cell_settings, expand_grid, verl_cell_settings
from tests.conftest import PROFILES, profile_by_name

ROOT = Path(__file__).resolve().parents[2]


def the_cells_settings(config: dict) -> list[CellSettings]:
    make = verl_cell_settings if config["rl"]["backend"] == "verl" else cell_settings
    return [make(config, cell) for cell in expand_grid(config["rl"])]


@pytest.mark.parametrize("name", PROFILES)
def test_every_cells_document_reads_back_to_the_same_settings(name):
    config = profile_by_name(name)
    for settings in the_cells_settings(config):
        text = settings.to_json()
        assert CellSettings.from_json(text) == settings and CellSettings.from_json(text).to_json() == text
        # rl.eval.every keeps its name from the config to the document the job reads
        assert settings.to_document()["eval"]["every"] == config["rl"]["eval"]["every"]
        assert (settings.backend is None) is (config["rl"]["backend"] == "cpu")


def a_document() -> dict:
    return verl_cell_settings(profile_by_name("verl_cpu"), Cell("tiny_arith", "dapo", "ead_tis", 4, 0)).to_document()


@pytest.mark.parametrize("change, message", [
    (lambda d: d["eval"].update(evry=5), "cell settings: unknown key 'eval.evry'"),
    (lambda d: d.update(fixed_tau_trains_at="one"), "cell settings: unknown key 'fixed_tau_trains_at'"),
    (lambda d: d["backend"]["verl"].update(gpus=8), "cell settings: unknown key 'backend.verl.gpus'"),
])
def test_an_unknown_key_is_refused_by_name(change, message):
    document = a_document()
    change(document)
    with pytest.raises(ConfigError, match=message):
        CellSettings.from_document(document)


@pytest.mark.parametrize("path", [("eval", "every"), ("budget", "steps"), ("training", "optimizer", "betas"),
                                  ("grader", "timeout_s"), ("schedule",)])
def test_a_missing_key_is_refused_by_name(path):
    document = a_document()
    parent = document
    for key in path[:-1]:
        parent = parent[key]
    del parent[path[-1]]
    with pytest.raises(ConfigError, match=f"cell settings: missing key '{'.'.join(path)}'"):
        CellSettings.from_document(document)


@pytest.mark.parametrize("change, message", [
    (lambda d: d["eval"].update(every="5"), r"'eval\.every' = '5' is not an integer"),
    (lambda d: d["budget"].update(steps=True), r"'budget\.steps' = True is not an integer"),
    (lambda d: d["eval"].update(own_sampler=0), r"'eval\.own_sampler' = 0 is not true or false"),
    (lambda d: d["training"].update(lr="1e-6"), r"'training\.lr' = '1e-6' is not a number"),
    (lambda d: d["training"]["optimizer"].update(betas=0.9), r"'training\.optimizer\.betas' = 0\.9 is not a list"),
    (lambda d: d["backend"]["verl"].update(extra_overrides=[1]), r"'backend\.verl\.extra_overrides\[0\]' = 1 is not"),
    (lambda d: d.update(schedule="ead"), r"'schedule' = 'ead' is not a mapping"),
    (lambda d: d["schedule"].update(tau_max="hot"), r"cell settings: 'schedule' = .* does not build: .*tau_max"),
    (lambda d: d["schedule"].update(name="ead_hot"), r"cell settings: 'schedule' = .* does not build: .*ead_hot"),
    (lambda d: d.update(training=None), r"'training' = None is not a mapping"),
    (lambda d: d["grader"].update(last_boxed_only="yes"), r"'grader\.last_boxed_only' = 'yes' is not true or false"),
    (lambda d: d["grader"].update(workers=0), r"cell settings: grader: grader\.workers must be an integer >= 1, got 0"),
])
def test_a_value_of_the_wrong_type_is_refused_by_name(change, message):
    document = a_document()
    change(document)
    with pytest.raises(ConfigError, match=message):
        CellSettings.from_document(document)


def a_pool_document() -> dict:
    document = cell_settings(profile_by_name("default"), Cell("tiny1m_sharp", "dapo", "tau1.0", 8, 0)).to_document()
    document["budget"]["train_pool"] = {"size": 64, "seed": 0}
    return document


def test_a_training_pool_reads_back_and_a_cell_without_one_says_null():
    assert a_document()["budget"]["train_pool"] is None
    settings = CellSettings.from_document(a_pool_document())
    assert (settings.budget.train_pool.size, settings.budget.train_pool.seed) == (64, 0)
    assert CellSettings.from_json(settings.to_json()) == settings


@pytest.mark.parametrize("pool, message", [
    ({"size": 0, "seed": 0}, r"'budget\.train_pool' = \{'size': 0, 'seed': 0\}: size must be >= 1"),
    ({"size": 64, "seed": -1}, r"'budget\.train_pool' = \{'size': 64, 'seed': -1\}: .*seed >= 0"),
    ({"size": "64", "seed": 0}, r"'budget\.train_pool\.size' = '64' is not an integer"),
    ({"size": 64}, r"missing key 'budget\.train_pool\.seed'"),
    ({"size": 64, "seed": 0, "every": 1}, r"unknown key 'budget\.train_pool\.every'"),
    (64, r"'budget\.train_pool' = 64 is not a mapping"),
])
def test_a_bad_training_pool_is_refused_by_the_contract(pool, message):
    document = a_pool_document()
    document["budget"]["train_pool"] = pool
    with pytest.raises(ConfigError, match=message):
        CellSettings.from_document(document)


def test_a_document_without_the_training_pool_key_is_refused():
    document = a_pool_document()
    del document["budget"]["train_pool"]
    with pytest.raises(ConfigError, match=r"missing key 'budget\.train_pool'"):
        CellSettings.from_document(document)


def test_the_algorithm_group_has_the_schemas_keys_and_says_what_the_config_states():
    import dataclasses

    import yaml

    from ead.settings.algorithms import ALGORITHM_KEYS, FORKING_KEYS
    from ead.settings.cell import AlgorithmParams

    schema = yaml.safe_load((ROOT / "workflow" / "schemas" / "config.schema.yaml").read_text())
    algorithm = schema["properties"]["rl"]["properties"]["algorithms"]["additionalProperties"]
    fields = {field.name for field in dataclasses.fields(AlgorithmParams)}
    assert fields == set(algorithm["properties"]) == ALGORITHM_KEYS | set(FORKING_KEYS)
    assert {field.name for field in dataclasses.fields(AlgorithmParams)
            if field.default is dataclasses.MISSING} == set(algorithm["required"])
    config = profile_by_name("default")
    for name, stated in config["rl"]["algorithms"].items():
        params = cell_settings(config, Cell("tiny1m", name, "ead", 8, 0)).training.algorithm_params
        assert params.stated() == stated  # what verl's configs and the CPU losses receive: the config's keys only
    forked = AlgorithmParams("vanilla", "token-mean", False, forking_token_fraction=0.2)
    assert forked.forking() == (0.2, "response") and AlgorithmParams("vanilla", "token-mean", False).forking() == (
        1.0, "response")
    document = cell_settings(config, Cell("tiny1m", "dapo", "ead", 8, 0)).to_document()
    document["training"]["algorithm_params"]["clip_ratio_low"] = "0.2"
    with pytest.raises(ConfigError, match=r"'training\.algorithm_params\.clip_ratio_low' = '0\.2' is not a number"):
        CellSettings.from_document(document)
