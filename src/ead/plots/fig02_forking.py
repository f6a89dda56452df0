"""Paper Figure 2: Maj@K of continuations forked from a reference response after p tokens (p = 0: normal sampling).

Reads the tables written by `ead.analyses.forking` (one per model, one panel each); one line per fork point p over
K, with 95% bootstrap CIs over the forked references.

Run:
    python -m ead.plots.fig02_forking --tables results/analyses/forking/*.csv \
        --png figures/fig02_forking.png --pdf figures/fig02_forking.pdf
"""

from __future__ import annotations

import seaborn as sns

from ead.plots.style import apply_style, panel_per_model, run_table_figure, set_percent_ylim
from ead.tables import FORKING


def draw_panel(ax, table):
    points = sorted(table["fork_point"].unique())
    palette = sns.color_palette("mako_r", n_colors=len(points) + 1)[1:]
    for offset, (color, p) in enumerate(zip(palette, points)):
        rows = table[table["fork_point"] == p].sort_values("k")
        label = "normal sampling (p = 0)" if p == 0 else f"fork after {p} tokens"
        x = rows["k"] * (1 + 0.03 * (offset - (len(points) - 1) / 2))  # dodge so the CI bars do not overlap
        ax.errorbar(x, 100 * rows["maj_at_k"], yerr=[100 * (rows["maj_at_k"] - rows["ci_low"]),
                                                      100 * (rows["ci_high"] - rows["maj_at_k"])],
                    color=color, marker="o", ms=4, lw=1.6, capsize=2.5, label=label)
    first = table.iloc[0]
    ax.set_xscale("log", base=2)
    ks = sorted(table["k"].unique())
    ax.set_xticks(ks, [str(k) for k in ks])
    ax.set(xlabel="K (continuations voted)", ylabel="Maj@K (%), 95% CI over references",
           title=f"{first['model_name']} on {first['task']}: {int(first['num_questions_used'])} questions, "
                 f"{first['prefix_selection']} prefix")
    set_percent_ylim(ax, table["ci_high"])
    ax.legend(fontsize=8, loc="best")


def plot(table):
    apply_style()
    return panel_per_model(table, draw_panel)


def main(argv=None):
    run_table_figure(plot, __doc__.splitlines()[0], argv, table=FORKING)


if __name__ == "__main__":
    main()
