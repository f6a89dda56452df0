"""The claims forest plot (ead.plots.claims_forest) draws one row per claim of its figure."""

import json

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
