"""Beyond the paper: the chain behind each RL cell, from the fork to the answer, per policy and sampler over training.

Reads the breakdown's two tables only (``ead.rl.breakdown``, config ``rl.breakdown``):
``results/rl/signal_by_phase.csv`` (:data:`ead.tables.SIGNAL_BY_PHASE`) and ``results/rl/eval_by_group.csv``
(:data:`ead.tables.EVAL_BY_GROUP`). One column per policy; rows, top to bottom:

1. the share of the rollout groups with 0 < correct < n (the groups GRPO-style advantages learn from), by phase of
   training, mean over seeds with its 95% bootstrap CI;
2. one row per failure type of the task, the fork's first, then the execution's (``failure:<type>`` rows over every
   problem, group ``(all)``; on the strategy task ``strategy``: a wrong strategy named at the fork, ``execution``:
   the key's strategy carried out wrong, ``format``: no strategy named), the share of the evaluation's samples at the
   declared temperature whose first mistake it is, at every evaluated step, mean over seeds and problems with its
   two-way bootstrap 95% CI.

One line per sampler, in every panel the same colour. Where the cells classify no failures (a task without
``classify_failure``, verl's cells), the figure has the first row only.

Run:
    python -m ead.plots.rl_chain --table results/rl/signal_by_phase.csv --groups results/rl/eval_by_group.csv \
        --png figures/rl_chain.png --pdf figures/rl_chain.pdf
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator

from ead.plots.rl_curves import sampler_colors
from ead.plots.style import apply_style, run_table_figure
from ead.rl.breakdown import ALL_GROUPS
from ead.tables import EVAL_BY_GROUP, FAILURE_METRIC_PREFIX, SIGNAL_BY_PHASE

#: The training metric of the top row (a steps.csv column the breakdown averages by phase).
INFORMATIVE = "informative_group_fraction"
#: The failure rows drawn first, in this order (the strategy task's fork, then its execution); other types follow.
CHAIN_ORDER = (f"{FAILURE_METRIC_PREFIX}strategy", f"{FAILURE_METRIC_PREFIX}execution")


def plot(signal, groups=None):
    """The figure (module docstring): a column per policy, the informative groups then each failure type's share
    (``groups``: the evaluation-by-group table; None, as no table, draws the first row only)."""
    informative = signal[signal["metric"] == INFORMATIVE]
    if informative.empty:
        raise ValueError(f"the signal-by-phase table has no {INFORMATIVE!r} rows (rl.breakdown.train_metrics must "
                         "list it)")
    failures = None if groups is None else groups[(groups["group"] == ALL_GROUPS)
                                                  & groups["metric"].str.startswith(FAILURE_METRIC_PREFIX)]
    # the fork's mistake, then the execution's, then any other type (the order a response goes wrong in)
    kinds = [] if failures is None else sorted(
        failures["metric"].unique(),
        key=lambda kind: (CHAIN_ORDER.index(kind) if kind in CHAIN_ORDER else len(CHAIN_ORDER), kind))
    policies = list(dict.fromkeys(informative["policy"]))
    samplers = list(dict.fromkeys(informative["sampler"]))
    colors = sampler_colors(samplers)
    apply_style()
    rows = 1 + len(kinds)
    fig, axes = plt.subplots(rows, len(policies), figsize=(3.4 * len(policies), 2.5 * rows), squeeze=False,
                             sharex="row", sharey="row")
    for column, policy in enumerate(policies):
        for sampler in samplers:
            line = informative[(informative["policy"] == policy) & (informative["sampler"] == sampler)]
            line = line.sort_values("phase")
            ax = axes[0][column]
            ax.plot(line["phase"], 100 * line["value"], "o-", color=colors[sampler], label=sampler, ms=3)
            ax.fill_between(line["phase"], 100 * line["ci_low"], 100 * line["ci_high"], color=colors[sampler],
                            alpha=0.15, lw=0)
            for row, kind in enumerate(kinds, start=1):
                curve = failures[(failures["policy"] == policy) & (failures["sampler"] == sampler)
                                 & (failures["metric"] == kind)].sort_values("step")
                ax = axes[row][column]
                ax.plot(curve["step"], 100 * curve["value"], "o-", color=colors[sampler], ms=3)
                ax.fill_between(curve["step"], 100 * curve["ci_low"], 100 * curve["ci_high"], color=colors[sampler],
                                alpha=0.15, lw=0)
        axes[0][column].set_title(policy, fontsize=9)
        for ax in axes[:, column]:
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes[0][column].set_xlabel("phase of training")
        for row in range(1, rows):
            axes[row][column].set_xlabel("RL step")
    axes[0][0].set_ylabel("informative rollout\ngroups (%)", fontsize=8)
    for row, kind in enumerate(kinds, start=1):
        axes[row][0].set_ylabel(f"samples failing by\n{kind.removeprefix(FAILURE_METRIC_PREFIX)} (%)", fontsize=8)
    axes[0][-1].legend(fontsize=7, loc="best")
    fig.suptitle("From the fork to the answer: informative rollout groups by phase (mean of seeds, 95% CI), and the "
                 "evaluation's samples by first mistake over training\n(at the declared temperature, all problems; "
                 "mean of seeds and problems, two-way bootstrap 95% CI)", fontsize=9)
    fig.tight_layout()
    return fig


def main(argv=None):
    run_table_figure(plot, __doc__.splitlines()[0], argv, table=SIGNAL_BY_PHASE, extra={"groups": EVAL_BY_GROUP})


if __name__ == "__main__":
    main()
