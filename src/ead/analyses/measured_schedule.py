"""Size EAD's warm-up c and decay d0 from a policy's measurements instead of by hand (the authors' revised
``codeRL/ead_sweep.py`` idea, with our entropies and a stated rule).

Inputs: the policy's entropy by position (``ead.analyses.entropy_by_position``: the full-vocabulary entropy at tau = 1,
mean over responses) and its sampled responses' lengths (the same job's samples table). The rule:

* **c** = the first position among the first ``window`` whose mean entropy reaches ``entropy_fraction`` of the median
  entropy over those positions: a low-entropy template prefix is left at tau = 1 and the heat starts where the policy
  starts choosing. (The authors' rule, on the exact entropy where they used the sampled token's negative log-prob.)
* **d0** so that, at step 0, tau reaches tau_min at ``floor_fraction`` of the ``length_quantile`` response length:
  tau_t = 1 + tau_max - exp(t / (decay_scale d0)) hits tau_min at t* = decay_scale d0 ln(1 + tau_max - tau_min), so
  d0 = floor_fraction L_q / (decay_scale ln(1 + tau_max - tau_min)) with the run's own tau_max, tau_min and
  decay_scale (the authors use fixed reference temperatures 1.2 and 0.3 and decay_scale 20).

Output (:data:`ead.tables.MEASURED_SCHEDULE`): one row per (schedule, position) for the measured schedule and the
hand-sized one (the config's ``ead`` block) at step 0, each with its parameters and the measurements behind them, so
Fig. 3 draws both and the RL cells of a sampler with ``measured: true`` read c and d0 from it.

Run:
    python -m ead.analyses.measured_schedule --policy tiny1m_sharp \
        --entropy results/analyses/entropy_by_position/tiny1m_sharp.csv \
        --samples results/analyses/entropy_by_position/tiny1m_sharp_samples.parquet --ead '<the ead block as JSON>' \
        --entropy-fraction 0.5 --window 16 --length-quantile 0.5 --floor-fraction 0.5 --max-position 64 \
        --out results/schedule/measured_tiny1m_sharp.csv
"""

from __future__ import annotations

import argparse
import json
import math

import numpy as np
import pandas as pd

from ead.io import setup_logging
from ead.schedule import AnnealedSchedule
from ead.tables import ENTROPY_BY_POSITION, ENTROPY_SAMPLES, MEASURED_SCHEDULE

__all__ = ["measured_parameters", "measured_schedule_table", "read_measured_schedule"]


def warmup_from_entropy(mean_entropy: np.ndarray, *, fraction: float, window: int) -> tuple[int, float]:
    """(c, the median entropy of the first ``window`` positions): the first position reaching ``fraction`` of it."""
    early = np.asarray(mean_entropy[:window], dtype=float)
    early = early[np.isfinite(early)]
    if early.size == 0:
        raise ValueError("no finite mean entropy in the first positions; cannot size the warm-up")
    level = float(np.median(early))
    reached = np.flatnonzero(np.asarray(mean_entropy[:window], dtype=float) >= fraction * level)
    return int(reached[0]) if reached.size else 0, level


def measured_parameters(entropy: pd.DataFrame, lengths: np.ndarray, ead: dict, *, entropy_fraction: float,
                        window: int, length_quantile: float, floor_fraction: float) -> dict:
    """c and d0 by the module's rule, with the measurements they come from."""
    curve = entropy.sort_values("position")["mean_entropy"].to_numpy(dtype=float)
    warmup, early_level = warmup_from_entropy(curve, fraction=entropy_fraction, window=window)
    lengths = np.asarray(lengths, dtype=float)
    if lengths.size == 0:
        raise ValueError("no response lengths; cannot size d0")
    length = float(np.quantile(lengths, length_quantile))
    floor_position = floor_fraction * length
    d0 = floor_position / (ead["decay_scale"] * math.log(1.0 + ead["tau_max"] - ead["tau_min"]))
    if not d0 > 0:
        raise ValueError(f"the measured d0 is {d0} (response length quantile {length}); it must be > 0")
    return {"warmup": warmup, "d0": d0, "early_median_entropy": early_level, "length_at_quantile": length,
            "floor_position": floor_position, "num_responses": int(lengths.size)}


