"""Paper Figure 2: Pass@K and Maj@K of continuations forked from a reference response after p tokens (p = 0: normal
sampling).

Reads the tables written by `ead.analyses.forking` (one per model, one panel each); one line per (metric, fork point)
over K, with 95% bootstrap CIs over the forked references: Pass@K solid, Maj@K dashed (only where the task's answers
are unique: not on countdown, whose valid chains all box the target). The paired difference between the first and
the last fork point, with its CI, is a claim of results/claims.csv.

Run:
    python -m ead.plots.fig02_forking --tables results/analyses/forking/*.csv \
        --png figures/fig02_forking.png --pdf figures/fig02_forking.pdf
"""

from __future__ import annotations

import seaborn as sns

from ead.plots.style import apply_style, panel_per_model, run_table_figure, set_percent_ylim
from ead.tables import FORKING

LINESTYLES = {"pass@k": "-", "maj@k": "--"}
LABELS = {"pass@k": "Pass@K", "maj@k": "Maj@K"}


def draw_panel(ax, table):
    points = sorted(table["fork_point"].unique())
    palette = sns.color_palette("mako_r", n_colors=len(points) + 1)[1:]
    metrics = [m for m in LINESTYLES if m in set(table["metric"])]
    for offset, (color, p) in enumerate(zip(palette, points)):
        for metric in metrics:
            rows = table[(table["fork_point"] == p) & (table["metric"] == metric)].sort_values("k")
            where = "normal sampling (p = 0)" if p == 0 else f"fork after {p} tokens"
            x = rows["k"] * (1 + 0.03 * (offset - (len(points) - 1) / 2))  # dodge so the CI bars do not overlap
            ax.errorbar(x, 100 * rows["value"], yerr=[100 * (rows["value"] - rows["ci_low"]),
                                                      100 * (rows["ci_high"] - rows["value"])],
                        color=color, ls=LINESTYLES[metric], marker="o", ms=4, lw=1.6, capsize=2.5,
                        label=f"{LABELS[metric]}, {where}")
    first = table.iloc[0]
    ax.set_xscale("log", base=2)
    ks = sorted(table["k"].unique())
    ax.set_xticks(ks, [str(k) for k in ks])
    unique = "" if "maj@k" in metrics else "\nPass@K only: the task's answers are not unique"
    ax.set(xlabel="K (continuations)", ylabel="% (95% CI over references)",
           title=f"{first['model_name']} on {first['task']}\n{int(first['num_questions_used'])} references, "
                 f"{first['prefix_selection']} prefix{unique}")
    set_percent_ylim(ax, table["ci_high"])
    ax.legend(fontsize=7, loc="best")


def plot(table):
    apply_style()
    return panel_per_model(table, draw_panel)


def main(argv=None):
    run_table_figure(plot, __doc__.splitlines()[0], argv, table=FORKING)


if __name__ == "__main__":
    main()
