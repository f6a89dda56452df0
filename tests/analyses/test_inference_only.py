"""Inference-only sampler comparison (ead.analyses.inference_only): the paired table, the headline chosen on one
split and reported on the other, and the job's tables that the figure reads."""

import numpy as np
import pandas as pd
import pytest

from ead.analyses.inference_only import headline, load, main, sampler_table
from ead.metrics import bootstrap_means, pass_at_k, worst_at_k
from ead.plots import inference_only as figure
from ead.tables import INFERENCE_ONLY, INFERENCE_ONLY_HEADLINE

FAMILIES = {"tau0.7": "fixed", "tau1.0": "fixed", "ead_a": "ead", "ead_b": "ead"}


#: correct counts out of 4 of problems q0..q3 per (split, sampler): on val ead_b and tau0.7 are their families' best
#: by Pass@4; on test ead_a would be (the split the headline must not choose on)
COUNTS = {("val", "tau0.7"): [4, 1, 1, 0], ("val", "tau1.0"): [4, 1, 0, 0], ("val", "ead_a"): [2, 1, 0, 0],
          ("val", "ead_b"): [3, 1, 1, 1],
          ("test", "tau0.7"): [2, 2, 0, 1], ("test", "tau1.0"): [3, 1, 0, 0], ("test", "ead_a"): [4, 4, 4, 4],
          ("test", "ead_b"): [1, 2, 1, 0]}


def write_problems(tmp_path):
    paths = []
    for (split, sampler), counts in COUNTS.items():
        path = tmp_path / "results" / "inference_only" / "pol" / split / f"{sampler}_problems.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        pd.DataFrame({"problem_id": [f"q{i}" for i in range(4)], "num_samples": 4, "num_correct": counts,
                      "greedy_correct": np.nan}).to_csv(path, index=False)
        paths.append(str(path))
    return paths


def test_table_gives_each_sampler_its_paired_difference_to_the_baseline(tmp_path):
    problems = load(write_problems(tmp_path))
    table = sampler_table(problems, FAMILIES, [1, 4], "tau1.0", resamples=300, seed=1)
    assert sorted(table["metric"].unique()) == ["pass@1", "pass@4", "worst@4"]  # worst@1 = pass@1 is left out
    row = table[(table["split"] == "test") & (table["sampler"] == "ead_b") & (table["metric"] == "pass@1")].iloc[0]
    difference = np.array(COUNTS[("test", "ead_b")]) / 4 - np.array(COUNTS[("test", "tau1.0")]) / 4
    draws = bootstrap_means(difference, resamples=300, seed=1)
    assert row["diff"] == pytest.approx(difference.mean()) and row["family"] == "ead"
    assert (row["diff_ci_low"], row["diff_ci_high"]) == pytest.approx(tuple(np.quantile(draws, [0.025, 0.975])))
    assert row["value"] == pytest.approx(np.mean(COUNTS[("test", "ead_b")]) / 4)
    worst = table[(table["split"] == "val") & (table["sampler"] == "tau0.7") & (table["metric"] == "worst@4")]
    assert worst["value"].iloc[0] == pytest.approx(worst_at_k([4] * 4, COUNTS[("val", "tau0.7")], 4).mean())


def test_headline_chooses_each_familys_best_on_the_selection_split_and_reports_on_the_other(tmp_path):
    problems = load(write_problems(tmp_path))
    table = sampler_table(problems, FAMILIES, [1, 4], "tau1.0", resamples=200, seed=0)
    top = headline(problems, table, FAMILIES, [1, 4], select_split="val", report_split="test",
                   select_metric="pass@4", resamples=200, seed=0)
    assert set(top["ead_best"]) == {"ead_b"} and set(top["fixed_best"]) == {"tau0.7"}  # not test's best, ead_a
    row = top[top["metric"] == "pass@4"].iloc[0]
    expected = (pass_at_k([4] * 4, COUNTS[("test", "ead_b")], 4) - pass_at_k([4] * 4, COUNTS[("test", "tau0.7")], 4))
    assert row["effect"] == pytest.approx(expected.mean()) and row["report_split"] == "test"
    assert row["verdict"] in ("supported", "contradicted", "inconclusive") and row["mde"] > 0


def test_the_job_writes_both_declared_tables_and_the_figure_reads_them(tmp_path):
    paths = write_problems(tmp_path)
    table, top = tmp_path / "samplers.csv", tmp_path / "headline.csv"
    main(["--problems", *paths, "--families", '{"tau0.7": "fixed", "tau1.0": "fixed", "ead_a": "ead", "ead_b": "ead"}',
          "--k", "1", "4", "--baseline", "tau1.0", "--select-split", "val", "--report-split", "test",
          "--select-metric", "pass@4", "--resamples", "100", "--seed", "0", "--table", str(table), "--headline",
          str(top)])
    fig = figure.plot(INFERENCE_ONLY.read(table), INFERENCE_ONLY_HEADLINE.read(top))
    assert len(fig.axes) == 3  # one model x (Pass@1, Pass@4, Worst@4)
    stars = [line for line in fig.axes[0].get_lines() if line.get_marker() == "*"]
    assert len(stars) == 2  # the chosen EAD and fixed samplers
    assert "ead_b - tau0.7" in fig.axes[0].get_title()
