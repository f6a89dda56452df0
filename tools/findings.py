"""The findings page: every experiment's pre-registered predictions beside its results, and the README's summary of it.

For each experiment of ``tools/findings.yaml`` (the default profile, the positive control, the fixed pool, the
mechanism map and its later runs), the question, each claim's prediction (from the overlay's config ``prediction`` keys
or the TESTBED.md entry that pre-registered it, or the paper's claim for the default profile), its result and verdict
(copied from the program report the run's tables were rendered into, ``benchmarks/results/*.md``, from the run's own
claims table committed beside them, or from the TESTBED.md entry of a run whose tables were not kept), whether the
verdict is the predicted one, and what a reader may and may not conclude. Nothing is typed by hand: a claim of the
config missing from its results, a prediction that differs from its pre-registration or from the prediction its report
printed, are errors naming the claim and the file.

The page's block goes to ``--doc`` (docs/findings.md, block ``findings``), the summary to ``--readme`` (README.md, block
``findings-summary``); ``tests/repository/test_findings.py`` checks that both are this program's output.

Run (after any report in benchmarks/results/ changed):
    python tools/findings.py --doc docs/findings.md --readme README.md
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from ead.tables import CLAIMS

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tools/ siblings, also when loaded by file path
from doc_blocks import replace_block  # noqa: E402
from result_rows import interval, size  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENTS = ROOT / "tools" / "findings.yaml"
TESTBED = "TESTBED.md"
VERDICTS = ("supported", "negligible", "inconclusive", "contradicted")
NUMBER = r"[+-]?\d+\.\d+"
EFFECT = re.compile(rf"({NUMBER}) \[({NUMBER}), ({NUMBER})\]")
VERDICT = re.compile(rf"\*\*({'|'.join(VERDICTS)})\*\*(, not robust \([^)]*\))?")
#: What a report printed as a cell's prediction: "(as predicted)" or "(predicted inconclusive +0.5)".
PRINTED_PREDICTION = re.compile(rf"\((?:as predicted|predicted ({'|'.join(VERDICTS)}))")
ORIGIN = re.compile(r"commit `(\w+)`, run (\d{4}-\d\d-\d\d)")
FINGERPRINT = re.compile(r"Fingerprint `(\w+)`")


class FindingsError(ValueError):
    """A findings source that disagrees with another, or lacks what the page needs; the message names it."""


@dataclass(frozen=True)
class Row:
    """One claim (or premise) of an experiment on the page."""

    id: str
    statement: str
    predicted: str | None  # a verdict; None for a premise (measured, not predicted)
    predicted_effect: float | None  # signed, as a fraction (the config's `prediction.effect`)
    effect: str  # "+1.6 [+0.2, +3.2]", as the source printed it
    verdict: str
    robustness: str  # ", not robust (...)" as the report printed it, or ""
    mde: str  # the minimum detectable effect as the source printed it (points), or "" where it prints none

    @property
    def as_predicted(self) -> bool:
        return self.predicted == self.verdict


def markdown_tables(text: str) -> list[list[dict[str, str]]]:
    """Every Markdown table of ``text`` as rows keyed by header (cells stripped of spaces, as written otherwise)."""
    tables, block = [], []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            block.append([cell.strip() for cell in line.strip().strip("|").split(" | ")])
            continue
        if len(block) > 2:
            header = block[0]
            tables.append([dict(zip(header, cells)) for cells in block[2:]])
        block = []
    return tables


def plain(cell: str) -> str:
    """A cell's text without Markdown bold."""
    return cell.replace("**", "")


def testbed_entry(root: Path, title: str) -> str:
    """The text of the one TESTBED.md entry (``## <date>: <title>``) titled ``title``."""
    entries = re.split(r"^(?=## )", (root / TESTBED).read_text(), flags=re.M)
    found = [entry for entry in entries if entry.splitlines()[0].endswith(f": {title}")]
    if len(found) != 1:
        raise FindingsError(f"{TESTBED} has {len(found)} entries titled {title!r}; tools/findings.yaml needs one")
    return found[0]


def config_claims(root: Path, path: str) -> dict[str, dict]:
    """The top-level ``claims`` of a config file, by id, with its ``claim_defaults`` filled in."""
    config = yaml.safe_load((root / path).read_text())
    defaults = config.get("claim_defaults", {})
    claims = config.get("claims") or []
    if not claims:
        raise FindingsError(f"{path} declares no claims")
    return {claim["id"]: {**defaults, **claim} for claim in claims}


