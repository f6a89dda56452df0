"""Paper Figure 1: mean full-vocabulary entropy (tau = 1) by response position, with a 95% bootstrap CI band.

Reads the tables written by `ead.analyses.entropy_by_position` (one per model; one curve per model). The lower panel
shows the fraction of responses still generating at each position (later positions average over fewer, longer
responses).

Run:
    python -m ead.plots.fig01_entropy_by_position --tables results/analyses/entropy_by_position/*.csv \
        --png figures/fig01_entropy_by_position.png --pdf figures/fig01_entropy_by_position.pdf
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import seaborn as sns

from ead.plots.style import apply_style, run_table_figure
from ead.tables import ENTROPY_BY_POSITION


def plot(table):
    apply_style()
    fig, (ax, alive) = plt.subplots(2, 1, figsize=(5.5, 4.2), sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    models = list(dict.fromkeys(table["model_name"]))
    palette = sns.color_palette("rocket", len(models) + 2)[1:]
    for color, model in zip(palette, models):
        rows = table[table["model_name"] == model].sort_values("position")
        first = rows.iloc[0]
        label = f"{model} ({int(first['num_questions_requested'])} q x {int(first['samples_per_question'])})"
        ax.fill_between(rows["position"], rows["ci_low"], rows["ci_high"], color=color, alpha=0.25, lw=0)
        ax.plot(rows["position"], rows["mean_entropy"], color=color, lw=1.4, label=label)
        alive.plot(rows["position"], rows["fraction_alive"], color=color, lw=1.2)
    tasks = ", ".join(dict.fromkeys(table["task"]))
    ax.set(ylabel="entropy at tau = 1 (nats)", title=f"Entropy by position on {tasks} (CoT); bands: 95% CI over questions")
    ax.legend(loc="upper right", fontsize=8)
    alive.set(xlabel="response token position t", ylabel="still\ngenerating", ylim=(0, 1.05))
    return fig


def main(argv=None):
    run_table_figure(plot, __doc__.splitlines()[0], argv, table=ENTROPY_BY_POSITION)


if __name__ == "__main__":
    main()