def measured_schedule_table(policy: str, entropy: pd.DataFrame, lengths: np.ndarray, ead: dict, *,
                            entropy_fraction: float, window: int, length_quantile: float, floor_fraction: float,
                            max_position: int) -> pd.DataFrame:
    measured = measured_parameters(entropy, lengths, ead, entropy_fraction=entropy_fraction, window=window,
                                   length_quantile=length_quantile, floor_fraction=floor_fraction)
    positions = np.arange(max_position + 1)
    rule = (f"c: first of the first {window} positions with mean entropy >= {entropy_fraction:g} x their median; "
            f"d0: tau_min at {floor_fraction:g} x the {length_quantile:g} quantile of response length at step 0")
    frames = []
    for name, params in (("measured", {**ead, "warmup": measured["warmup"], "d0": measured["d0"]}),
                         ("hand_sized", dict(ead))):
        schedule = AnnealedSchedule(**{**params, "d_max": max(params["d_max"], params["d0"])})
        frames.append(pd.DataFrame({"position": positions, "tau": schedule.temperatures(positions, step=0)}).assign(
            schedule=name, policy=policy, warmup=int(params["warmup"]), d0=float(params["d0"]),
            tau_max=float(ead["tau_max"]), tau_min=float(ead["tau_min"]), decay_scale=float(ead["decay_scale"]),
            entropy_fraction=entropy_fraction, window=window, length_quantile=length_quantile,
            floor_fraction=floor_fraction, rule=rule,
            **{key: measured[key] for key in ("early_median_entropy", "length_at_quantile", "floor_position",
                                              "num_responses")}))
    return pd.concat(frames, ignore_index=True)


def read_measured_schedule(path: str) -> dict:
    """c and d0 of the measured schedule in its table (this job writes it; an RL cell with ``measured: true`` and the
    premise probe read it)."""
    table = MEASURED_SCHEDULE.read(path)
    rows = table[table["schedule"] == "measured"]
    if rows.empty:
        raise SystemExit(f"{path}: no row with schedule == 'measured'")
    first = rows.iloc[0]
    return {"warmup": int(first["warmup"]), "d0": float(first["d0"])}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policy", required=True)
    parser.add_argument("--entropy", required=True, help="entropy by position (ead.analyses.entropy_by_position)")
    parser.add_argument("--samples", required=True, help="that job's samples (response lengths)")
    parser.add_argument("--ead", required=True, help="the config's ead block (JSON): the hand-sized schedule")
    parser.add_argument("--entropy-fraction", type=float, required=True)
    parser.add_argument("--window", type=int, required=True)
    parser.add_argument("--length-quantile", type=float, required=True)
    parser.add_argument("--floor-fraction", type=float, required=True)
    parser.add_argument("--max-position", type=int, required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    log = setup_logging("measured_schedule")
    lengths = ENTROPY_SAMPLES.read(args.samples)["num_tokens"].to_numpy()
    table = measured_schedule_table(args.policy, ENTROPY_BY_POSITION.read(args.entropy), lengths,
                                    json.loads(args.ead), entropy_fraction=args.entropy_fraction, window=args.window,
                                    length_quantile=args.length_quantile, floor_fraction=args.floor_fraction,
                                    max_position=args.max_position)
    MEASURED_SCHEDULE.write(table, args.out)
    first = table[table["schedule"] == "measured"].iloc[0]
    log.info("%s: c = %d, d0 = %.2f (early entropy %.3f nats; length quantile %.1f tokens; floor at %.1f)",
             args.policy, first["warmup"], first["d0"], first["early_median_entropy"], first["length_at_quantile"],
             first["floor_position"])


if __name__ == "__main__":
    main()
