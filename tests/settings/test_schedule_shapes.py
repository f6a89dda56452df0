"""The schedule-shapes figure's settings (ead.settings.schedule_shapes): config errors name the key."""

from pathlib import Path

import pytest

from ead.settings import ConfigError, load_layered_config, validate_config
from tests.conftest import SCHEMA

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("change, message", [
    (lambda c: c["schedule_shapes"].update(baseline="tau1.2"), r"schedule_shapes.baseline = 'tau1.2' must be one of "
                                                                r"paired_baselines"),
    (lambda c: c["schedule_shapes"].update(samplers=["ead_tis", "entropy_gate_tis"]),
     r"'entropy_gate_tis' is a entropy_aware sampler"),
    (lambda c: c["schedule_shapes"].update(metrics=["pass@8"]), r"'pass@8' needs k in rl.eval.k"),
    (lambda c: c["schedule_shapes"].update(n=4), r"cell \(policy, algorithm, sampler, n\) = \('tiny1m_sharp', 'dapo', "
                                                 r"'ead_tis', 4\) is not in the grid"),
])
def test_schedule_shapes_config_errors_name_the_key(change, message):
    config = load_layered_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "ablations" /
                                 "beyond_the_paper.yaml")
    change(config)
    with pytest.raises(ConfigError, match=message):
        validate_config(config, SCHEMA)
