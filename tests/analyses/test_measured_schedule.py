"""EAD's c and d0 sized from measurement (ead.analyses.measured_schedule): the stated rule, and the table Fig. 3
draws and the RL cells of a `measured: true` sampler read."""

import math
from pathlib import Path

import numpy as np
import pytest

from ead.analyses.measured_schedule import measured_parameters, read_measured_schedule, warmup_from_entropy
from ead.analyses.schedule_table import schedule_table as make_schedule_table
from ead.plots import fig03_annealing_schedule
from ead.rl.train import with_measured_schedule
from ead.schedule import AnnealedSchedule, annealed_temperature
from ead.settings import load_layered_config
from ead.settings.rl import Cell, cell_settings
from ead.tables import (
    MEASURED_SCHEDULE,
    SCHEDULE_TABLE,
)
from tests.analyses.conftest import CURVE, EAD, entropy_table, measured_table

ROOT = Path(__file__).resolve().parents[2]


def test_warmup_is_the_first_position_reaching_the_fraction_of_the_early_median():
    c, level = warmup_from_entropy(np.array(CURVE), fraction=0.5, window=8)
    assert level == pytest.approx(np.median(CURVE[:8])) and c == 3
    assert warmup_from_entropy(np.array([1.0, 1.0, 0.9]), fraction=0.5, window=8)[0] == 0  # no prefix: c = 0


def test_d0_puts_the_floor_at_the_chosen_fraction_of_the_length_quantile():
    lengths = np.array([20, 30, 32, 34, 40, 60])
    got = measured_parameters(entropy_table(), lengths, EAD, entropy_fraction=0.5, window=8, length_quantile=0.5,
                              floor_fraction=0.5)
    assert got["length_at_quantile"] == pytest.approx(33.0) and got["floor_position"] == pytest.approx(16.5)
    assert got["d0"] == pytest.approx(16.5 / math.log(2.1)) and got["warmup"] == 3
    schedule = AnnealedSchedule(**{**EAD, "d0": got["d0"], "warmup": got["warmup"]})
    def tau(t):  # the formula between token positions (a schedule's temperatures take whole positions only)
        return annealed_temperature(t, schedule.tau_max, schedule.tau_min, schedule.effective_decay(0), schedule.warmup)

    assert tau(16.4) > 0.1 + 1e-6 and tau(16.6) == pytest.approx(0.1)
    scaled = measured_parameters(entropy_table(), lengths, {**EAD, "decay_scale": 20}, entropy_fraction=0.5,
                                 window=8, length_quantile=0.5, floor_fraction=0.5)
    assert scaled["d0"] == pytest.approx(got["d0"] / 20)  # the run's decay_scale is part of the rule


def test_the_job_writes_both_schedules_and_the_cells_read_the_measured_one(tmp_path):
    out = measured_table(tmp_path)
    table = MEASURED_SCHEDULE.read(out)
    assert set(table["schedule"]) == {"measured", "hand_sized"} and len(table) == 2 * 41
    measured = read_measured_schedule(out)
    assert measured == {"warmup": 3, "d0": pytest.approx(16.5 / math.log(2.1))}
    hand = table[table["schedule"] == "hand_sized"].sort_values("position")
    assert hand["tau"].to_numpy() == pytest.approx(AnnealedSchedule(**EAD).temperatures(np.arange(41)))
    config = load_layered_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "ablations" /
                                 "measured_schedule.yaml")
    config["ead"].update(EAD)
    settings = cell_settings(config, Cell("tiny1m_sharp", "dapo", "ead_measured_tis", 8, 0))
    applied = with_measured_schedule(settings, str(out))
    assert applied.schedule["warmup"] == 3 and applied.schedule["d0"] == measured["d0"]
    assert applied.schedule["tau_max"] == 1.2  # the rest is the ead block's
    with pytest.raises(SystemExit, match="pass its policy's --measured-schedule"):
        with_measured_schedule(settings, None)
    with pytest.raises(SystemExit, match="is not `measured: true`"):
        with_measured_schedule(cell_settings(config, Cell("tiny1m_sharp", "dapo", "ead_tis", 8, 0)), str(out))
    # Fig. 3 draws the measured schedules next to the hand-sized one, from the tables
    schedule_table = SCHEDULE_TABLE.validate(make_schedule_table(1.2, 0.1, 10, 1, 40000, [25, 100], 64))
    fig = fig03_annealing_schedule.plot(schedule_table, table)
    assert len(fig.axes) == 2
    line = next(ln for ln in fig.axes[1].get_lines() if ln.get_label().startswith("p: c = 3"))
    assert list(line.get_ydata()) == pytest.approx(list(table[table["schedule"] == "measured"]["tau"]))
    assert len(fig03_annealing_schedule.plot(schedule_table).axes) == 1  # without measured schedules: as before
