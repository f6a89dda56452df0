"""The findings page (docs/findings.md) and the README's summary of it are tools/findings.py's output, and that program
refuses a page that leaves a claim out, a prediction that differs from where it was registered, and a report that
printed another prediction than its config holds."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tests.conftest import load_tool

ROOT = Path(__file__).resolve().parents[2]


findings = load_tool("findings")
doc_blocks = load_tool("doc_blocks")


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
    collected = findings.collect(ROOT, findings.load())
    assert doc_blocks.read_block(ROOT / "docs" / "findings.md", "findings") == findings.render_page(collected)
    assert doc_blocks.read_block(ROOT / "README.md", "findings-summary") == findings.render_summary(collected)


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
    # Each claim's MDE as its report prints it: a column (P1), or the sentence on the map's primary.
    rows = {line.split(" | ")[0][2:]: line for line in page.splitlines() if line.startswith("| ")}
    assert "| -0.9 [-2.3, +0.4] | 1.9 |" in rows["P1 (primary)"]
    assert "| +1.6 [+0.2, +3.2] | 2.1 |" in rows["M-p05-fragile-b (primary)"]
    assert "| +2.6 [+1.0, +4.4] |  |" in rows["M-p15-fragile-b"]  # printed nowhere: left empty, not guessed
    # The map's 18 pre-registered claims and its tally, as its own report counts them.
    report = (ROOT / "benchmarks" / "results" / "mechanism_map.md").read_text()
    assert "10 of 18 verdicts as pre-registered" in report and "**10 of 18 claims as predicted.**" in page


def test_a_number_changed_in_a_report_changes_the_page(sources):
    report = sources / "benchmarks" / "results" / "positive_control.md"
    report.write_text(report.read_text().replace("-0.9 [-2.3, +0.4]", "-0.8 [-2.3, +0.4]"))
    page = findings.render_page(findings.collect(sources, [_experiment("positive_control")]))
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


def _own_experiment_block() -> str:
    """The overlay of configs/README.md, "Your own experiment, pre-registered"."""
    section = (ROOT / "configs" / "README.md").read_text().split("## Your own experiment, pre-registered")[1]
    return section.split("```yaml\n")[1].split("```")[0]


def test_the_configs_pages_own_experiment_resolves_to_its_cells_and_its_predicted_claim(tmp_path):
    """Step 1 of the recipe, as the page says it: the resolved config runs only the experiment's cells (2 samplers x 4
    seeds) and only its claim, with the prediction beside it."""
    import subprocess

    import yaml

    from ead.settings.rl import expand_grid

    overlay = tmp_path / "my_question.yaml"
    overlay.write_text(_own_experiment_block())
    result = subprocess.run([sys.executable, "-m", "ead.workflow", "--configfile", "configs/smoke.yaml",
                             str(overlay)], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    config = yaml.safe_load(result.stdout)
    assert config["profile"] == "my_question" and config["rl"]["run"] == ["my_question"]
    cells = expand_grid(config["rl"], config["rl"]["run"])
    assert {(cell.sampler, cell.seed) for cell in cells} == {(s, seed) for s in ("tau1.2", "ead") for seed in range(4)}
    (claim,) = config["claims"]
    assert (claim["id"], claim["policy"], claim["prediction"]) == (
        "Y1", "tiny1m_sharp", {"verdict": "inconclusive", "effect": 0.01})


def _claims_table(path: Path, recorded_prediction: str) -> None:
    from ead.tables import CLAIMS

    row = {column: 0 for column in CLAIMS.columns}
    row.update(claim="Y1", figure="none", statement="EAD raises Pass@1 over tau 1.2 over the learning curve",
               policy="tiny1m_sharp", algorithm="dapo", n=8, sampler="ead", baseline="tau1.2", metric="pass@1",
               evaluated_with="eval_tau", step=16, effect=0.005, ci_low=-0.003, ci_high=0.014, standard_error=0.004,
               mde=0.012, num_seeds=4, num_units=384, smallest_effect=0.02, verdict="inconclusive", rule="ci_vs_zero",
               scope="curve", over="curve", predicted_verdict=recorded_prediction, predicted_effect=0.01)
    path.parent.mkdir(parents=True, exist_ok=True)
    CLAIMS.validate(__import__("pandas").DataFrame([row]), path).to_csv(path, index=False)


def _own_experiment_entry() -> dict:
    """Step 4 of the recipe: the findings entry it says to add."""
    return {"key": "my_question", "title": "My question", "kind": "pre-registered", "question": "Q?",
            "predictions": {"source": "config"}, "claims_from": "configs/ablations/my_question.yaml",
            "primary": "Y1", "results": {"claims_csv": "benchmarks/results/my_question_claims.csv"},
            "locate": {"row": "id", "column": "effect, verdict (prediction)"}, "conclude": "C.", "not_conclude": "N."}


def test_the_recipes_run_goes_on_the_findings_page_from_its_committed_claims_table(sources):
    (sources / "configs" / "ablations" / "my_question.yaml").write_text(_own_experiment_block())
    _claims_table(sources / "benchmarks" / "results" / "my_question_claims.csv", "inconclusive")
    page = findings.render_page(findings.collect(sources, [_own_experiment_entry()]))
    assert ("| Y1 (primary) | EAD raises Pass@1 over tau 1.2 over the learning curve | inconclusive +1.0 | "
            "+0.5 [-0.3, +1.4] | 1.2 | **inconclusive** | yes |") in page
    assert "**1 of 1 claims as predicted.**" in page
    assert "`benchmarks/results/my_question_claims.csv`, the run's claims table" in page


def test_a_claims_table_that_recorded_another_prediction_than_the_overlay_is_refused(sources):
    (sources / "configs" / "ablations" / "my_question.yaml").write_text(_own_experiment_block())
    _claims_table(sources / "benchmarks" / "results" / "my_question_claims.csv", "supported")
    with pytest.raises(findings.FindingsError, match="printed the prediction 'supported', the config says 'inconc"):
        findings.collect(sources, [_own_experiment_entry()])


def test_a_misspelt_key_in_the_declarations_is_refused_naming_it(tmp_path):
    declarations = tmp_path / "findings.yaml"
    text = (ROOT / "tools" / "findings.yaml").read_text()
    declarations.write_text(text.replace("    primary: P1\n", "    primray: P1\n", 1))
    with pytest.raises(findings.FindingsError, match=r"experiment 2 \(positive_control\): missing keys \[\], "
                                                     r"unknown keys \['primray'\]"):
        findings.load(declarations)
