"""Paper Figure 9: inference-time scaling, Maj@N vs N for EAD and fixed-temperature sampling (95% CI bands).

Reads the tables written by `ead.analyses.majority_scaling` (one per model, one panel each).

Run:
    python -m ead.plots.fig09_majority_scaling --tables results/analyses/majority_scaling/*.csv \
        --png figures/fig09_majority_scaling.png --pdf figures/fig09_majority_scaling.pdf
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import seaborn as sns

from ead.plots.style import apply_style, run_table_figure


def draw_panel(ax, table, palette):
    for sampler, color in palette.items():
        rows = table[table["sampler"] == sampler].sort_values("n")
        if rows.empty:
            continue
        ax.fill_between(rows["n"], 100 * rows["ci_low"], 100 * rows["ci_high"], color=color, alpha=0.15, lw=0)
        label = f"{sampler} (no answer: {100 * rows['no_answer_rate'].iloc[0]:.0f}%)"
        ax.plot(rows["n"], 100 * rows["maj_at_n"], color=color, lw=1.8, marker="o", ms=3, label=label)
    first = table.iloc[0]
    ax.set(xlabel="N (samples voted)", ylabel="Maj@N (%)",
           title=f"{first['model_name']} on {first['task']}: {int(first['num_questions'])} questions, "
                 f"M = {int(first['samples_per_question'])}")
    top = max(5.0, 110 * table["ci_high"].max())
    ax.set_ylim(-0.02 * top, top)  # a line at 0 stays visible
    ax.legend(fontsize=8, loc="best")


def plot(table):
    apply_style()
    samplers = sorted(table["sampler"].unique(), key=lambda s: (not s.startswith("EAD"), s))
    palette = dict(zip(samplers, sns.color_palette("deep", n_colors=len(samplers))))  # same colour in every panel
    models = list(dict.fromkeys(table["model_name"]))
    fig, axes = plt.subplots(1, len(models), figsize=(5.5 * len(models), 3.6), squeeze=False)
    for ax, model in zip(axes[0], models):
        draw_panel(ax, table[table["model_name"] == model], palette)
    return fig


def main(argv=None):
    run_table_figure(plot, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    main()
