"""EAD's c and d0 sized from measurement (ead.analyses.measured_schedule): the stated rule, the table Fig. 3 draws and
the RL cells of a `measured: true` sampler read, and the checks of its config."""

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ead.analyses.measured_schedule import main, measured_parameters, read_measured_schedule, warmup_from_entropy
from ead.analyses.schedule_table import schedule_table as make_schedule_table
from ead.plots import fig03_annealing_schedule
from ead.rl.train import with_measured_schedule
from ead.schedule import AnnealedSchedule
from ead.settings import ConfigError, validate_config
from ead.settings.layering import load_layered_config
from ead.settings.rl import Cell, cell_settings
from ead.tables import ENTROPY_BY_POSITION, ENTROPY_SAMPLES, MEASURED_SCHEDULE, SCHEDULE_TABLE

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"
EAD = {"tau_max": 1.2, "tau_min": 0.1, "d0": 25, "step_factor": 5, "d_max": 40000, "warmup": 0, "decay_scale": 1}
#: a template prefix of 3 near-deterministic positions, then choices
CURVE = [0.01, 0.02, 0.05, 0.9, 1.1, 0.8, 1.0, 0.7, 0.6, 0.5, 0.4, 0.3]


def entropy_table(curve=CURVE):
    return pd.DataFrame({"position": range(len(curve)), "mean_entropy": curve, "ci_low": 0.0, "ci_high": 0.0,
                         "num_questions": 4, "num_responses": 8, "fraction_alive": 1.0, "model_name": "p",
                         "engine": "hf", "task": "countdown"})


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
    assert schedule.temperatures(16.4) > 0.1 + 1e-6 and schedule.temperatures(16.6) == pytest.approx(0.1)
    scaled = measured_parameters(entropy_table(), lengths, {**EAD, "decay_scale": 20}, entropy_fraction=0.5,
                                 window=8, length_quantile=0.5, floor_fraction=0.5)
    assert scaled["d0"] == pytest.approx(got["d0"] / 20)  # the run's decay_scale is part of the rule


def measured_table(tmp_path) -> Path:
    """The job's table for policy "p" (entropy curve CURVE, responses of 30-36 tokens): c = 3, d0 = 16.5 / ln 2.1."""
    entropy, samples, out = tmp_path / "e.csv", tmp_path / "s.parquet", tmp_path / "m.csv"
    ENTROPY_BY_POSITION.write(entropy_table(), entropy)
    ENTROPY_SAMPLES.write(pd.DataFrame({"prompt_id": ["a"] * 4, "sample_id": range(4), "num_tokens": [30, 32, 34, 36],
                                        "mean_entropy": 0.5, "entropies": [[0.5]] * 4, "model_name": "p",
                                        "engine": "hf", "task": "countdown"}), samples)
    main(["--policy", "p", "--entropy", str(entropy), "--samples", str(samples), "--ead", json.dumps(EAD),
          "--entropy-fraction", "0.5", "--window", "8", "--length-quantile", "0.5", "--floor-fraction", "0.5",
          "--max-position", "40", "--out", str(out)])
    return out


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


def test_measured_overlay_validates_and_its_cells_say_so():
    config = load_layered_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "ablations" /
                                 "measured_schedule.yaml")
    validate_config(config, SCHEMA)
    settings = cell_settings(config, Cell("tiny1m_sharp", "dapo", "ead_measured_tis", 8, 0))
    assert settings.training.measured is True and settings.training.tis == "token"
    assert cell_settings(config, Cell("tiny1m_sharp", "dapo", "ead_tis", 8, 0)).training.measured is False


def test_the_premise_probe_samples_measured_samplers_with_the_measured_c_and_d0(tmp_path):
    from ead.analyses.premises import with_measured_schedules
    from ead.settings.premises import premise_settings

    config = load_layered_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "ablations" /
                                 "measured_schedule.yaml")
    settings = premise_settings(config)
    assert settings["measured"] == ["ead_measured_tis"]
    assert "measured" not in premise_settings(load_layered_config(ROOT / "configs" / "config.yaml"))
    out = measured_table(tmp_path)
    applied = with_measured_schedules(settings, str(out))
    sized = applied["samplers"]["ead_measured_tis"]
    assert (sized["warmup"], sized["d0"]) == (3, pytest.approx(16.5 / math.log(2.1)))
    assert applied["samplers"]["ead_measured_tis"]["tau_max"] == settings["samplers"]["ead"]["tau_max"]
    assert applied["samplers"]["ead"] == settings["samplers"]["ead"]  # the hand-sized EAD keeps the ead block's
    with pytest.raises(SystemExit, match=r"\['ead_measured_tis'\] are `measured: true`: pass"):
        with_measured_schedules(settings, None)
    with pytest.raises(SystemExit, match="no probed sampler is `measured: true`"):
        with_measured_schedules(premise_settings(load_layered_config(ROOT / "configs" / "config.yaml")), str(out))


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
