"""Fig. 9 (ead.plots.fig09_majority_scaling): coinciding samplers stay visible and N is whole."""

import numpy as np
import pandas as pd

from tests.plots.conftest import styles_of


def test_fig09_coinciding_samplers_stay_visible_and_n_is_whole():
    from ead.plots import fig09_majority_scaling

    rows = [{"sampler": sampler, "n": n, "maj_at_n": 0.4, "ci_low": 0.3, "ci_high": 0.5, "no_answer_rate": 0.0,
             "model_name": "tiny_arith", "task": "arithmetic", "num_questions": 8, "samples_per_question": 4}
            for sampler in ("EAD", "tau1.0", "tau0.6") for n in (1, 2, 3, 4)]
    fig = fig09_majority_scaling.plot(pd.DataFrame(rows))
    fig.canvas.draw()
    ax = fig.axes[0]
    styles = styles_of(ax)
    assert len(set(styles.values())) == len(styles) == 3, styles
    assert np.allclose(ax.get_xticks(), np.round(ax.get_xticks()))
