"""Tabulate the EAD temperature schedule for several decay rates (data for paper Figure 3).

One row per (decay d, response position t) at RL step 0, with the schedule parameters as columns.

Run:
    python -m ead.analyses.schedule_table --tau-max 1.2 --tau-min 0.1 --warmup 10 --decay-scale 1 --d-max 40000 \
        --decays 25 100 400 --max-position 1024 --out results/schedule/schedule_table.csv
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from ead.io import setup_logging
from ead.schedule import AnnealedSchedule
from ead.tables import SCHEDULE_TABLE


def schedule_table(tau_max: float, tau_min: float, warmup: int, decay_scale: float, d_max: float, decays,
                   max_position: int):
    """Tidy table of tau_t for t = 0..max_position for each decay rate d (used as d0 at step 0; every d <= d_max,
    the config's ead.d_max)."""
    positions = np.arange(max_position + 1)
    frames = []
    for d in decays:
        schedule = AnnealedSchedule(tau_max=tau_max, tau_min=tau_min, d0=d, d_max=d_max, warmup=warmup,
                                    decay_scale=decay_scale)
        frames.append(pd.DataFrame({
            "decay_d": float(d),
            "effective_decay": schedule.effective_decay(0),
            "position": positions,
            "tau": schedule.temperatures(positions, step=0),
        }))
    table = pd.concat(frames, ignore_index=True)
    return table.assign(tau_max=tau_max, tau_min=tau_min, warmup=warmup, decay_scale=decay_scale, step=0)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tau-max", type=float, required=True)
    parser.add_argument("--tau-min", type=float, required=True)
    parser.add_argument("--warmup", type=int, required=True, help="c: positions t < c use tau = 1")
    parser.add_argument("--decay-scale", type=float, required=True, help="1 = paper, 20 = reference code")
    parser.add_argument("--d-max", type=float, required=True, help="cap of d_s (ead.d_max); every decay must be <= it")
    parser.add_argument("--decays", type=float, nargs="+", required=True)
    parser.add_argument("--max-position", type=int, required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    log = setup_logging("schedule_table")
    table = schedule_table(args.tau_max, args.tau_min, args.warmup, args.decay_scale, args.d_max, args.decays,
                           args.max_position)
    SCHEDULE_TABLE.write(table, args.out)
    log.info("wrote %d rows (%d decay rates) to %s", len(table), len(args.decays), args.out)


if __name__ == "__main__":
    main()
