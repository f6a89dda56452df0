"""Paper Figure 1: mean full-vocabulary entropy (tau = 1) by response position, with a 95% bootstrap CI band.

Reads the table written by `ead.analyses.entropy_by_position`. The lower panel shows the fraction of responses
still generating at each position (later positions average over fewer, longer responses).

Run:
    python -m ead.plots.fig01_entropy_by_position --table results/analyses/entropy_by_position.csv \
        --png figures/fig01_entropy_by_position.png --pdf figures/fig01_entropy_by_position.pdf
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import seaborn as sns

from ead.plots.style import apply_style, run_table_figure


def plot(table):
    apply_style()
    fig, (ax, alive) = plt.subplots(2, 1, figsize=(5.5, 4.2), sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    color = sns.color_palette("rocket", 3)[1]
    ax.fill_between(table["position"], table["ci_low"], table["ci_high"], color=color, alpha=0.25, lw=0,
                    label="95% bootstrap CI (questions)")
    ax.plot(table["position"], table["mean_entropy"], color=color, lw=1.4, label="mean entropy")
    first = table.iloc[0]
    model = str(first["model"]).rstrip("/").split("/")[-1]
    ax.set(ylabel="entropy at tau = 1 (nats)",
           title=f"{model} on {first['task']} (CoT): {int(first['num_questions_requested'])} questions "
                 f"x {int(first['samples_per_question'])} responses")
    ax.legend(loc="upper right", fontsize=8)
    alive.plot(table["position"], table["fraction_alive"], color="0.4", lw=1.2)
    alive.set(xlabel="response token position t", ylabel="still\ngenerating", ylim=(0, 1.05))
    return fig


def main(argv=None):
    run_table_figure(plot, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    main()
