"""The countdown task (ead.data.countdown): the generator (determinism, disjoint splits, several solutions), the
solver, the strict chain verifier, failure types and token roles."""

from __future__ import annotations

import pandas as pd
import pytest

from ead.data import countdown
from ead.data.countdown import ROLES, CountdownProblem, parse_problem, response_roles, verify_chain


def test_countdown_is_deterministic_and_splits_are_disjoint():
    first = countdown.generate_countdown(seed=3, n_train=120, n_val=15, n_test=15)
    again = countdown.generate_countdown(seed=3, n_train=120, n_val=15, n_test=15)
    pd.testing.assert_frame_equal(first, again)
    other_seed = countdown.generate_countdown(seed=4, n_train=120, n_val=15, n_test=15)
    assert not first["answer"].equals(other_seed["answer"])
    assert first.groupby("split").size().to_dict() == {"test": 15, "train": 120, "val": 15}
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


def roles_of(text):
    """Run-length view of response_roles: [(characters, role), ...]."""
    runs = []
    for char, role in zip(text, response_roles(text)):
        if runs and runs[-1][1] == role:
            runs[-1] = (runs[-1][0] + char, role)
        else:
            runs.append((char, role))
    return runs


def test_roles_of_a_hand_written_chain():
    text = "7*5=35\n35+12=47\n\\boxed{41}"
    assert roles_of(text) == [
        ("7", "operand"), ("*", "operator"), ("5", "operand"), ("=", "syntax"), ("35", "result"), ("\n", "syntax"),
        ("35", "operand"), ("+", "operator"), ("12", "operand"), ("=", "syntax"), ("47", "result"),
        ("\n\\boxed{", "syntax"), ("41", "answer"), ("}", "syntax")]
    assert len(response_roles(text)) == len(text) and set(response_roles(text)) <= set(ROLES)


def test_roles_follow_the_verifier_s_forms_and_mark_malformed_lines():
    # spaces and the x / ÷ operators the verifier accepts; a wrong equation still has its roles
    assert roles_of("12 x 3 = 37") == [("12", "operand"), (" ", "syntax"), ("x", "operator"), (" ", "syntax"),
                                       ("3", "operand"), (" = ", "syntax"), ("37", "result")]
    assert roles_of("20÷4=5") == [("20", "operand"), ("÷", "operator"), ("4", "operand"), ("=", "syntax"),
                                  ("5", "result")]
    # a line that is neither an equation nor the box is "other" as a whole; blank lines are newlines only
    assert roles_of("9-=2\n\n\\boxed{}") == [("9-=2", "other"), ("\n\n\\boxed{}", "syntax")]
    assert roles_of("\\boxed{ 7 }.") == [("\\boxed{ ", "syntax"), ("7", "answer"), (" }.", "syntax")]
    assert response_roles("") == [] and roles_of("\n3+4=7") == [("\n", "syntax"), ("3", "operand"),
                                                               ("+", "operator"), ("4", "operand"), ("=", "syntax"),
                                                               ("7", "result")]
