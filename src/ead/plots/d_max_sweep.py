"""The d_max sweep (configs/ablations/d_max_sweep.yaml): Pass@16 and Pass@1 during RL per cap of EAD's decay rate, and
each cap's paired difference to the uncapped cell.

Left: d_s = min(d0 + step_factor * s, d_max) of each EAD cell over the training steps, read from the schedule the
cells recorded (``schedule_params``), so the reader sees which caps clamp and from which step. Then one column per
metric: the curves (mean of seeds, 95% CI) and below them each capped cell minus the uncapped one (the
experiment's EAD cell whose d_max never clamps), paired by seed and problem with the claims' CI
(``results/rl/paired_curves.csv``, ``ead.rl.paired``). Reads the aggregated tables only.

Run:
    python -m ead.plots.rl_figure --figure d_max_sweep --eval-curves results/rl/eval_curves.csv \
        --train-curves results/rl/train_curves.csv --paired-curves results/rl/paired_curves.csv \
        --experiment '<rl.experiments.d_max_sweep as JSON>' --k 16 --png figures/d_max_sweep.png \
        --pdf figures/d_max_sweep.pdf
"""

from __future__ import annotations

import json

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ead.plots.rl_curves import (
    draw_curves,
    draw_paired,
    metric_label,
    sampler_colors,
    sampler_label,
    select,
    select_paired,
)
from ead.plots.style import apply_style


def cell_schedules(curves: pd.DataFrame, experiment: dict) -> dict[str, dict]:
    """sampler -> the EAD schedule its cells recorded (fixed-temperature cells left out)."""
    rows = curves[curves["sampler"].isin(experiment["samplers"]) & curves["policy"].isin(experiment["policies"])]
    schedules = {}
    for sampler, group in rows.groupby("sampler", sort=False):
        documents = {json.loads(text)["name"]: json.loads(text) for text in group["schedule_params"].unique()}
        if "ead" in documents:
            schedules[sampler] = documents["ead"]
    return schedules


def uncapped_sampler(schedules: dict[str, dict]) -> str:
    """The EAD cell with the largest d_max: the sweep's uncapped reference (a cap that does not clamp within the run
    behaves identically to it; the left panel shows which do)."""
    if not schedules:
        raise ValueError("the d_max sweep's experiment has no EAD cell")
    return max(schedules, key=lambda name: schedules[name]["d_max"])


def d_max_label(name: str, schedule: dict, reference: str) -> str:
    if name == reference:
        return f"uncapped ($d_{{max}}$ = {schedule['d_max']:g})"
    return f"$d_{{max}}$ = {schedule['d_max']:g}"


def plot(eval_curves, train_curves, experiment, k, paired_curves):
    apply_style()
    last_step = int(train_curves["step"].max())
    schedules = cell_schedules(eval_curves, experiment)
    reference = uncapped_sampler(schedules)
    labels = {name: d_max_label(name, schedule, reference) for name, schedule in schedules.items()}
    samplers = experiment["samplers"]
    colors = sampler_colors(samplers)
    metrics = [f"pass@{k}", "pass@1"]
    fig, axes = plt.subplots(2, 1 + len(metrics), figsize=(3.8 * (1 + len(metrics)), 5.6), squeeze=False)
    steps = np.arange(0, last_step + 1)
    ax = axes[0][0]
    for name, schedule in schedules.items():
        decay = np.minimum(schedule["d0"] + schedule["step_factor"] * steps, schedule["d_max"])
        ax.plot(steps, decay, lw=1.6, color=colors[name], label=labels[name])
    ax.set_xlabel("RL step")
    ax.set_ylabel("$d_s$ (decay rate)")
    ax.set_title(r"$d_s = \min(d_0 + %g\,s,\ d_{max})$" % next(iter(schedules.values()))["step_factor"], fontsize=9)
    ax.legend(fontsize=7)
    axes[1][0].axis("off")
    for column, metric in enumerate(metrics, start=1):
        top, bottom = axes[0][column], axes[1][column]
        draw_curves(top, select(eval_curves, experiment, metric), samplers)
        top.set_ylabel(metric_label(metric))
        capped = {**experiment, "samplers": [s for s in samplers if s in schedules and s != reference]}
        # the whole sampler list, so each cap keeps the colour it has in the panels above (the rows hold caps only)
        draw_paired(bottom, select_paired(paired_curves, capped, metric, reference), samplers)
        bottom.set_ylabel(f"{metric_label(metric)} $-$ uncapped\n(paired, 95% CI)")
        bottom.set_xlabel("RL step")
        for line in [*top.get_lines(), *bottom.get_lines()]:  # name the EAD cells by their cap
            sampler = next((s for s in samplers if line.get_label() == sampler_label(s)), None)
            if sampler in labels:
                line.set_label(labels[sampler])
    handles, names = axes[0][1].get_legend_handles_labels()
    fig.legend(handles, names, loc="upper center", bbox_to_anchor=(0.6, 1.0), ncol=min(len(names), 5), fontsize=8)
    fig.suptitle(f"d_max sweep: Pass@{k} and Pass@1 during RL per cap of $d_s$ (mean of seeds, 95% CI); bottom: "
                 f"paired difference to the uncapped cell", y=1.07, fontsize=10)
    fig.tight_layout()
    return fig
