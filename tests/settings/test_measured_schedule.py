"""The measured schedule's settings (ead.settings.measured_schedule): the overlay validates and its cells say
so; config errors name the key."""

from pathlib import Path

import pytest

from ead.settings import ConfigError, load_layered_config, validate_config
from ead.settings.rl import Cell, cell_settings
from tests.conftest import SCHEMA

ROOT = Path(__file__).resolve().parents[2]


def test_measured_overlay_validates_and_its_cells_say_so():
    config = load_layered_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "ablations" /
                                 "measured_schedule.yaml")
    validate_config(config, SCHEMA)
    settings = cell_settings(config, Cell("tiny1m_sharp", "dapo", "ead_measured_tis", 8, 0))
    assert settings.training.measured is True and settings.training.tis == "token"
    assert cell_settings(config, Cell("tiny1m_sharp", "dapo", "ead_tis", 8, 0)).training.measured is False


@pytest.mark.parametrize("change, message", [
    (lambda c: c["measured_schedule"].update(policies=["tiny1m"]), r"run on \['tiny1m_sharp'\], which "
                                                                   r"measured_schedule.policies does not size"),
    (lambda c: c["rl"]["samplers"].update(ead_measured_tis={"name": "linear", "tau_max": 1.2, "tau_min": 0.1,
                                                            "length": 32, "measured": True}),
     r"rl.samplers.ead_measured_tis.measured: only an ead sampler"),
    (lambda c: c["measured_schedule"].update(policies=["tiny1m_sharp", "tiny_arith"]),
     r"'tiny_arith' needs its entropy analysis"),
    (lambda c: c["measured_schedule"].update(policies=["tiny1m_sharp"]),
     r"premises.samplers \['ead_measured_tis'\] \(`measured: true`\) are probed on \['tiny1m'\], which "
     r"measured_schedule.policies does not size"),
])
def test_measured_schedule_config_errors_name_the_key(change, message):
    config = load_layered_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "ablations" /
                                 "measured_schedule.yaml")
    change(config)
    with pytest.raises(ConfigError, match=message):
        validate_config(config, SCHEMA)
