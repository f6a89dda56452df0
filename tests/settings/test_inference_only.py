"""The inference-only comparison's settings (ead.settings.inference_only): config errors name the key."""

from pathlib import Path

import pytest

from ead.settings import ConfigError, load_layered_config, validate_config
from tests.conftest import SCHEMA

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("change, message", [
    (lambda s: s.update(report_split="val"), "select_split and report_split are both 'val'"),
    (lambda s: s.update(models=["smollm2-135m-instruct"]), "'smollm2-135m-instruct' is not a tiny policy"),
    (lambda s: s["samplers"].pop("ead_d6") and [s["samplers"].pop(k) for k in ("ead_d12", "ead_d25", "ead_d50")],
     "needs both families"),
    (lambda s: s.update(baseline="tau2.0"), "inference_only.baseline = 'tau2.0' is not one of"),
    (lambda s: s["samplers"].update(bad={"name": "ead", "d0": -1}), r"inference_only.samplers.bad: .*d0"),
])
def test_inference_only_config_errors_name_the_key(change, message):
    config = load_layered_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "ablations" /
                                 "inference_only.yaml")
    validate_config(dict(config), SCHEMA)
    config = load_layered_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "ablations" /
                                 "inference_only.yaml")
    change(config["inference_only"])
    with pytest.raises(ConfigError, match=message):
        validate_config(config, SCHEMA)