def find_row(tables: list[list[dict[str, str]]], value: str, *, key_column: str | None = None,
             cell: str | None = None, where: str) -> dict[str, str]:
    """The one table row whose first cell (or ``key_column``) is ``value`` and, with ``cell``, one of whose cells is
    ``cell``."""
    found = []
    for table in tables:
        for row in table:
            cells = list(row.values())
            if plain(row.get(key_column) if key_column else cells[0]) == value and (cell is None or cell in cells):
                found.append(row)
    if len(found) != 1:
        what = f"{value!r}" + (f" with a cell {cell!r}" if cell else "")
        raise FindingsError(f"{where}: {len(found)} table rows for {what}; expected exactly one")
    return found[0]


def read_result(row: dict[str, str], column: str | None, where: str) -> tuple[str, str, str, str]:
    """(effect, verdict, robustness, the text read) of a results row: from ``column``'s cell, or the row's cells."""
    if column is not None and column not in row:
        raise FindingsError(f"{where}: no column {column!r} (the table has {list(row)})")
    text = row[column] if column is not None else " | ".join(row.values())
    effect, verdict = EFFECT.search(text), VERDICT.search(text)
    if effect is None or verdict is None:
        raise FindingsError(f"{where}: no effect with its CI and bold verdict in {text!r}")
    return effect.group(0), verdict.group(1), verdict.group(2) or "", text


def printed_mde(text: str, claim_id: str) -> str:
    """A claim's MDE where its report prints it in a sentence rather than a column ("<id> ...: ..., MDE 2.1 points",
    the map's primary), or ""."""
    found = re.search(rf"{re.escape(claim_id)}\b[^\n]*?MDE ({NUMBER.replace('[+-]?', '')}) points", text)
    return found.group(1) if found else ""


def check_printed_prediction(text: str, predicted: str, result: str, where: str) -> None:
    """The prediction a report printed beside a result agrees with the one the page takes from the config."""
    printed = PRINTED_PREDICTION.search(text)
    if printed is None:
        return
    said = printed.group(1) or result  # "(as predicted)" says the verdict was the prediction
    if said != predicted:
        raise FindingsError(f"{where}: the report printed the prediction {said!r}, the config says {predicted!r}")


def testbed_prediction(tables: list[list[dict[str, str]]], claim: str, verdict: str, where: str) -> None:
    """The pre-registration's table row for ``claim`` (its ``prediction`` column; ``tables``: the entry's
    markdown_tables) starts with ``verdict``, the prediction the page copies."""
    rows = [row for table in tables for row in table
            if re.sub(r"\s*\(primary\)", "", plain(next(iter(row.values())))) == claim]
    written = [plain(row.get("prediction", "")) for row in rows]
    if len(written) != 1 or written[0].split(" ")[0] != verdict:
        raise FindingsError(f"{where}: the pre-registration in {TESTBED} does not predict {verdict!r} for {claim} "
                            f"(it writes {written})")


