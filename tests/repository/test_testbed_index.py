"""TESTBED.md's index: the `## Index` table lists every dated entry (`## YYYY-MM-DD: title`) once, in the file's
order, and says which entries a later one superseded; each superseded entry carries a mark under its heading naming
the same later entry. The entries themselves are a dated record and are not rewritten: the index and the marks are
the only way a reader learns that an entry's result was replaced.

:func:`index_problems` returns every way a text breaks these rules, so the real file and planted broken copies go
through the same checker.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TESTBED = ROOT / "TESTBED.md"

ENTRY = re.compile(r"^## (\d{4}-\d\d-\d\d): (.+?)\s*$")
SUPERSEDED_STATUS = re.compile(r"superseded by (\d{4}-\d\d-\d\d): (.+)")
MARK = re.compile(r'^> \*\*Superseded\*\* by the entry "(\d{4}-\d\d-\d\d): (.+?)" below: \S.*\.$')
MARK_START = "> **Superseded** by"
COLUMNS = ["date", "entry", "question", "outcome", "status"]


def sections(text: str) -> list[tuple[str, list[str]]]:
    """The level-2 sections outside code fences: (heading text without '## ', the lines up to the next one)."""
    found: list[tuple[str, list[str]]] = []
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("## "):
            found.append((line[3:].strip(), []))
        elif found:
            found[-1][1].append(line)
    return found


def entries(text: str) -> list[tuple[str, str, list[str]]]:
    """The dated entries in file order: (date, title, body lines)."""
    return [(match.group(1), match.group(2), body) for heading, body in sections(text)
            if (match := ENTRY.match(f"## {heading}"))]


def index_rows(text: str) -> tuple[list[dict[str, str]], list[str]]:
    """The rows of the `## Index` section's table, and the problems met while reading it."""
    indexes = [body for heading, body in sections(text) if heading == "Index"]
    if len(indexes) != 1:
        return [], [f"expected one '## Index' section, found {len(indexes)}"]
    table = [line.strip() for line in indexes[0] if line.strip().startswith("|")]
    if len(table) < 2:
        return [], ["the Index section has no table"]
    header = [cell.strip() for cell in table[0].strip("|").split("|")]
    if header != COLUMNS:
        return [], [f"the Index table's columns are {header}, expected {COLUMNS}"]
    rows, problems = [], []
    for line in table[2:]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) != len(COLUMNS):
            problems.append(f"Index row with {len(cells)} cells instead of {len(COLUMNS)}: {line}")
            continue
        rows.append(dict(zip(COLUMNS, cells)))
    return rows, problems


def index_problems(text: str) -> list[str]:
    """Every way ``text`` (a TESTBED.md) breaks the index's rules; empty when it keeps them."""
    dated = entries(text)
    labels = [f"{date}: {title}" for date, title, _ in dated]
    problems = [f"two entries have the heading {label!r}" for label in sorted(set(labels))
                if labels.count(label) > 1]
    order = {label: position for position, label in enumerate(labels)}
    heading_names = [heading for heading, _ in sections(text)]
    if "Index" in heading_names and dated and heading_names.index("Index") > heading_names.index(labels[0]):
        problems.append("the Index section comes after the first entry")

    rows, reading = index_rows(text)
    problems += reading
    listed = [f"{row['date']}: {row['entry']}" for row in rows]
    for label in labels:
        if listed.count(label) != 1:
            problems.append(f"entry {label!r} is listed {listed.count(label)} times in the Index")
    for label in listed:
        if label not in order:
            problems.append(f"Index row {label!r} names no entry heading")
    if [label for label in listed if label in order] != [label for label in labels if label in listed]:
        problems.append("the Index rows are not in the file's order of the entries")

    status_of: dict[str, str | None] = {}  # entry -> the later entry the Index says superseded it, or None
    for label, row in zip(listed, rows):
        status = row["status"]
        if not row["question"] or not row["outcome"]:
            problems.append(f"Index row {label!r} has an empty question or outcome")
        if status == "current":
            status_of[label] = None
            continue
        match = SUPERSEDED_STATUS.fullmatch(status)
        if match is None:
            problems.append(f"Index row {label!r}: status {status!r} is neither 'current' nor "
                            "'superseded by <date>: <title>'")
            continue
        later = f"{match.group(1)}: {match.group(2)}"
        status_of[label] = later
        if later not in order:
            problems.append(f"Index row {label!r} is superseded by {later!r}, which is no entry")
        elif label in order and order[later] <= order[label]:
            problems.append(f"Index row {label!r} is superseded by {later!r}, which is not a later entry")

    for (_, _, body), label in zip(dated, labels):
        first = next((line.strip() for line in body if line.strip()), "")
        marked = [line for line in body if line.startswith(MARK_START)]
        later = status_of.get(label)
        if later is None:
            if marked:
                problems.append(f"entry {label!r} is marked superseded in its body but 'current' in the Index")
            continue
        mark = MARK.match(first)
        if mark is None:
            problems.append(f"entry {label!r} is superseded in the Index but its first line under the heading is not "
                            f"the '{MARK_START}' mark: {first[:80]!r}")
        elif f"{mark.group(1)}: {mark.group(2)}" != later:
            problems.append(f"entry {label!r}: its mark names {mark.group(1)}: {mark.group(2)!r}, the Index "
                            f"{later!r}")
        if len(marked) > 1:
            problems.append(f"entry {label!r} carries {len(marked)} superseded marks")
    return problems


