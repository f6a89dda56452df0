"""Tabulate the temperature each RL sampler gives by response position and RL step (data for the schedule-shapes
figure, ``ead.plots.schedule_shapes``).

One row per (sampler, step, position) with the sampler's schedule document (``ead.settings.rl.sampler_schedule``, what
its cells sample with) as ``schedule_params``. Only position-and-step schedules: one whose temperature reads the
logits (``entropy_aware``) has no tau by position, and is refused by name.

Run:
    python -m ead.analyses.sampler_schedules --schedules '{"ead_tis": {"name": "ead", ...}, ...}' --steps 1 16 \
        --max-position 40 --out results/rl/schedule_shapes.csv
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import pandas as pd

from ead.io import setup_logging
from ead.schedule import build_schedule
from ead.tables import SAMPLER_SCHEDULES


def sampler_schedules(schedules: dict[str, dict], steps: list[int], max_position: int) -> pd.DataFrame:
    """tau of every sampler at positions 0..max_position and each of ``steps``."""
    positions = np.arange(max_position + 1)
    frames = []
    for sampler, document in schedules.items():
        schedule = build_schedule(document)
        if schedule.reads_logits:
            raise ValueError(f"sampler {sampler!r}: schedule {document['name']!r} sets the temperature from the "
                             f"logits, so it has no temperature by position to tabulate")
        for step in steps:
            frames.append(pd.DataFrame({"sampler": sampler, "step": int(step), "position": positions,
                                        "tau": np.asarray(schedule.temperatures(positions, step=step), dtype=float),
                                        "schedule_params": json.dumps(document, sort_keys=True)}))
    return pd.concat(frames, ignore_index=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schedules", required=True, help="sampler -> schedule document (JSON)")
    parser.add_argument("--steps", type=int, nargs="+", required=True, help="RL steps to tabulate")
    parser.add_argument("--max-position", type=int, required=True, help="last response position")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    log = setup_logging("sampler_schedules")
    table = sampler_schedules(json.loads(args.schedules), args.steps, args.max_position)
    SAMPLER_SCHEDULES.write(table, args.out)
    log.info("wrote %d rows (%d samplers) to %s", len(table), table["sampler"].nunique(), args.out)


if __name__ == "__main__":
    main()
