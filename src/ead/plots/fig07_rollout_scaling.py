"""Paper Figure 7: Pass@16 during RL with n = 4 / 8 / 16 rollouts per prompt (lr by n), EAD vs fixed tau.

Run:
    python -m ead.plots.fig07_rollout_scaling --eval-curves results/rl/eval_curves.csv \
        --train-curves results/rl/train_curves.csv --experiment '<rl.experiments.rollout_scaling as JSON>' --k 16 \
        --png figures/fig07_rollout_scaling.png --pdf figures/fig07_rollout_scaling.pdf
"""

from ead.plots.rl_curves import facet_curves, run


def plot(eval_curves, train_curves, experiment, k):
    return facet_curves(eval_curves, experiment, [f"pass@{k}"], "n", sorted(experiment["n"]),
                        f"Rollout scaling: Pass@{k} during RL (mean of seeds, 95% CI)")


if __name__ == "__main__":
    run(plot, __doc__.splitlines()[0])