def test_the_testbed_index_lists_every_entry_once_in_order_and_its_marks_agree():
    problems = index_problems(TESTBED.read_text())
    assert not problems, "\n".join(problems)


def test_the_index_has_a_row_for_each_of_the_44_dated_entries_and_some_are_superseded():
    text = TESTBED.read_text()
    rows, _ = index_rows(text)
    assert len(rows) == len(entries(text)) >= 44
    assert any(row["status"].startswith("superseded by ") for row in rows)


def _drop_row(text: str, title: str) -> str:
    return "\n".join(line for line in text.splitlines() if not (line.startswith("| ") and f"| {title} |" in line))


def _status(text: str, title: str, status: str) -> str:
    lines = text.splitlines()
    for number, line in enumerate(lines):
        if line.startswith("| ") and f"| {title} |" in line:
            lines[number] = line[:line.rstrip().rstrip("|").rstrip().rfind("|")] + f"| {status} |"
            return "\n".join(lines)
    raise AssertionError(f"no Index row for {title!r}")


def _drop_marks(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.startswith(MARK_START))


FIRST = "the default profile's tiny1m, before any change to the task"
SECOND = "sharpened copies of tiny1m, with EAD compressed to countdown's response length"
SUPERSEDED = "the default profile within its 60 minutes: not yet"


@pytest.mark.parametrize(("plant", "expected"), [
    (lambda text: _drop_row(text, SECOND), "is listed 0 times in the Index"),
    (lambda text: _status(text, SECOND, f"superseded by 2026-11-23: {FIRST}"), "which is not a later entry"),
    (lambda text: _status(text, FIRST, "superseded by 2026-11-23: a run that never happened"), "which is no entry"),
    (lambda text: _status(text, FIRST, "replaced"), "is neither 'current' nor"),
    (lambda text: _status(text, SUPERSEDED, "current"), "marked superseded in its body but 'current'"),
    (_drop_marks, "its first line under the heading is not"),
    (lambda text: text.replace("\n## 2026-11-23: the first run of the RL grid on the testbed\n",
                               "\n## 2026-11-23: the first run of the RL grid\n"), "names no entry heading"),
], ids=["missing-row", "superseded-by-earlier", "superseded-by-unknown", "bad-status", "mark-but-current",
        "status-but-no-mark", "renamed-heading"])
def test_a_planted_break_of_the_index_is_reported(tmp_path, plant, expected):
    planted = tmp_path / "TESTBED.md"
    planted.write_text(plant(TESTBED.read_text()))
    problems = index_problems(planted.read_text())
    assert any(expected in problem for problem in problems), problems


def test_rows_out_of_order_and_a_mark_naming_another_entry_are_reported():
    text = "\n".join([
        "# Log", "", "## Index", "", "| date | entry | question | outcome | status |", "|---|---|---|---|---|",
        "| 2026-01-02 | b | q | o | current |",
        "| 2026-01-01 | a | q | o | superseded by 2026-01-02: b |", "",
        "## 2026-01-01: a", "", '> **Superseded** by the entry "2026-01-01: a" below: measured again.', "", "text",
        "", "## 2026-01-02: b", "", "text", ""])
    problems = index_problems(text)
    assert "the Index rows are not in the file's order of the entries" in problems
    assert any("its mark names 2026-01-01: 'a'" in problem for problem in problems), problems
    fixed = text.replace("| 2026-01-02 | b | q | o | current |\n", "").replace(
        "superseded by 2026-01-02: b |\n", "superseded by 2026-01-02: b |\n| 2026-01-02 | b | q | o | current |\n")
    assert index_problems(fixed.replace('entry "2026-01-01: a"', 'entry "2026-01-02: b"')) == []
