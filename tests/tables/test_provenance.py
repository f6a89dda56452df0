"""What a result records of the run that made it (ead.tables.provenance): the profile of a workflow job, in its
tables and its figures."""


import pandas as pd
import pytest

from ead import tables
from ead.tables import (
    EVAL_PROBLEMS,
    TableError,
)
from tests.tables.conftest import (
    problems_table,
)


def test_a_workflow_job_stamps_its_profile_into_every_table_it_writes(tmp_path, monkeypatch):
    path = tmp_path / "eval_problems.csv"
    monkeypatch.delenv(tables.PROFILE_ENV, raising=False)
    EVAL_PROBLEMS.write(problems_table(), path)
    assert tables.PROFILE_COLUMN not in pd.read_csv(path).columns  # outside the workflow: no profile to record
    monkeypatch.setenv(tables.PROFILE_ENV, "smoke")
    EVAL_PROBLEMS.write(problems_table(), path)
    assert set(EVAL_PROBLEMS.read(path)[tables.PROFILE_COLUMN]) == {"smoke"}
    with pytest.raises(TableError, match="column 'profile' must be str"):
        EVAL_PROBLEMS.validate(problems_table().assign(profile=3))

def test_figures_record_their_profile(tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from PIL import Image

    from ead.plots.style import save_figure

    monkeypatch.setenv(tables.PROFILE_ENV, "smoke")
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    save_figure(fig, str(tmp_path / "f.png"), str(tmp_path / "f.pdf"))
    assert Image.open(tmp_path / "f.png").text["ead-profile"] == "smoke"
    assert b"ead-profile=smoke" in (tmp_path / "f.pdf").read_bytes()
