"""The RL settings of the positive control: its cells train and are evaluated on the strategy task's table."""

from pathlib import Path

from ead.settings import load_layered_config, validate_config
from ead.settings.rl import cell_settings, grid_cells, rl_data

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"
DEFAULT = ROOT / "configs" / "config.yaml"
POSITIVE_CONTROL = ROOT / "configs" / "ablations" / "positive_control.yaml"


def test_the_positive_control_grid_is_its_strategy_policy_alone():
    config = load_layered_config(DEFAULT, POSITIVE_CONTROL)
    validate_config(config, SCHEMA)
    cells = grid_cells(config)
    assert {cell.policy for cell in cells} == {"tiny_strategy"}
    assert {cell.sampler for cell in cells} == {"tau0.6", "tau1.0", "tau1.2", "ead", "ead_tis"}
    assert rl_data(config) == "results/data/strategy.parquet"
    assert {cell_settings(config, cell).task for cell in cells} == {"strategy"}
    claimed = {(claim["sampler"], claim["baseline"]) for claim in config["claims"]}
    assert {("ead", "tau1.0"), ("ead", "tau1.2"), ("ead_tis", "ead")} <= claimed
    assert rl_data(load_layered_config(DEFAULT)) == "results/data/countdown.parquet"
