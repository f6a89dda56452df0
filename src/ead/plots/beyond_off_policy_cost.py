"""Beyond the paper: the off-policy cost of every schedule during RL (experiment `beyond`), from the training curves.

What the paper's Appendix B bounds, measured per sampler and step on the rollouts the trainer used: the mean
token log-ratio log pi_train - log pi_behaviour (0 for an on-policy sampler: a fixed tau trained on logits / tau),
the mean and the largest TIS weight, the fraction of tokens whose weight was truncated at the cap, verl's effective
sample size of the truncated weights (``rollout_is_eff_sample_size``, a share of the batch's tokens), and per rollout
group the effective sample size of the untruncated sequence weights pi_train / pi_behaviour as a share of n (mean over
groups; the premise probe's ``sequence_ess_fraction``, during training), and the fraction of sequences whose weight
exp(sum of token log-ratios) exceeds the cap (the revised paper's "fewer than 1% of sequences"). A sampler without
TIS logs its weights against rl.tis_cap all the same (it does not use them).

Run:
    python -m ead.plots.rl_figure --figure beyond_off_policy_cost --eval-curves results/rl/eval_curves.csv \
        --train-curves results/rl/train_curves.csv --paired-curves results/rl/paired_curves.csv \
        --experiment '<rl.experiments.beyond as JSON>' --k 16 \
        --png figures/beyond_off_policy_cost.png --pdf figures/beyond_off_policy_cost.pdf
"""

import matplotlib.pyplot as plt
import pandas as pd

from ead.plots.rl_curves import ci_wording, draw_curves, select
from ead.plots.style import apply_style

PANELS = {"behaviour_target_log_ratio": "mean token log-ratio (train - behaviour)",
          "tis_weight_mean": "mean TIS weight", "tis_weight_max": "largest TIS weight",
          "tis_capped_fraction": "fraction of tokens truncated",
          "tis_ess_fraction": "ESS of truncated token weights / tokens",
          "sequence_ess_fraction": "ESS of sequence weights / n, per group",
          "tis_capped_sequence_fraction": "fraction of sequences over the cap"}
COLUMNS = 3


def plot(eval_curves, train_curves, experiment, k):
    apply_style()
    rows = -(-len(PANELS) // COLUMNS)
    fig, axes = plt.subplots(rows, COLUMNS, figsize=(3.6 * COLUMNS, 3.0 * rows), squeeze=False)
    axes = axes.ravel()
    drawn = [select(train_curves, experiment, metric) for metric in PANELS]
    for ax, rows, label in zip(axes, drawn, PANELS.values()):
        draw_curves(ax, rows, experiment["samplers"])
        ax.set(xlabel="RL step", ylabel=label)
    for ax in axes[len(PANELS):]:  # the last row's unused places
        fig.delaxes(ax)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 1.08), ncol=min(len(labels), 5), fontsize=8)
    fig.suptitle(f"Off-policy cost of each schedule during RL ({ci_wording(pd.concat(drawn))})", y=1.14, fontsize=10)
    fig.tight_layout()
    return fig
