"""Paper Figure 5: Pass@16 on the larger policy, EAD with tau_min = 0.8 vs fixed temperatures (`larger_model`).

Run:
    python -m ead.plots.fig05_larger_model --eval-curves results/rl/eval_curves.csv \
        --train-curves results/rl/train_curves.csv --experiment '<rl.experiments.larger_model as JSON>' --k 16 \
        --png figures/fig05_larger_model.png --pdf figures/fig05_larger_model.pdf
"""

from ead.plots.rl_curves import facet_curves, run


def plot(eval_curves, train_curves, experiment, k):
    return facet_curves(eval_curves, experiment, [f"pass@{k}"], "policy", experiment["policies"],
                        f"Pass@{k} on the larger policy ({{ci}})")


if __name__ == "__main__":
    run(plot, __doc__.splitlines()[0])
