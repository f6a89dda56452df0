"""What TRL's GRPO code cannot express (ead.settings.trl), one line per setting, and the cell module of each trainer.

Run: ``.venv/bin/python -m pytest tests/settings/test_trl.py``.
"""

import importlib.util

import pytest

from ead.settings.trl import CELL_MODULES, TRAINERS, trl_problems
from tests.conftest import CONFIG

DAPO = CONFIG["rl"]["algorithms"]["dapo"]


def test_the_configs_dapo_and_grpo_with_every_default_sampler_but_annealed_or_sequence_tis_can_run_on_trl():
    for name in ("dapo", "grpo"):
        assert trl_problems(f"rl.algorithms.{name}", CONFIG["rl"]["algorithms"][name], {"tis": "token"}) == []
    assert trl_problems("rl.algorithms.dapo", DAPO, {"tis": "none", "trains_at": "behaviour"}) == []


@pytest.mark.parametrize("algorithm, training, line", [
    ({"loss_mode": "clip_cov"}, {}, "rl.algorithms.x.loss_mode='clip_cov' (TRL has the clipped PPO loss only"),
    ({"loss_agg_mode": "seq-mean-token-sum"}, {}, "rl.algorithms.x.loss_agg_mode='seq-mean-token-sum' (mapped"),
    ({"use_kl_loss": True, "kl_loss_type": "mse"}, {}, "rl.algorithms.x.kl_loss_type='mse' (TRL's KL is k3"),
    ({"forking_token_fraction": 0.2}, {}, "rl.algorithms.x.forking_token_fraction=0.2 (TRL's loss has no token"),
    ({}, {"trains_at": "annealed"}, "trains_at: annealed (TRL evaluates its policy at one temperature)"),
    ({}, {"tis": "sequence"}, "tis: sequence (EADGRPOTrainer's TIS is per token)"),
])
def test_each_setting_trl_cannot_express_is_one_line_naming_it(algorithm, training, line):
    (problem,) = trl_problems("rl.algorithms.x", {**DAPO, **algorithm}, training)
    assert problem.startswith(line)


def test_each_trainer_has_a_cell_module():
    assert set(CELL_MODULES) == set(TRAINERS)
    for module in CELL_MODULES.values():
        assert importlib.util.find_spec(module) is not None, module
