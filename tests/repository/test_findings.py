"""The findings page (docs/findings.md) and the README's summary of it are tools/findings.py's output, and that program
refuses a page that leaves a claim out, a prediction that differs from where it was registered, and a report that
printed another prediction than its config holds."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


findings = _load("findings")
doc_blocks = _load("doc_blocks")


@pytest.fixture
def sources(tmp_path: Path) -> Path:
    """A copy of everything the program reads: the configs, the reports, the notebook."""
    shutil.copy(ROOT / "TESTBED.md", tmp_path / "TESTBED.md")
    shutil.copytree(ROOT / "configs", tmp_path / "configs")
    shutil.copytree(ROOT / "benchmarks" / "results", tmp_path / "benchmarks" / "results")
    return tmp_path


def _experiment(key: str) -> dict:
    return next(experiment for experiment in findings.load() if experiment["key"] == key)


def test_the_page_and_the_readmes_summary_are_the_programs_output():
    experiments = findings.load()
    assert doc_blocks.read_block(ROOT / "docs" / "findings.md", "findings") == findings.render_page(ROOT, experiments)
    assert doc_blocks.read_block(ROOT / "README.md", "findings-summary") == findings.render_summary(ROOT, experiments)


def test_every_claim_of_every_experiment_is_on_the_page_with_its_prediction():
    page = doc_blocks.read_block(ROOT / "docs" / "findings.md", "findings")
    for experiment in findings.load():
        claims = findings.config_claims(ROOT, experiment["claims_from"])
        for claim_id in experiment.get("claims", list(claims)):
            (line,) = [line for line in page.splitlines() if line.startswith(f"| {claim_id} |")
                       or line.startswith(f"| {claim_id} (primary) |")]
            prediction = claims[claim_id].get("prediction", {}).get("verdict")
            if prediction:
                assert f"| {prediction} " in line, (claim_id, line)
    # The map's 18 pre-registered claims and its tally, as its own report counts them.
    report = (ROOT / "benchmarks" / "results" / "mechanism_map.md").read_text()
    assert "10 of 18 verdicts as pre-registered" in report and "**10 of 18 claims as predicted.**" in page


def test_a_number_changed_in_a_report_changes_the_page(sources):
    report = sources / "benchmarks" / "results" / "positive_control.md"
    report.write_text(report.read_text().replace("-0.9 [-2.3, +0.4]", "-0.8 [-2.3, +0.4]"))
    page = findings.render_page(sources, [_experiment("positive_control")])
    assert "| P1 (primary) |" in page and "-0.8 [-2.3, +0.4]" in page and "-0.9 [-2.3, +0.4]" not in page
    assert page not in doc_blocks.read_block(ROOT / "docs" / "findings.md", "findings")


def test_a_claim_the_report_holds_but_the_page_leaves_out_is_refused():
    experiment = _experiment("default")
    experiment["claims"] = [claim for claim in experiment["claims"] if claim != "C2"]
    with pytest.raises(findings.FindingsError, match=r"main_finding\.md holds claims \['C2'\] that the page leaves"):
        findings.experiment_rows(ROOT, experiment)


def test_a_prediction_other_than_the_pre_registrations_is_refused():
    experiment = _experiment("positive_control")
    experiment["predictions"]["verdicts"]["P1"] = "inconclusive"
    with pytest.raises(findings.FindingsError, match=r"not predict 'inconclusive' for P1 \(it writes \['supported"):
        findings.experiment_rows(ROOT, experiment)


def test_a_report_that_printed_another_prediction_than_its_config_is_refused(sources):
    config = sources / "configs" / "ablations" / "mechanism_map_trl.yaml"
    config.write_text(config.read_text().replace("prediction: {verdict: negligible", "prediction: {verdict: supported"))
    with pytest.raises(findings.FindingsError, match="printed the prediction 'negligible', the config says 'supp"):
        findings.experiment_rows(sources, _experiment("mechanism_map_trl"))


def test_a_claim_missing_from_its_results_is_named(sources):
    report = sources / "benchmarks" / "results" / "mechanism_map_replication.md"
    report.write_text("\n".join(line for line in report.read_text().splitlines()
                                if not line.startswith("| R-p05-fragile-b-16 |")))
    with pytest.raises(findings.FindingsError, match=r"claim R-p05-fragile-b-16: 0 table rows"):
        findings.experiment_rows(sources, _experiment("mechanism_map_replication"))


def test_a_verdict_that_replaced_an_older_prediction_word_is_said_not_counted():
    rows, _ = findings.experiment_rows(ROOT, _experiment("positive_control"))
    p2 = next(row for row in rows if row.id == "P2")
    assert (p2.predicted, p2.verdict, p2.as_predicted) == ("inconclusive", "negligible", False)
    assert findings.as_predicted_cell(p2, before_negligible=True).startswith("no: negligible, a verdict added after")
    assert findings.tally(rows) == (2, 5)