def experiment_rows(root: Path, experiment: dict) -> tuple[list[Row], str]:
    """The page's rows of one experiment (premises first, then its claims in the config's order) and where its results
    came from."""
    key = experiment["key"]
    claims = config_claims(root, experiment["claims_from"])
    wanted = experiment.get("claims", list(claims))
    unknown = [claim for claim in wanted if claim not in claims]
    if unknown:
        raise FindingsError(f"tools/findings.yaml, {key}: claims {unknown} are not in {experiment['claims_from']}")
    results = experiment["results"]
    if isinstance(results, dict) and "claims_csv" in results:
        source_text, source = claims_as_markdown(root, results["claims_csv"]), results["claims_csv"]
    elif isinstance(results, dict):
        source_text, source = testbed_entry(root, results["testbed"]), f'{TESTBED}, "{results["testbed"]}"'
    else:
        source_text, source = (root / results).read_text(), results
    tables = markdown_tables(source_text)
    if experiment["locate"]["row"] == "id":
        printed = {plain(next(iter(row.values()))) for table in tables for row in table}
        left_out = [claim for claim in claims if claim in printed and claim not in wanted]
        if left_out:
            raise FindingsError(f"tools/findings.yaml, {key}: {source} holds claims {left_out} that the page "
                                "leaves out")
    predictions = experiment["predictions"]
    # the pre-registration's tables, read once for all the experiment's claims
    registered = (markdown_tables(testbed_entry(root, predictions["entry"])) if predictions["source"] == "testbed"
                  else None)
    locate = experiment["locate"]
    rows = []
    for premise in experiment.get("premises", []):
        found = find_row(tables, premise["row"], cell=premise.get("cell"), where=source)
        effect, verdict, robustness, _ = read_result(found, None, f"{source}, {premise['id']}")
        rows.append(Row(premise["id"], premise["what"], None, None, effect, verdict, robustness,
                        found.get("MDE", "")))
    for claim_id in wanted:
        claim = claims[claim_id]
        where = f"{source}, claim {claim_id}"
        if locate["row"] == "id":
            found = find_row(tables, claim_id, where=where)
            column = locate.get("column")
        else:
            found = find_row(tables, claim[locate["row"]], where=where)
            column = locate["column"]
            if isinstance(column, dict):
                column = column[f"{claim['sampler']} - {claim['baseline']}"]
        effect, verdict, robustness, text = read_result(found, column, where)
        predicted_effect = None
        if predictions["source"] == "config":
            if "prediction" not in claim:
                raise FindingsError(f"{experiment['claims_from']}: claim {claim_id} has no `prediction`")
            predicted, predicted_effect = claim["prediction"]["verdict"], claim["prediction"].get("effect")
            check_printed_prediction(text, predicted, verdict, where)
        elif predictions["source"] == "testbed":
            predicted = predictions["verdicts"][claim_id]
            testbed_prediction(registered, claim_id, predicted, f"tools/findings.yaml, {key}")
        else:  # the paper's claim, in the claim's direction
            predicted = "supported"
        rows.append(Row(claim_id, claim.get("statement", ""), predicted, predicted_effect, effect, verdict,
                        robustness, found.get("MDE") or printed_mde(source_text, claim_id)))
    if experiment.get("primary") and experiment["primary"] not in wanted:
        raise FindingsError(f"tools/findings.yaml, {key}: its primary {experiment['primary']!r} is not one of its "
                            f"claims {wanted}")
    return rows, describe_source(source_text, source)


def claims_as_markdown(root: Path, path: str) -> str:
    """A run's claims table (``results/claims.csv`` committed under ``path``: ead.tables.CLAIMS) as a report's table:
    one row per claim, its effect with its CI in points, its verdict and the prediction the run recorded beside it
    (checked against the config's like a report's)."""
    claims = CLAIMS.read(root / path)
    lines = ["| claim | effect, verdict (prediction) | MDE |", "|---|---|---:|"]
    for row in claims.itertuples():
        recorded = getattr(row, "predicted_verdict", None)
        said = f" (predicted {recorded})" if isinstance(recorded, str) and recorded else ""
        lines.append(f"| {row.claim} | {interval(row)} **{row.verdict}**{said} | {size(row.mde)} |")
    return "\n".join(lines) + "\n"


def describe_source(text: str, source: str) -> str:
    """Where an experiment's numbers come from: the run's commit, date and fingerprint as its report gave them."""
    if source.startswith(TESTBED):
        return f"{source} (the run's own tables were not kept)"
    if source.endswith(".csv"):
        return f"`{source}`, the run's claims table"
    origin, fingerprint = ORIGIN.search(text), FINGERPRINT.search(text)
    if origin is None:
        raise FindingsError(f"{source}: its first line names no `commit ..., run <date>`")
    run = f"the run at commit `{origin.group(1)}` of {origin.group(2)}"
    return f"`{source}`, {run}" + (f", fingerprint `{fingerprint.group(1)}`" if fingerprint else "")


def predicted_cell(row: Row) -> str:
    if row.predicted is None:
        return "premise, not predicted"
    effect = "" if row.predicted_effect is None else f" {100 * row.predicted_effect:+.1f}"
    return f"{row.predicted}{effect}"


def as_predicted_cell(row: Row, before_negligible: bool) -> str:
    if row.predicted is None:
        return ""
    if row.as_predicted:
        return "yes"
    if before_negligible and row.predicted == "inconclusive" and row.verdict == "negligible":
        return "no: negligible, a verdict added after this prediction"
    return "**no**"


def tally(rows: list[Row]) -> tuple[int, int]:
    claims = [row for row in rows if row.predicted is not None]
    return sum(row.as_predicted for row in claims), len(claims)


