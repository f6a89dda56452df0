"""Paper Figure 8: how EAD's advantage changes with the rollout number: final Pass@16 / Worst@k per n and sampler.

Bars are the last evaluated step of each (n, sampler) of `rollout_scaling` (mean of seeds, 95% CI), so the n = 16
comparison of the paper sits next to n = 4 and 8.

Run:
    python -m ead.plots.rl_figure --figure fig08_rollout_n_comparison --eval-curves results/rl/eval_curves.csv \
        --train-curves results/rl/train_curves.csv --paired-curves results/rl/paired_curves.csv \
        --experiment '<rl.experiments.rollout_scaling as JSON>' --k 16 \
        --png figures/fig08_rollout_n_comparison.png --pdf figures/fig08_rollout_n_comparison.pdf
"""

import matplotlib.pyplot as plt
import numpy as np

from ead.plots.rl_curves import bound_metric_axis, metric_label, sampler_colors, sampler_label, select
from ead.plots.style import apply_style


def plot(eval_curves, train_curves, experiment, k):
    apply_style()
    metrics = [f"pass@{k}", "pass@1"]
    ns, samplers = sorted(experiment["n"]), experiment["samplers"]
    colors = sampler_colors(samplers)
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.2 * len(metrics), 3.0))
    width = 0.8 / len(samplers)
    for ax, metric in zip(axes, metrics):
        rows = select(eval_curves, experiment, metric)
        final = rows[rows["step"] == rows["step"].max()]
        for i, sampler in enumerate(samplers):
            bars = final[final["sampler"] == sampler].set_index("n").reindex(ns)
            x = np.arange(len(ns)) + (i - (len(samplers) - 1) / 2) * width
            errors = np.vstack([bars["value"] - bars["ci_low"], bars["ci_high"] - bars["value"]])
            ax.bar(x, bars["value"], width, yerr=errors, capsize=3, color=colors[sampler],
                   label=sampler_label(sampler))
        ax.set_xticks(np.arange(len(ns)), [f"n = {n}" for n in ns])
        ax.set(ylabel=f"{metric_label(metric)} at step {int(final['step'].max())}")
        bound_metric_axis(ax, metric)  # a rate: all-zero bars sit on 0, not mid-panel on an axis below it
    axes[0].legend(fontsize=8)
    fig.suptitle("Final held-out accuracy by rollout number (mean of seeds, 95% CI)", fontsize=10)
    fig.tight_layout()
    return fig
