"""Paper Figure 4: Pass@16 and Worst@16 during RL for each sampler, on both policy sizes (experiment `main`), and
under them each sampler's paired difference to tau 1.0 in Pass@16 (what `results/claims.csv` tests, at every step).

The k drawn is ``--k`` (the workflow's largest ``rl.eval.k``: 4 in the smoke profile), named in the title and axis
labels; the file name keeps the paper's k = 16.

Run:
    python -m ead.plots.fig04_pass_worst_at_16 --eval-curves results/rl/eval_curves.csv \
        --train-curves results/rl/train_curves.csv --paired-curves results/rl/paired_curves.csv \
        --experiment '<rl.experiments.main as JSON>' --k 16 \
        --png figures/fig04_pass_worst_at_16.png --pdf figures/fig04_pass_worst_at_16.pdf
"""

from ead.plots.rl_curves import evaluated_k, facet_curves, run


def plot(eval_curves, train_curves, experiment, k, paired_curves):
    # the file keeps the paper's name (at_16) whatever k the profile evaluates: the title says the k drawn
    k = evaluated_k(eval_curves, k)
    return facet_curves(eval_curves, experiment, [f"pass@{k}", f"worst@{k}"], "policy", experiment["policies"],
                        f"Pass@k / Worst@k at k = {k} on held-out problems during RL ({{ci}}; bottom: "
                        f"paired difference to tau 1.0)", paired=paired_curves, paired_metrics=[f"pass@{k}"],
                        baseline="tau1.0")


if __name__ == "__main__":
    run(plot, __doc__.splitlines()[0])