def prediction_source(experiment: dict) -> str:
    predictions = experiment["predictions"]
    if predictions["source"] == "paper":
        return ("the paper's claims, each predicted supported in the paper's direction (the 2-point bound of "
                "`negligible` was declared after these claims' numbers were first seen: TESTBED.md, \"the negligible "
                "verdict, with bounds declared after the default and positive-control runs\")")
    if predictions["source"] == "testbed":
        entry = predictions["entry"]
        return f'{TESTBED}, "{entry}", written before the cells it predicts ran'
    return f"the `prediction` keys of `{experiment['claims_from']}`, committed before the cells they predict ran"


def collect(root: Path, experiments: list[dict]) -> list[tuple[dict, list[Row], str]]:
    """Each experiment with its rows and where its results came from (experiment_rows), read once for the page and
    the summary."""
    return [(experiment, *experiment_rows(root, experiment)) for experiment in experiments]


def render_page(collected: list[tuple[dict, list[Row], str]]) -> str:
    """The findings block: per experiment (``collect``) its question, sources, a table of prediction beside result,
    the tally and what may and may not be concluded."""
    lines = []
    for experiment, rows, source in collected:
        met, total = tally(rows)
        before = experiment["predictions"].get("before_negligible", False)
        lines += [f"### {experiment['title']} ({experiment['kind']})", "",
                  f"**Question.** {experiment['question']}", "",
                  f"**Predictions:** {prediction_source(experiment)}. **Results:** {source}.", "",
                  "| id | claim | predicted | result, points [95% CI] | MDE | verdict | as predicted |",
                  "|---|---|---|---|---:|---|---|"]
        for row in rows:
            primary = " (primary)" if row.id == experiment.get("primary") else ""
            lines.append(f"| {row.id}{primary} | {row.statement} | {predicted_cell(row)} | {row.effect} | {row.mde} | "
                         f"**{row.verdict}**{row.robustness} | {as_predicted_cell(row, before)} |")
        lines += ["", f"**{met} of {total} claims as predicted.** **May conclude:** {experiment['conclude']} "
                      f"**May not conclude:** {experiment['not_conclude']}", ""]
    return "\n".join(lines)


def render_summary(collected: list[tuple[dict, list[Row], str]]) -> str:
    """The README's summary: one line per experiment (``collect``), its tally and its primary claim's result beside
    its prediction."""
    lines = []
    for experiment, rows, _ in collected:
        met, total = tally(rows)
        line = f"- **{experiment['title']}** ({experiment['kind']}): {met} of {total} as predicted"
        primary = next((row for row in rows if row.id == experiment.get("primary")), None)
        if primary is not None:
            power = f" (MDE {primary.mde})" if primary.mde else ""
            line += (f"; primary {primary.id}: {primary.effect} points{power}, **{primary.verdict}**"
                     f"{primary.robustness} (predicted {primary.predicted})")
        lines.append(line + ".")
    return "\n".join(lines) + "\n"


#: An experiment's keys in tools/findings.yaml: those it must give, and those it may.
REQUIRED_KEYS = {"key", "title", "kind", "question", "predictions", "claims_from", "results", "locate", "conclude",
                 "not_conclude"}
OPTIONAL_KEYS = {"claims", "primary", "premises"}
PREDICTION_SOURCES = {"paper", "testbed", "config"}


def load(path: Path = EXPERIMENTS) -> list[dict]:
    """The experiments of ``path``, each checked for its keys (a misspelt key would be ignored silently otherwise)."""
    experiments = yaml.safe_load(Path(path).read_text())["experiments"]
    for number, experiment in enumerate(experiments, 1):
        name = f"{path}, experiment {number} ({experiment.get('key', 'no key')})"
        missing, unknown = REQUIRED_KEYS - set(experiment), set(experiment) - REQUIRED_KEYS - OPTIONAL_KEYS
        if missing or unknown:
            raise FindingsError(f"{name}: missing keys {sorted(missing)}, unknown keys {sorted(unknown)}")
        if experiment["predictions"].get("source") not in PREDICTION_SOURCES:
            raise FindingsError(f"{name}: predictions.source = {experiment['predictions'].get('source')!r}; "
                                f"one of {sorted(PREDICTION_SOURCES)}")
    return experiments


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--doc", type=Path, default=ROOT / "docs" / "findings.md", help="the findings page")
    parser.add_argument("--readme", type=Path, default=ROOT / "README.md", help="the README holding the summary")
    args = parser.parse_args(argv)
    collected = collect(ROOT, load())
    page, summary = render_page(collected), render_summary(collected)
    replace_block(args.doc, "findings", page)
    replace_block(args.readme, "findings-summary", summary)
    print(summary)


if __name__ == "__main__":
    main()
