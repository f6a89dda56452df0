"""Schedule shapes side by side (the authors' revised shape ablation: negexp, linear, two_stage, mean_matched): the
temperature each shape gives by response position at the tabulated RL steps, and each shape's paired effect on
Pass@1 and Pass@16 against tau 1.0 over training.

Top row: tau by position, one panel per step (``results/rl/schedule_shapes.csv``, ``ead.analyses.sampler_schedules``).
Bottom row: per metric, each shape's cell minus the baseline cell, paired by seed and problem with the claims' 95% CI
(``results/rl/paired_curves.csv``, ``ead.rl.paired``). Reads those two tables only; the shapes are the cells that
configs/ablations/beyond_the_paper.yaml runs (key ``schedule_shapes``).

Run:
    python -m ead.plots.schedule_shapes --schedules results/rl/schedule_shapes.csv \
        --paired-curves results/rl/paired_curves.csv --spec '<schedule_shapes as JSON>' \
        --png figures/schedule_shapes.png --pdf figures/schedule_shapes.pdf
"""

from __future__ import annotations

import argparse
import itertools
import json

import matplotlib.pyplot as plt
import seaborn as sns

from ead.plots.rl_curves import draw_paired, metric_label, sampler_label, select_paired
from ead.plots.style import apply_style, figure_logger, save_figure
from ead.tables import PAIRED_CURVES, SAMPLER_SCHEDULES


def plot(schedules, paired, spec: dict):
    apply_style()
    samplers, steps, metrics = spec["samplers"], spec["steps"], spec["metrics"]
    # Shapes are alternatives, not a temperature order: one qualitative palette plus a line style each, so lines that
    # coincide (they do at RL step 0 of the paired panels) stay apart.
    colors = dict(zip(samplers, sns.color_palette("tab10", n_colors=len(samplers))))
    linestyles = dict(zip(samplers, itertools.cycle(["-", "--", "-.", ":"])))
    columns = max(len(steps), len(metrics))
    fig, axes = plt.subplots(2, columns, figsize=(4.0 * columns, 5.8), squeeze=False)
    for column, step in enumerate(steps):
        ax = axes[0][column]
        for sampler in samplers:
            line = schedules[(schedules["sampler"] == sampler) & (schedules["step"] == step)].sort_values("position")
            if line.empty:
                raise ValueError(f"no temperatures of sampler {sampler!r} at step {step} in the schedules table")
            ax.plot(line["position"], line["tau"], lw=1.6, color=colors[sampler], ls=linestyles[sampler],
                    label=sampler_label(sampler))
        ax.axhline(1.0, color="0.6", lw=0.8)  # thin grey: the line styles belong to the shapes
        ax.set_title(f"RL step {step}", fontsize=9)
        ax.set_xlabel("response position t (tokens)")
        ax.set_ylabel(r"$\tau_t$" if column == 0 else "")
    cells = {"policies": [spec["policy"]], "algorithms": [spec["algorithm"]], "n": [spec["n"]], "samplers": samplers}
    for column, metric in enumerate(metrics):
        ax = axes[1][column]
        draw_paired(ax, select_paired(paired, cells, metric, spec["baseline"]), samplers, colors, linestyles)
        ax.set_xlabel("RL step")
        ax.set_ylabel(f"{metric_label(metric)} $-$ {sampler_label(spec['baseline'])}\n(paired, 95% CI)")
    for row, used in ((0, len(steps)), (1, len(metrics))):
        for ax in axes[row][used:]:
            ax.axis("off")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 1.0), ncol=min(len(labels), 4), fontsize=8)
    fig.suptitle(f"Schedule shapes: temperature by position (top) and paired effect against "
                 f"{sampler_label(spec['baseline'])} during RL (bottom; {spec['policy']}, {spec['algorithm']}, "
                 f"n = {spec['n']})", y=1.07, fontsize=10)
    fig.tight_layout()
    return fig


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schedules", required=True,
                        help="tau by sampler, step, position (ead.analyses.sampler_schedules)")
    parser.add_argument("--paired-curves", required=True, help="paired differences (ead.rl.paired)")
    parser.add_argument("--spec", required=True, help="the config's schedule_shapes block (JSON)")
    parser.add_argument("--png", required=True)
    parser.add_argument("--pdf", required=True)
    args = parser.parse_args(argv)
    log = figure_logger(plot)
    fig = plot(SAMPLER_SCHEDULES.read(args.schedules), PAIRED_CURVES.read(args.paired_curves), json.loads(args.spec))
    save_figure(fig, args.png, args.pdf)
    log.info("wrote %s and %s", args.png, args.pdf)


if __name__ == "__main__":
    main()
