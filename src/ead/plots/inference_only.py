"""Inference-only sampler comparison (configs/ablations/inference_only.yaml): per model and metric, each sampler's
paired difference to the baseline temperature on the report split with its 95% CI, the best EAD and best fixed
configuration (chosen on the selection split) marked, and the headline EAD-best minus fixed-best with its verdict.

Reads ``results/inference_only/samplers.csv`` and ``headline.csv`` (``ead.analyses.inference_only``) only.

Run:
    python -m ead.plots.inference_only --table results/inference_only/samplers.csv \
        --headline results/inference_only/headline.csv --png figures/inference_only.png --pdf figures/inference_only.pdf
"""

from __future__ import annotations

import argparse
import re

import matplotlib.pyplot as plt

from ead.plots.rl_curves import metric_label, sampler_colors
from ead.plots.style import apply_style, figure_logger, save_figure
from ead.tables import INFERENCE_ONLY, INFERENCE_ONLY_HEADLINE


def natural_key(name: str) -> tuple:
    """'ead_d6' before 'ead_d12': numbers in a sampler's name compare as numbers."""
    return tuple(float(part) if index % 2 else part
                 for index, part in enumerate(re.split(r"(\d+(?:\.\d+)?)", name)))


def plot(table, headline):
    apply_style()
    models = list(dict.fromkeys(headline["model"]))
    metrics = list(dict.fromkeys(headline["metric"]))
    report = headline["report_split"].iloc[0]
    rows = table[table["split"] == report]
    fig, axes = plt.subplots(len(metrics), len(models), figsize=(3.9 * len(models), 2.6 * len(metrics)),
                             squeeze=False)
    for column, model in enumerate(models):
        for row, metric in enumerate(metrics):
            ax = axes[row][column]
            panel = rows[(rows["model"] == model) & (rows["metric"] == metric)]
            # fixed family first; within a family by the number in the name (tau 0.7 < 1.2, d0 6 < 12 < 25 < 50)
            panel = panel.sort_values(["family", "sampler"], ascending=[False, True],
                                      key=lambda column: column.map(natural_key) if column.name == "sampler"
                                      else column).reset_index(drop=True)
            best = headline[(headline["model"] == model) & (headline["metric"] == metric)].iloc[0]
            colors = sampler_colors(list(panel["sampler"]))
            for x, entry in panel.iterrows():
                chosen = entry["sampler"] in (best["ead_best"], best["fixed_best"])
                ax.errorbar(x, entry["diff"], yerr=[[entry["diff"] - entry["diff_ci_low"]],
                                                    [entry["diff_ci_high"] - entry["diff"]]],
                            fmt="*" if chosen else "o", ms=10 if chosen else 5, color=colors[entry["sampler"]],
                            capsize=2, lw=1.2)
            ax.axhline(0.0, color="0.4", lw=0.8, ls="--")
            ax.set_xticks(range(len(panel)), panel["sampler"], rotation=45, ha="right", fontsize=7)
            ax.set_title(f"{model}: {best['ead_best']} - {best['fixed_best']} = {best['effect']:+.3f} "
                         f"[{best['ci_low']:+.3f}, {best['ci_high']:+.3f}] ({best['verdict']})", fontsize=7)
            if column == 0:
                ax.set_ylabel(f"{metric_label(metric)} $-$ {panel['baseline'].iloc[0]}\n(paired, 95% CI)", fontsize=8)
    fig.suptitle(f"Inference only (no RL): each sampler minus {rows['baseline'].iloc[0]} on the {report} split; "
                 f"stars: the best EAD and best fixed sampler by {headline['select_metric'].iloc[0]} on the "
                 f"{headline['select_split'].iloc[0]} split (titles: their paired difference on {report})",
                 y=1.02, fontsize=9)
    fig.tight_layout()
    return fig


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", required=True, help="the sampler table (ead.analyses.inference_only)")
    parser.add_argument("--headline", required=True, help="the headline table (ead.analyses.inference_only)")
    parser.add_argument("--png", required=True)
    parser.add_argument("--pdf", required=True)
    args = parser.parse_args(argv)
    log = figure_logger(plot)
    fig = plot(INFERENCE_ONLY.read(args.table), INFERENCE_ONLY_HEADLINE.read(args.headline))
    save_figure(fig, args.png, args.pdf)
    log.info("wrote %s and %s", args.png, args.pdf)


if __name__ == "__main__":
    main()
