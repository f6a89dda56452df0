"""Paper Figure 7: Pass@16 during RL with n = 4 / 8 / 16 rollouts per prompt (lr by n), EAD vs fixed tau, and under
it EAD's paired difference to tau 1.0 in Pass@16 at each n (what `results/claims.csv` tests, at every step).

Run:
    python -m ead.plots.fig07_rollout_scaling --eval-curves results/rl/eval_curves.csv \
        --train-curves results/rl/train_curves.csv --paired-curves results/rl/paired_curves.csv \
        --experiment '<rl.experiments.rollout_scaling as JSON>' --k 16 \
        --png figures/fig07_rollout_scaling.png --pdf figures/fig07_rollout_scaling.pdf
"""

from ead.plots.rl_curves import facet_curves, run


def plot(eval_curves, train_curves, experiment, k, paired_curves):
    return facet_curves(eval_curves, experiment, [f"pass@{k}"], "n", sorted(experiment["n"]),
                        f"Rollout scaling: Pass@{k} during RL ({{ci}}; bottom: paired difference to "
                        f"tau 1.0)", paired=paired_curves, paired_metrics=[f"pass@{k}"], baseline="tau1.0")


if __name__ == "__main__":
    run(plot, __doc__.splitlines()[0])
