"""Paper Figure 1: mean full-vocabulary entropy (tau = 1) by response position, with a 95% bootstrap CI band.

Reads the tables written by `ead.analyses.entropy_by_position` (one per model; one curve per model). The lower panel
shows the fraction of responses still generating at each position (later positions average over fewer, longer
responses). With ``--role-tables`` (the tiny policies' responses, `ead.analyses.entropy_by_position.
entropy_by_role`), a right panel shows the mean entropy of each token role of their task (on the equation chains:
operand, operator, result, answer, ...) with its 95% CI: where in a response the entropy sits.

Run:
    python -m ead.plots.fig01_entropy_by_position --tables results/analyses/entropy_by_position/*.csv \
        --role-tables results/analyses/entropy_by_role/*.csv \
        --png figures/fig01_entropy_by_position.png --pdf figures/fig01_entropy_by_position.pdf
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
from matplotlib.ticker import MaxNLocator, ScalarFormatter

from ead.plots.style import ENTROPY_MIN_SPAN, apply_style, bound_axis, run_table_figure
from ead.tables import ENTROPY_BY_POSITION, ENTROPY_BY_ROLE

FEW_ALIVE = 0.1  # below this fraction of responses still generating, a curve is drawn faint


def draw_roles(ax, roles, colors) -> None:
    """Mean entropy per token role, one dodged point with its 95% CI per model (colors: model -> color)."""
    order = list(dict.fromkeys(roles["role"]))
    models = list(dict.fromkeys(roles["model_name"]))
    for offset, model in enumerate(models):
        rows = roles[roles["model_name"] == model].set_index("role").reindex(order)
        y = np.arange(len(order)) + 0.25 * (offset - (len(models) - 1) / 2)
        ax.errorbar(rows["mean_entropy"], y, xerr=[rows["mean_entropy"] - rows["ci_low"],
                                                   rows["ci_high"] - rows["mean_entropy"]],
                    color=colors[model], marker="o", ms=4, lw=0, elinewidth=1.4, capsize=2.5, label=model)
    ax.set_yticks(np.arange(len(order)), order)
    ax.invert_yaxis()
    ax.set(xlabel="entropy at tau = 1 (nats)", title=f"By token role ({', '.join(dict.fromkeys(roles['task']))})")
    # roles of nearly equal entropy span a few thousandths of a nat: the axis spans at least ENTROPY_MIN_SPAN (such
    # differences are not stretched over the panel), at most 4 ticks, written in full (no offset), so the labels never
    # run together ("3.58753.5900...")
    bound_axis(ax, "x", floor=0.0, min_span=ENTROPY_MIN_SPAN)
    ax.xaxis.set_major_locator(MaxNLocator(nbins=4))
    formatter = ScalarFormatter(useOffset=False)
    formatter.set_scientific(False)
    ax.xaxis.set_major_formatter(formatter)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # outside the points, never over them


def plot(table, role_tables=None):
    """One column per task (its models' curves: entropy over their CI band, and the fraction still generating), and
    the token-role panel on the right when ``role_tables`` are given. Tasks get their own axes: a countdown chain's
    entropy (below 1 nat) would be flattened next to a chain-of-thought model's."""
    apply_style()
    models = list(dict.fromkeys(table["model_name"]))
    palette = sns.color_palette("rocket", len(models) + 2)[1:]
    colors = dict(zip(models, palette))
    tasks = list(dict.fromkeys(table["task"]))
    columns = len(tasks) + (role_tables is not None)
    fig = plt.figure(figsize=(5.2 * columns, 4.2))
    grid = fig.add_gridspec(2, columns, height_ratios=[3, 1])
    for column, task in enumerate(tasks):
        ax = fig.add_subplot(grid[0, column])
        alive = fig.add_subplot(grid[1, column], sharex=ax)
        top = 0.0
        for model in dict.fromkeys(table.loc[table["task"] == task, "model_name"]):
            rows = table[table["model_name"] == model].sort_values("position")
            first = rows.iloc[0]
            label = f"{model} ({int(first['num_questions_requested'])} q x {int(first['samples_per_question'])})"
            # where few responses are left the mean is a handful of (often rambling) survivors: drawn faint, without
            # its CI band, and the y axis fits the well-populated positions (a faint spike may leave the frame)
            few = rows["fraction_alive"] < FEW_ALIVE
            ax.fill_between(rows["position"], rows["ci_low"].where(~few), rows["ci_high"].where(~few),
                            color=colors[model], alpha=0.25, lw=0)
            top = max(top, rows.loc[~few, "ci_high"].max())
            ax.plot(rows["position"], rows["mean_entropy"].where(~few), color=colors[model], lw=1.4, label=label)
            ax.plot(rows["position"], rows["mean_entropy"].where(few | few.shift(-1, fill_value=False)),
                    color=colors[model], lw=0.8, alpha=0.4)
            alive.plot(rows["position"], rows["fraction_alive"], color=colors[model], lw=1.2)
        ax.set(ylabel="entropy at tau = 1 (nats)", title=f"{task}: by position", ylim=(0.0, 1.1 * top))
        bound_axis(ax, "y", floor=0.0, min_span=ENTROPY_MIN_SPAN)
        ax.tick_params(labelbottom=False)
        ax.legend(loc="upper right", fontsize=8)
        alive.set(xlabel="response token position t", ylabel="still\ngenerating", ylim=(0, 1.05))
    if role_tables is not None:
        draw_roles(fig.add_subplot(grid[:, -1]), role_tables, colors)
    fig.suptitle(f"Entropy of the policy at tau = 1; bands and bars: 95% CI over questions; faint (no band, may leave "
                 f"the frame): fewer than {FEW_ALIVE:.0%} of responses still generating", fontsize=10)
    return fig


def main(argv=None):
    run_table_figure(plot, __doc__.splitlines()[0], argv, table=ENTROPY_BY_POSITION,
                     extra={"role_tables": ENTROPY_BY_ROLE})


if __name__ == "__main__":
    main()
