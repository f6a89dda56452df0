"""Paper Figure 10: EAD vs fixed temperature under GRPO (KL loss) and EntropyMech (Clip-Cov) (`algorithms`).

Run:
    python -m ead.plots.fig10_algorithms --eval-curves results/rl/eval_curves.csv \
        --train-curves results/rl/train_curves.csv --experiment '<rl.experiments.algorithms as JSON>' --k 16 \
        --png figures/fig10_algorithms.png --pdf figures/fig10_algorithms.pdf
"""

from ead.plots.rl_curves import facet_curves, run


def plot(eval_curves, train_curves, experiment, k):
    return facet_curves(eval_curves, experiment, [f"pass@{k}", f"worst@{k}"], "algorithm",
                        experiment["algorithms"], f"Other RL algorithms: Pass@{k} / Worst@{k} ({{ci}})")


if __name__ == "__main__":
    run(plot, __doc__.splitlines()[0])
