"""Paper Figure 11: off-policy instability of an aggressive EAD schedule, without vs with TIS (`off_policy`).

Three panels as in the paper's appendix: clip fraction and gradient norm per training step, and Pass@16.

Run:
    python -m ead.plots.rl_figure --figure fig11_off_policy --eval-curves results/rl/eval_curves.csv \
        --train-curves results/rl/train_curves.csv --paired-curves results/rl/paired_curves.csv \
        --experiment '<rl.experiments.off_policy as JSON>' --k 16 \
        --png figures/fig11_off_policy.png --pdf figures/fig11_off_policy.pdf
"""

import matplotlib.pyplot as plt
import pandas as pd

from ead.plots.rl_curves import ci_wording, draw_curves, metric_label, select
from ead.plots.style import apply_style


def plot(eval_curves, train_curves, experiment, k):
    apply_style()
    panels = [(train_curves, "pg_clipfrac"), (train_curves, "grad_norm"), (eval_curves, f"pass@{k}")]
    fig, axes = plt.subplots(1, len(panels), figsize=(3.6 * len(panels), 2.9))
    drawn = [select(curves, experiment, metric) for curves, metric in panels]
    for ax, rows, (_, metric) in zip(axes, drawn, panels):
        draw_curves(ax, rows, experiment["samplers"])
        ax.set(xlabel="RL step", ylabel=metric_label(metric))
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 1.08), ncol=len(labels), fontsize=8)
    fig.suptitle(f"Off-policy samples without / with truncated importance sampling ({ci_wording(pd.concat(drawn))})",
                 y=1.15, fontsize=10)
    fig.tight_layout()
    return fig
