"""The claims forest plot (ead.plots.claims_forest) draws one row per claim of its figure."""

import json

import pandas as pd
import pytest

from ead.claims.rl import main
from ead.tables import CLAIMS, EVAL_PROBLEMS, STEPS
from tests.conftest import CLAIM, problems_table, steps_table


def test_claims_forest_draws_one_row_per_claim_of_its_figure(tmp_path):
    from ead.plots import claims_forest

    EVAL_PROBLEMS.write(problems_table(), tmp_path / "eval_problems.csv")
    STEPS.write(steps_table(), tmp_path / "steps.csv")
    out = tmp_path / "claims.csv"
    beyond = [{**CLAIM, "id": "B1", "figure": "beyond"}, {**CLAIM, "id": "B2", "figure": "beyond", "metric": "pass@1"},
              {**CLAIM, "id": "B3", "figure": "beyond", "metric": "pass@1"}]
    main(["--claims", json.dumps([CLAIM, *beyond]), "--eval-problems", str(tmp_path / "eval_problems.csv"),
          "--steps", str(tmp_path / "steps.csv"), "--window", "4", "--resamples", "200", "--seed", "0",
          "--analysis-claims", "--out", str(out)])
    fig = claims_forest.plot(CLAIMS.read(out), "beyond")
    panels = {ax.get_xlabel(): [tick.get_text() for tick in ax.get_yticklabels()] for ax in fig.axes}
    assert [len(labels) for labels in panels.values()] == [1, 2]  # B1 on pass@4; B2, B3 on pass@1; C1 (fig04) not drawn
    assert all(label.startswith(("B2:", "B3:")) for label in list(panels.values())[1])
    with pytest.raises(ValueError, match=r"no claim with figure = 'fig99'"):
        claims_forest.plot(CLAIMS.read(out), "fig99")
    claims_forest.main(["--claims", str(out), "--figure", "beyond", "--png", str(tmp_path / "b.png"), "--pdf",
                        str(tmp_path / "b.pdf")])
    assert (tmp_path / "b.png").stat().st_size > 0 and (tmp_path / "b.pdf").stat().st_size > 0


def test_claims_of_several_policies_draw_a_grid_of_panels_with_the_predicted_effect(tmp_path):
    from ead.plots import claims_forest

    row = dict(figure="mechanism_map", statement="s", algorithm="dapo", n=8, sampler="ead", baseline="tau1.0",
               metric="pass@1", evaluated_with="eval_tau", step=16, effect=0.01, ci_low=-0.005, ci_high=0.02,
               standard_error=0.006, mde=0.017, num_seeds=4, num_units=384, smallest_effect=0.02,
               verdict="inconclusive", rule="r", scope="x", over="curve", predicted_verdict="supported",
               predicted_effect=0.03)
    policies = ["p02_exact", "p05_exact", "p15_exact", "p02_fragile"]
    table = CLAIMS.validate(pd.DataFrame([{**row, "claim": f"M-{p}-{c}", "policy": p, "baseline": base}
                                          for p in policies for c, base in (("a", "tau1.0"), ("b", "tau1.2"))]))
    fig = claims_forest.plot(table, "mechanism_map")
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in visible] == policies  # in the claims' order, three a row
    assert len(fig.axes) == 6 and fig.axes[0].get_position().y0 > fig.axes[3].get_position().y0
    assert all(len(ax.get_yticklabels()) == 2 for ax in visible)
    triangles = [line for line in visible[0].get_lines() if line.get_marker() == "v"]
    assert sorted(line.get_xdata()[0] for line in triangles) == pytest.approx([3.0, 3.0])  # predicted, in points
