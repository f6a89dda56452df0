"""Paper Figure 9: inference-time scaling, Maj@N vs N for EAD and fixed-temperature sampling (95% CI bands).

Reads the tables written by `ead.analyses.majority_scaling` (one per model, one panel each).

Run:
    python -m ead.plots.fig09_majority_scaling --tables results/analyses/majority_scaling/*.csv \
        --png figures/fig09_majority_scaling.png --pdf figures/fig09_majority_scaling.pdf
"""

from __future__ import annotations

import seaborn as sns

from ead.plots.style import (
    apply_style,
    integer_ticks,
    panel_per_model,
    run_table_figure,
    series_styles,
    set_percent_ylim,
)
from ead.tables import MAJORITY_SCALING


def draw_panel(ax, table, palette):
    """One line per sampler, each its own line style and marker (an EAD line equal to a fixed-tau one stays visible);
    whole-number N ticks."""
    styles = series_styles(palette)
    for sampler, color in palette.items():
        rows = table[table["sampler"] == sampler].sort_values("n")
        if rows.empty:
            continue
        ax.fill_between(rows["n"], 100 * rows["ci_low"], 100 * rows["ci_high"], color=color, alpha=0.15, lw=0)
        label = f"{sampler} (no answer: {100 * rows['no_answer_rate'].iloc[0]:.0f}%)"
        ax.plot(rows["n"], 100 * rows["maj_at_n"], color=color, lw=1.8, ms=4, mfc="none", label=label,
                **styles[sampler])
    first = table.iloc[0]
    ax.set(xlabel="N (samples voted)", ylabel="Maj@N (%)",
           title=f"{first['model_name']} on {first['task']}: {int(first['num_questions'])} questions, "
                 f"M = {int(first['samples_per_question'])}")
    set_percent_ylim(ax, table["ci_high"])
    integer_ticks(ax.xaxis)
    ax.legend(fontsize=8, loc="best")


def plot(table):
    apply_style()
    samplers = sorted(table["sampler"].unique(), key=lambda s: (not s.startswith("EAD"), s))
    palette = dict(zip(samplers, sns.color_palette("deep", n_colors=len(samplers))))  # same colour in every panel
    return panel_per_model(table, draw_panel, palette=palette)


def main(argv=None):
    run_table_figure(plot, __doc__.splitlines()[0], argv, table=MAJORITY_SCALING)


if __name__ == "__main__":
    main()
