"""Across policies: does G1's heat effect go with tau 1.0's learning (G4's gain), or against it?

Every countdown policy tried gives two numbers measured apart: G1's heat half (the premise probe's hot sampler's Pass@n
minus tau 1.0's before RL, ``ead.analyses.premises``, ``results/premises/<policy>_verdicts.csv``) and premise G4's gain
(tau 1.0's Pass@1 from step 0 to the last evaluated step in an RL setting, ``ead.claims.rl_learns``,
``results/premises/rl_learns.csv``). The policies on which heat at the fork pays (the sharpened ones) were the ones
that did not learn (TESTBED.md, "Where the search ends"). This job puts that reading in a table:

* one row per (source run, policy) that has both tables in the run's premises directory: the G1 heat effect with its
  95% CI and verdict, and the G4 gain of the (algorithm, n, sampler) asked for, with its CI, verdict, step, seeds and
  problems (``ead.tables.PREMISE_TRADEOFF``);
* Spearman's rank correlation rho between the two over those rows (average ranks for ties), with the number of rows
  and of distinct policies, and its two-sided p-value under the null of no association: exact over every permutation
  of the rows (up to 8 rows), else from ``resamples`` random permutations seeded by ``seed``
  (``ead.tables.PREMISE_TRADEOFF_RHO``). With 3-4 rows the smallest exact p-values are 0.33 and 0.083, at 6 rows
  2/720, reached only by a perfect ranking: a rho short of that describes the rows, it does not establish an
  association.

A policy may appear in several runs (e.g. in the default profile's grid and in an overlay's other training setting):
each (run, policy) is one row, and the gains come from the settings those runs trained in, which the rows record.

Run:
    python -m ead.claims.premise_tradeoff --run default /tmp/ead-default-clone/results/premises \
        --run fixed_pool runs/fixed_pool/results/premises --algorithm dapo --n 8 --sampler tau1.0 \
        --resamples 10000 --seed 1234 --out tradeoff.csv --out-correlation tradeoff_rho.csv
"""

from __future__ import annotations

import argparse
import itertools
import math
from pathlib import Path

import numpy as np
import pandas as pd

from ead.analyses.premises import G1_HEAT_PART
from ead.io import setup_logging
from ead.tables import PREMISE_TRADEOFF, PREMISE_TRADEOFF_RHO, PREMISE_VERDICTS, RL_LEARNS

__all__ = ["EXACT_UP_TO", "permutation_p_value", "spearman_rho", "tradeoff_rows", "tradeoff_correlation"]

#: Up to this many rows the p-value enumerates every permutation (8! = 40320); above, random permutations.
EXACT_UP_TO = 8


def spearman_rho(x, y) -> float:
    """Spearman's rank correlation: the Pearson correlation of the average ranks (NaN where a side has no spread)."""
    x, y = pd.Series(np.asarray(x, dtype=float)), pd.Series(np.asarray(y, dtype=float))
    if len(x) != len(y) or len(x) < 2:
        raise ValueError(f"need two equally long series of at least 2 values, got {len(x)} and {len(y)}")
    rx, ry = x.rank(method="average").to_numpy(), y.rank(method="average").to_numpy()
    if np.ptp(rx) == 0 or np.ptp(ry) == 0:
        return float("nan")
    return float(np.corrcoef(rx, ry)[0, 1])


