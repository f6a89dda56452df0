"""Paper Figure 6: entropy (tau = 1, over rollout tokens) during RL for each sampler (experiment `main`).

Run:
    python -m ead.plots.fig06_entropy_dynamics --eval-curves results/rl/eval_curves.csv \
        --train-curves results/rl/train_curves.csv --experiment '<rl.experiments.main as JSON>' --k 16 \
        --png figures/fig06_entropy_dynamics.png --pdf figures/fig06_entropy_dynamics.pdf
"""

from ead.plots.rl_curves import facet_curves, run


def plot(eval_curves, train_curves, experiment, k):
    return facet_curves(train_curves, experiment, ["entropy"], "policy", experiment["policies"],
                        "Policy entropy on its own rollouts during RL ({ci})")


if __name__ == "__main__":
    run(plot, __doc__.splitlines()[0])
