"""base_eval and rl.eval (ead.settings.evaluation): an evaluation job's settings, the base_eval checks, and
rl.eval.own_sampler's one default."""

from dataclasses import asdict

import pytest

from ead.settings import ConfigError, layer_config, load_layered_config
from ead.settings.arguments import completeness_args
from ead.settings.evaluation import (
    RL_ONLY_EVAL_FIELDS,
    cell_evaluation,
    check_base_eval,
    evaluates_with_own_sampler,
    evaluation_settings,
)
from ead.settings.rl import cell_settings, grid_cells
from tests.conftest import CONFIGS


def test_own_sampler_is_off_unless_the_config_says_so_wherever_it_is_read():
    default = load_layered_config(CONFIGS / "config.yaml")  # the default profile asks for it
    assert evaluates_with_own_sampler(default["rl"]) and cell_evaluation(default["rl"]).own_sampler is True
    assert completeness_args(default).endswith("--own-sampler")
    unset = layer_config(CONFIGS / "config.yaml").config
    del unset["rl"]["eval"]["own_sampler"]
    assert not evaluates_with_own_sampler(unset["rl"]) and cell_evaluation(unset["rl"]).own_sampler is False
    assert completeness_args(unset).endswith("--no-own-sampler")


def test_an_evaluation_jobs_settings_name_its_sampler_and_leave_out_the_rl_only_keys():
    config = load_layered_config(CONFIGS / "config.yaml")
    step0 = evaluation_settings(config, "rl_base")
    assert step0["schedule"] == {"name": "fixed", "tau": config["rl"]["eval"]["tau"]}
    assert step0["k"] == sorted({1, config["rl"]["eval"]["n"]}) and "every" not in step0 and "tau" not in step0
    assert evaluation_settings(config, "base")["k"] == config["base_eval"]["k"]


def test_base_eval_refuses_every_and_a_k_above_n():
    config = layer_config(CONFIGS / "config.yaml").config
    with pytest.raises(ConfigError, match=r"base_eval\.every"):
        check_base_eval({**config, "base_eval": {**config["base_eval"], "every": 2}})
    with pytest.raises(ConfigError, match=r"base_eval\.n = 1 must be >= every k"):
        check_base_eval({**config, "base_eval": {**config["base_eval"], "n": 1, "k": [1, 4]}})


def test_step_zero_and_the_completeness_check_read_the_cells_own_typed_groups():
    """The step-0 evaluation job is drawn with the cells' evaluation group (less when-to-evaluate), and the extent the
    combining jobs expect is the cells' budget and evaluation group: one source for a cell and the jobs around it."""
    config = load_layered_config(CONFIGS / "config.yaml")
    document = cell_settings(config, grid_cells(config)[0])
    step0 = evaluation_settings(config, "rl_base")
    shared = {key: value for key, value in asdict(document.eval).items() if key not in (*RL_ONLY_EVAL_FIELDS, "tau")}
    assert {key: value for key, value in step0.items() if key not in ("k", "schedule")} == shared
    assert step0["schedule"] == {"name": "fixed", "tau": document.eval.tau}
    assert completeness_args(config) == (f"--expect-steps {document.budget.steps} --eval-every {document.eval.every} "
                                         f"--{'' if document.eval.own_sampler else 'no-'}own-sampler")
    edited = layer_config(CONFIGS / "config.yaml").config
    edited["rl"]["eval"]["limit"] = 3
    assert evaluation_settings(edited, "rl_base")["limit"] == cell_evaluation(edited["rl"]).limit == 3
