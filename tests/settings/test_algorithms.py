"""The algorithm documents (ead.settings.algorithms): the key sets both backends read, and the check of one."""

import pytest

from ead.settings import ConfigError
from ead.settings.algorithms import ACTOR_KEYS, ALGORITHM_KEYS, POLICY_LOSS_KEYS, POLICY_LOSS_NEEDS, check_algorithm
from tests.conftest import CONFIG


def test_the_key_sets_are_the_union_the_losses_and_the_verl_overrides_read():
    assert set(POLICY_LOSS_KEYS) == {key for keys in POLICY_LOSS_NEEDS.values() for key in keys}
    assert ALGORITHM_KEYS == {"loss_mode", *ACTOR_KEYS, *POLICY_LOSS_KEYS}


def test_every_shipped_algorithm_passes_and_a_loss_missing_its_parameters_is_refused_by_key():
    for name, algorithm in CONFIG["rl"]["algorithms"].items():
        check_algorithm(f"rl.algorithms.{name}", algorithm, used_by_verl=False)
    kl_cov = next(algorithm for algorithm in CONFIG["rl"]["algorithms"].values() if algorithm["loss_mode"] == "kl_cov")
    broken = {key: value for key, value in kl_cov.items() if key != "kl_cov_ratio"}
    with pytest.raises(ConfigError, match=r"rl\.algorithms\.x.*kl_cov_ratio"):
        check_algorithm("rl.algorithms.x", broken, used_by_verl=False)
