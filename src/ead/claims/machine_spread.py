"""Across machines: how far the same claims move between runs that differ only in their CPU kernels, beside the
seeds' CI, and which verdicts flip within that spread.

At one declared ``numerics.cpu_level`` every x86 machine with that level gives the same bits (``ead.numerics``), so
machines at the same level have no spread to report. Runs at different levels (``avx2`` against ``default``, or
``native`` on two machines) do move: the kernels round differently, the SFT'd weights differ in their last bits, and
training amplifies that into other samples. This job reads the claims tables of such runs (same config otherwise)
and reports, per claim row (:data:`KEY`), the effect in each run, the spread (largest minus smallest effect), the
half-width of the first run's 95% CI (what the seeds and problems leave uncertain), the spread as a share of it, every
run's verdict and ``robust``: ``yes`` where every run reached the same verdict, ``no`` where it flipped between
kernel sets, so the verdict is not a property of the method alone (``ead.tables.MACHINE_SPREAD``).

Run (two runs of the positive-control overlay, at levels avx2 and default):
    python -m ead.claims.machine_spread --run avx2 /tmp/fresh/runs/positive_control/results/claims.csv \
        --run default /tmp/fresh-default/runs/positive_control/results/claims.csv --out machine_spread.csv
"""

from __future__ import annotations

import argparse

import pandas as pd

from ead.io import setup_logging
from ead.tables import CLAIMS, MACHINE_SPREAD

__all__ = ["KEY", "machine_spread", "row_keys"]

#: A claim row's identity across runs.
KEY = ["claim", "policy", "algorithm", "n", "sampler", "baseline", "metric", "evaluated_with", "step"]


def row_keys(table: pd.DataFrame) -> pd.Series:
    """Each row's identity across runs (:data:`KEY`'s values joined), for a claims table or a spread table."""
    return table[KEY].astype(str).agg("|".join, axis=1)


def machine_spread(runs: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The spread table of ``runs`` ({run name: claims table}, at least two; the first run's CI is the reference):
    one row per claim row present in every run, in the first run's order; a claim row missing from a run is an error
    naming the run (the runs must share their config)."""
    if len(runs) < 2:
        raise ValueError(f"need the claims of at least two runs, got {len(runs)}")
    names = list(runs)
    first = runs[names[0]].dropna(subset=["effect"])
    keys = row_keys(first)
    rows = []
    indexed = {name: table.assign(_key=row_keys(table)).set_index("_key") for name, table in runs.items()}
    for key, row in zip(keys, first.itertuples(index=False)):
        missing = [name for name in names if key not in indexed[name].index]
        if missing:
            raise ValueError(f"claim row {key} is missing from run(s) {missing}: the runs must share their config")
        effects = [float(indexed[name].loc[key, "effect"]) for name in names]
        verdicts = [str(indexed[name].loc[key, "verdict"]) for name in names]
        half_width = (row.ci_high - row.ci_low) / 2
        spread = max(effects) - min(effects)
        rows.append({**{column: getattr(row, column) for column in KEY}, "runs": ",".join(names),
                     "effects": ",".join(f"{effect:.6g}" for effect in effects), "effect_spread": spread,
                     "ci_half_width": half_width,
                     "spread_share": spread / half_width if half_width > 0 else float("nan"),
                     "verdicts": ",".join(verdicts), "robust": "yes" if len(set(verdicts)) == 1 else "no"})
    return pd.DataFrame(rows, columns=list(MACHINE_SPREAD.columns))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", nargs=2, action="append", required=True, metavar=("NAME", "CLAIMS"),
                        help="a run's name (e.g. its CPU level) and its claims table; give at least two")
    parser.add_argument("--out", required=True, help="the spread table (csv)")
    args = parser.parse_args(argv)
    log = setup_logging("claims.machine_spread")
    names = [name for name, _ in args.run]
    if len(set(names)) != len(names):
        parser.error(f"--run names must differ, got {names}")
    table = machine_spread({name: CLAIMS.read(path) for name, path in args.run})
    MACHINE_SPREAD.write(table, args.out)
    flipped = table.loc[table["robust"] == "no", "claim"].tolist()
    log.info("%d claim rows; largest spread %.4f; verdicts that flip between runs: %s", len(table),
             table["effect_spread"].max(), flipped or "none")


if __name__ == "__main__":
    main()
