"""One RL cell's evaluation summary (``eval.csv``) from its per-problem counts (``eval_problems.csv``).

Per evaluation step: greedy accuracy (if graded), Pass@k and Worst@k for every k (unbiased estimators from the
per-problem sample and correct counts, ``ead.metrics.pass_worst_summary``), the mean over problems with a 95% bootstrap
CI.
The training job writes only the counts, which serve any k <= n: changing ``rl.eval.k`` reruns this job and the
aggregation, never the training (workflow/rules/rl_cpu.smk).

Run:
    python -m ead.rl.cell_eval --eval-problems results/rl/tiny1m/dapo/ead/n8/seed0/eval_problems.csv \
        --k 1 16 --seed 1234 --out results/rl/tiny1m/dapo/ead/n8/seed0/eval.csv \
        [--expect-steps 200 --eval-every 20 --own-sampler]
"""

from __future__ import annotations

import argparse

import pandas as pd

from ead.io import setup_logging
from ead.metrics import pass_worst_summary
from ead.rl.cells import add_completeness_arguments, read_eval_problems
from ead.tables import EVAL, PROBLEM_COLUMNS, RUN_COLUMNS, TIMEOUT_PROBLEM_COLUMN, TIMEOUT_STEP_COLUMN

__all__ = ["cell_summary"]


def cell_summary(eval_problems: pd.DataFrame, ks: list[int], *, seed: int) -> pd.DataFrame:
    """eval.csv of a cell: per (sampler of the evaluation, step) the summary of its problems, with the cell's columns
    carried over."""
    if len(eval_problems) and max(ks) > eval_problems["num_samples"].min():
        raise ValueError(f"k = {max(ks)} exceeds the {eval_problems['num_samples'].min()} samples per problem of this "
                         "cell (unbiased Pass@k needs n >= k): lower rl.eval.k or raise rl.eval.n")
    per_problem = {*PROBLEM_COLUMNS, TIMEOUT_PROBLEM_COLUMN, *RUN_COLUMNS}
    carried = [c for c in eval_problems.columns if c not in per_problem]
    constants = eval_problems.iloc[0][carried].to_dict() if len(eval_problems) else {}

    def timeouts(group: pd.DataFrame) -> float:  # the grader's timeouts of one evaluation (NaN: not recorded)
        if TIMEOUT_PROBLEM_COLUMN not in group:
            return float("nan")
        return float(group[TIMEOUT_PROBLEM_COLUMN].sum(min_count=1))

    parts = [pass_worst_summary(group, ks, seed=seed).assign(step=step, evaluated_with=evaluated_with,
                                                    **{TIMEOUT_STEP_COLUMN: timeouts(group)})
             for (evaluated_with, step), group in eval_problems.groupby(["evaluated_with", "step"], sort=True)]
    return pd.concat(parts, ignore_index=True).assign(**constants)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eval-problems", required=True, help="the cell's eval_problems.csv")
    parser.add_argument("--k", type=int, nargs="+", required=True, help="Pass@k / Worst@k for these k (rl.eval.k)")
    parser.add_argument("--seed", type=int, required=True, help="bootstrap seed (rl.eval.seed)")
    parser.add_argument("--out", required=True, help="eval.csv to write")
    add_completeness_arguments(parser)
    args = parser.parse_args(argv)
    log = setup_logging("rl.cell_eval")
    # validated and complete: every evaluation step the cell's budget declares (eval_tau's, and own_sampler's at the
    # last step where the config has it), each with the same problems; a dropped row is refused, naming the file
    summary = cell_summary(read_eval_problems([args.eval_problems], args), args.k, seed=args.seed)
    EVAL.write(summary, args.out)
    log.info("wrote %s (%d rows)", args.out, len(summary))


if __name__ == "__main__":
    main()
