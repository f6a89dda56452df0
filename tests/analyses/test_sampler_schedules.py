"""tau by position and step of every RL sampler (ead.analyses.sampler_schedules), as its cells sample."""

import json
from pathlib import Path

import numpy as np
import pytest

from ead.analyses.sampler_schedules import main as schedules_main
from ead.analyses.sampler_schedules import sampler_schedules
from ead.schedule import build_schedule
from ead.settings.rl import sampler_schedule
from ead.tables import SAMPLER_SCHEDULES
from tests.conftest import BEYOND

ROOT = Path(__file__).resolve().parents[2]


def test_sampler_schedules_tabulate_each_shape_as_its_cells_sample(tmp_path):
    spec = BEYOND["schedule_shapes"]
    documents = {s: sampler_schedule(BEYOND, s) for s in spec["samplers"]}
    table = sampler_schedules(documents, spec["steps"], spec["max_position"])
    for sampler, document in documents.items():
        for step in spec["steps"]:
            rows = table[(table["sampler"] == sampler) & (table["step"] == step)].sort_values("position")
            expected = build_schedule(document).temperatures(np.arange(spec["max_position"] + 1), step=step)
            assert rows["tau"].to_numpy() == pytest.approx(np.asarray(expected, dtype=float))
    ead = table[(table["sampler"] == "ead_tis") & (table["step"] == 1)]
    mean = table[(table["sampler"] == "ead_mean_matched_tis") & (table["step"] == 1)]
    assert mean["tau"].nunique() == 1  # one temperature per step: negexp's time-average over [0, D]
    decay = 25 + 5 * 1  # D = decay_scale d_s at step 1; the floored negexp averaged over [0, D] (numerically)
    grid = np.linspace(0, decay, 200001)
    assert mean["tau"].iloc[0] == pytest.approx(np.maximum(2.2 - np.exp(grid / decay), 0.1).mean(), abs=1e-4)
    assert len(ead) and ead["tau"].iloc[0] == pytest.approx(1.2)
    with pytest.raises(ValueError, match="sets the temperature from the logits"):
        sampler_schedules({"gate": sampler_schedule(BEYOND, "entropy_gate_tis")}, [1], 8)
    out = tmp_path / "shapes.csv"
    schedules_main(["--schedules", json.dumps(documents), "--steps", "1", "16", "--max-position", "40", "--out",
                    str(out)])
    assert len(SAMPLER_SCHEDULES.read(out)) == 4 * 2 * 41
