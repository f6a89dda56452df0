"""Beyond the paper: the claims of one figure id as a forest plot, paired effect and 95% CI per comparison.

Reads the claims table (``results/claims.csv``, :data:`ead.tables.CLAIMS`) only. One row per claim whose ``figure`` is
``--figure`` (e.g. ``beyond``: the schedule shapes and the fair fixed-tau baselines of
``configs/ablations/beyond_the_paper.yaml``), one panel per metric: the effect (sampler - baseline, in points), its
paired 95% CI, the minimum detectable effect as a grey band around 0 (what this run could have detected with 80%
power), the declared smallest effect that matters as dotted lines at +/- it, the pre-registered effect (where the claim
has a prediction) as a grey triangle, and the verdict as the marker (filled: supported; open: inconclusive; cross:
contradicted; diamond: negligible). A figure whose claims span several policies gets a panel per policy, three a row.

Run:
    python -m ead.plots.claims_forest --claims results/claims.csv --figure beyond \
        --png figures/claims_beyond.png --pdf figures/claims_beyond.pdf
"""

from __future__ import annotations

import argparse

import matplotlib.pyplot as plt
import numpy as np

from ead.claims import comparison_label
from ead.plots.rl_curves import metric_label
from ead.plots.style import apply_style, figure_logger, save_figure
from ead.tables import CLAIMS

MARKERS = {"supported": {"marker": "o", "fillstyle": "full"}, "inconclusive": {"marker": "o", "fillstyle": "none"},
           "contradicted": {"marker": "X", "fillstyle": "full"}, "negligible": {"marker": "D", "fillstyle": "none"}}


def plot(claims, figure: str):
    """One panel per (metric, policy) of the figure's claims, in the claims' order, at most three panels a row (so an
    overlay whose policies cross two factors, listed row by row, draws them as a grid: the mechanism map's rarity
    across, fragility down); one row per claim."""
    rows = claims[claims["figure"] == figure]
    if rows.empty:
        raise ValueError(f"the claims table has no claim with figure = {figure!r} (figures: "
                         f"{sorted(claims['figure'].unique())})")
    apply_style()
    groups = list(dict.fromkeys(zip(rows["metric"], rows["policy"])))
    several_policies = rows["policy"].nunique() > 1
    columns = min(3, len(groups))
    grid_rows = -(-len(groups) // columns)
    height = max(2.5, 0.42 * rows.groupby(["metric", "policy"]).size().max() + 1.2)
    fig, axes = plt.subplots(grid_rows, columns, figsize=(5.2 * columns, height * grid_rows), squeeze=False)
    for ax in axes.flat[len(groups):]:
        ax.set_visible(False)
    for ax, (metric, policy) in zip(axes.flat, groups):
        panel = rows[(rows["metric"] == metric) & (rows["policy"] == policy)].reset_index(drop=True)
        y = np.arange(len(panel))[::-1]
        for yi, row in zip(y, panel.itertuples()):
            scale = 100  # rates in points
            ax.fill_betweenx([yi - 0.35, yi + 0.35], -row.mde * scale, row.mde * scale, color="0.9", lw=0)
            if np.isfinite(row.smallest_effect):
                for side in (-1, 1):
                    ax.plot([side * row.smallest_effect * scale] * 2, [yi - 0.4, yi + 0.4], ":", color="0.4", lw=1)
            predicted = getattr(row, "predicted_effect", np.nan)
            if isinstance(predicted, float) and np.isfinite(predicted):
                ax.plot(predicted * scale, yi + 0.25, marker="v", color="0.45", markersize=6, linestyle="none")
            ax.errorbar(row.effect * scale, yi, xerr=[[(row.effect - row.ci_low) * scale],
                                                     [(row.ci_high - row.effect) * scale]],
                        color="C0" if row.baseline == panel["baseline"].iloc[0] else "C1", capsize=3,
                        markersize=7, **MARKERS.get(row.verdict, MARKERS["inconclusive"]))
        ax.axvline(0, color="0.3", lw=0.8)
        labels = [f"{row.claim}: {comparison_label(row)}" for row in panel.itertuples()]
        ax.set_yticks(y, labels, fontsize=8)
        ax.set(xlabel=f"paired difference in {metric_label(metric)} (points)")
        if several_policies:
            ax.set_title(policy, fontsize=9)
    fig.suptitle(f"Claims '{figure}': effect and paired 95% CI (grey: +/- MDE at 80% power; dotted: +/- the smallest "
                 "effect that matters; grey triangle: the pre-registered effect;\nfilled: supported, open: "
                 "inconclusive, cross: contradicted, diamond: negligible)", fontsize=9)
    fig.tight_layout()
    return fig


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", required=True, help="the claims table (results/claims.csv)")
    parser.add_argument("--figure", required=True, help="draw the claims whose `figure` is this")
    parser.add_argument("--png", required=True)
    parser.add_argument("--pdf", required=True)
    args = parser.parse_args(argv)
    log = figure_logger(plot)
    save_figure(plot(CLAIMS.read(args.claims), args.figure), args.png, args.pdf)
    log.info("wrote %s and %s", args.png, args.pdf)


if __name__ == "__main__":
    main()