def permutation_p_value(x, y, *, resamples: int, seed: int) -> tuple[float, str]:
    """Two-sided p-value of Spearman's rho under no association: the share of permutations of ``y`` against ``x``
    whose |rho| is at least the observed one; (p, how it was computed)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    observed = abs(spearman_rho(x, y))
    if math.isnan(observed):
        return float("nan"), "no spread in one side"
    tolerance = 1e-12
    if len(x) <= EXACT_UP_TO:
        values = [abs(spearman_rho(x, y[list(order)])) for order in itertools.permutations(range(len(y)))]
        return float(np.mean(np.array(values) >= observed - tolerance)), f"exact, {len(values)} permutations"
    rng = np.random.default_rng(seed)
    values = np.array([abs(spearman_rho(x, rng.permutation(y))) for _ in range(resamples)])
    # the observed order counts as one permutation, so p is never 0
    return (float((1 + np.sum(values >= observed - tolerance)) / (resamples + 1)),
            f"{resamples} random permutations, seed {seed}")


def _heat_row(verdicts: pd.DataFrame, source: str) -> pd.Series:
    rows = verdicts[(verdicts["premise"] == "G1") & (verdicts["part"] == G1_HEAT_PART)]
    if len(rows) != 1:
        raise ValueError(f"{source}: expected one G1 row {G1_HEAT_PART!r}, found {len(rows)}")
    return rows.iloc[0]


def tradeoff_rows(runs: list[tuple[str, str]], *, algorithm: str, n: int, sampler: str) -> pd.DataFrame:
    """One row per (run, policy) whose premises directory holds both the policy's verdicts and a G4 row of
    (``algorithm``, ``n``, ``sampler``); a run without any such policy is refused."""
    rows = []
    for source, directory in runs:
        learns = RL_LEARNS.read(Path(directory) / "rl_learns.csv")
        learns = learns[(learns["algorithm"] == algorithm) & (learns["n"] == n) & (learns["sampler"] == sampler)]
        found = 0
        for gain in learns.sort_values("policy").itertuples():
            path = Path(directory) / f"{gain.policy}_verdicts.csv"
            if not path.exists():
                continue
            heat = _heat_row(PREMISE_VERDICTS.read(path), str(path))
            found += 1
            rows.append({"source": source, "policy": gain.policy, "heat_sampler": heat["sampler"],
                         "heat_metric": heat["metric"], "heat_effect": float(heat["effect"]),
                         "heat_ci_low": float(heat["ci_low"]), "heat_ci_high": float(heat["ci_high"]),
                         "heat_verdict": heat["verdict"], "algorithm": algorithm, "n": n, "sampler": sampler,
                         "gain_metric": gain.metric, "gain_step": int(gain.step), "gain_effect": gain.effect,
                         "gain_ci_low": gain.ci_low, "gain_ci_high": gain.ci_high, "gain_verdict": gain.verdict,
                         "num_seeds": int(gain.num_seeds), "num_problems": int(gain.num_problems)})
        if not found:
            raise ValueError(f"run {source!r} ({directory}): no policy has both <policy>_verdicts.csv and a G4 row of "
                             f"{algorithm} / n {n} / {sampler} in rl_learns.csv")
    table = pd.DataFrame(rows, columns=[column for column in PREMISE_TRADEOFF.columns if not column.endswith("_rank")])
    table["heat_rank"] = table["heat_effect"].rank(method="average")
    table["gain_rank"] = table["gain_effect"].rank(method="average")
    return table


def tradeoff_correlation(table: pd.DataFrame, *, resamples: int, seed: int) -> pd.DataFrame:
    """One row: Spearman's rho between the rows' G1 heat effects and G4 gains, its p-value, and what it covers."""
    rho = spearman_rho(table["heat_effect"], table["gain_effect"])
    p_value, method = permutation_p_value(table["heat_effect"], table["gain_effect"], resamples=resamples, seed=seed)
    return pd.DataFrame([{
        "x": "G1 heat effect (hot sampler's Pass@n - tau 1.0's, before RL)",
        "y": f"G4 gain ({table['sampler'].iloc[0]}'s {table['gain_metric'].iloc[0]}, last step - step 0)",
        "rho": rho, "num_points": len(table), "num_policies": table["policy"].nunique(), "p_value": p_value,
        "p_method": f"two-sided permutation p of |rho|: {method}",
        "points": "; ".join(f"{row.source}/{row.policy}" for row in table.itertuples())}],
        columns=list(PREMISE_TRADEOFF_RHO.columns))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", nargs=2, action="append", required=True, metavar=("LABEL", "PREMISES_DIR"),
                        help="a run's label and its results/premises directory (<policy>_verdicts.csv, rl_learns.csv)")
    parser.add_argument("--algorithm", required=True, help="the G4 rows' algorithm (dapo)")
    parser.add_argument("--n", type=int, required=True, help="the G4 rows' rollouts per prompt (8)")
    parser.add_argument("--sampler", required=True, help="the G4 rows' sampler (tau1.0)")
    parser.add_argument("--resamples", type=int, required=True,
                        help=f"random permutations above {EXACT_UP_TO} rows (exact up to it)")
    parser.add_argument("--seed", type=int, required=True, help="their seed (stats.seed)")
    parser.add_argument("--out", required=True, help="one row per (run, policy)")
    parser.add_argument("--out-correlation", required=True, help="Spearman's rho over those rows")
    args = parser.parse_args(argv)
    log = setup_logging("claims.premise_tradeoff")
    table = tradeoff_rows([tuple(run) for run in args.run], algorithm=args.algorithm, n=args.n, sampler=args.sampler)
    correlation = tradeoff_correlation(table, resamples=args.resamples, seed=args.seed)
    PREMISE_TRADEOFF.write(table, args.out)
    PREMISE_TRADEOFF_RHO.write(correlation, args.out_correlation)
    row = correlation.iloc[0]
    log.info("Spearman rho %.3f over %d rows (%d policies), p = %.3g (%s)", row["rho"], row["num_points"],
             row["num_policies"], row["p_value"], row["p_method"])


if __name__ == "__main__":
    main()
