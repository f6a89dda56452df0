"""Paper Figure 9: inference-time scaling, Maj@N vs N for EAD and fixed-temperature sampling (95% CI bands).

Reads the table written by `ead.analyses.majority_scaling`.

Run:
    python -m ead.plots.fig09_majority_scaling --table results/analyses/majority_scaling.csv \
        --png figures/fig09_majority_scaling.png --pdf figures/fig09_majority_scaling.pdf
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import seaborn as sns

from ead.plots.style import apply_style, run_table_figure


def plot(table):
    apply_style()
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    samplers = sorted(table["sampler"].unique(), key=lambda s: (not s.startswith("EAD"), s))
    palette = sns.color_palette("deep", n_colors=len(samplers))
    for color, sampler in zip(palette, samplers):
        rows = table[table["sampler"] == sampler].sort_values("n")
        ax.fill_between(rows["n"], 100 * rows["ci_low"], 100 * rows["ci_high"], color=color, alpha=0.15, lw=0)
        label = f"{sampler} (no answer: {100 * rows['no_answer_rate'].iloc[0]:.0f}%)"
        ax.plot(rows["n"], 100 * rows["maj_at_n"], color=color, lw=1.8, marker="o", ms=3, label=label)
    first = table.iloc[0]
    model = str(first["model"]).rstrip("/").split("/")[-1]
    ax.set(xlabel="N (samples voted)", ylabel="Maj@N (%)",
           title=f"{model} on {first['task']}: {int(first['num_questions'])} questions, "
                 f"M = {int(first['samples_per_question'])}")
    top = max(5.0, 110 * table["ci_high"].max())
    ax.set_ylim(-0.02 * top, top)  # a line at 0 stays visible
    ax.legend(fontsize=8, loc="best")
    return fig


def main(argv=None):
    run_table_figure(plot, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    main()
