"""Paper Figure 12: mean rollout response length during RL for each sampler (experiment `main`).

Run:
    python -m ead.plots.fig12_response_length --eval-curves results/rl/eval_curves.csv \
        --train-curves results/rl/train_curves.csv --experiment '<rl.experiments.main as JSON>' --k 16 \
        --png figures/fig12_response_length.png --pdf figures/fig12_response_length.pdf
"""

from ead.plots.rl_curves import facet_curves, run


def plot(eval_curves, train_curves, experiment, k):
    return facet_curves(train_curves, experiment, ["response_length"], "policy", experiment["policies"],
                        "Rollout response length during RL ({ci})")


if __name__ == "__main__":
    run(plot, __doc__.splitlines()[0])
