"""The chain figure (ead.plots.rl_chain): a column per policy, the informative groups by phase on top and a row per
failure type of the breakdown's all-problem shares under it, one line per sampler holding the tables' values."""

import numpy as np
import pandas as pd
import pytest

from ead.tables import EVAL_BY_GROUP, SIGNAL_BY_PHASE

POLICIES = ("map_p05_exact", "map_p05_fragile")
SAMPLERS = ("tau1.2", "ead")


def signal_table() -> pd.DataFrame:
    return SIGNAL_BY_PHASE.validate(pd.DataFrame([
        dict(policy=policy, algorithm="dapo", sampler=sampler, n=8, metric="informative_group_fraction", phase=phase,
             first_step=4 * phase - 3, last_step=4 * phase, value=0.1 * phase + 0.01 * i, ci_low=0.0, ci_high=1.0,
             num_seeds=4)
        for policy in POLICIES for i, sampler in enumerate(SAMPLERS) for phase in (1, 2, 3, 4)]))


def groups_table(failures=True) -> pd.DataFrame:
    rows = [dict(policy=policy, algorithm="dapo", sampler=sampler, n=8, step=step, group_by="key", group=group,
                 metric=metric, value=value, ci_low=max(value - 0.05, 0.0), ci_high=value + 0.05, num_seeds=4,
                 num_problems=96)
            for policy in POLICIES for sampler in SAMPLERS for step in (0, 8, 16)
            for group, metric, value in [("*", "pass@1", 0.5), ("(all)", "failure:strategy", 0.9 - 0.02 * step),
                                         ("(all)", "failure:execution", 0.05), ("*", "failure:strategy", 0.7)]
            if failures or not metric.startswith("failure:")]
    return EVAL_BY_GROUP.validate(pd.DataFrame(rows))


def test_the_chain_draws_informative_groups_then_each_failure_type_per_policy(tmp_path):
    from ead.plots import rl_chain

    fig = rl_chain.plot(signal_table(), groups_table())
    axes = np.array(fig.axes).reshape(3, len(POLICIES))  # informative groups, then the fork's and the execution's
    assert [ax.get_title() for ax in axes[0]] == list(POLICIES)
    assert [axes[row][0].get_ylabel().split("\n")[-1] for row in (1, 2)] == ["strategy (%)", "execution (%)"]
    # one line per sampler; the strategy row draws the all-problem rows (not key *'s 70%), in percent, step by step
    lines = axes[1][1].get_lines()
    assert len(lines) == len(SAMPLERS)
    assert list(lines[0].get_xdata()) == [0, 8, 16]
    assert list(lines[0].get_ydata()) == pytest.approx([90.0, 74.0, 58.0])
    assert list(axes[0][0].get_lines()[1].get_ydata()) == pytest.approx([11.0, 21.0, 31.0, 41.0])  # ead's phases
    rl_chain.main(["--table", str(_written(SIGNAL_BY_PHASE, signal_table(), tmp_path / "s.csv")),
                   "--groups", str(_written(EVAL_BY_GROUP, groups_table(), tmp_path / "g.csv")),
                   "--png", str(tmp_path / "c.png"), "--pdf", str(tmp_path / "c.pdf")])
    assert (tmp_path / "c.png").stat().st_size > 0 and (tmp_path / "c.pdf").stat().st_size > 0


def test_without_failure_shares_the_chain_is_the_informative_groups_and_without_them_an_error():
    from ead.plots import rl_chain

    fig = rl_chain.plot(signal_table(), groups_table(failures=False))
    assert len(fig.axes) == len(POLICIES)  # one row
    assert len(rl_chain.plot(signal_table(), None).axes) == len(POLICIES)  # no evaluation-by-group table: the same
    with pytest.raises(ValueError, match="no 'informative_group_fraction' rows"):
        rl_chain.plot(signal_table().assign(metric="solved_group_fraction"), groups_table())


def _written(table, rows, path):
    table.write(rows, path)
    return path
