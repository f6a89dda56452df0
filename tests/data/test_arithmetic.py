"""The arithmetic task (ead.data.arithmetic): one numeric answer per expression, reference chains that reduce one
operation per line in any dependency-respecting order (each order equally likely), disjoint seeded splits, and its
grading as a math answer."""

from __future__ import annotations

import itertools
import random
import re
from collections import Counter

import pytest

from ead.data.arithmetic import evaluate, generate_arithmetic, reduction_orders, render_expression, render_solution
from ead.models.tiny_policy import ALPHABET
from ead.rewards import grade

BALANCED = ("*", ("-", 7, 4), ("+", 2, 13))  # (7-4)*(2+13): two independent first reductions


def brute_force_orders(expr) -> int:
    """Count the orders of the operations in which every operation comes after its operands' operations."""
    operations = []

    def walk(node, parent):
        if isinstance(node, int):
            return
        index = len(operations)
        operations.append(parent)
        walk(node[1], index)
        walk(node[2], index)

    walk(expr, None)
    valid = 0
    for order in itertools.permutations(range(len(operations))):
        position = {op: i for i, op in enumerate(order)}
        valid += all(parent is None or position[parent] > position[op] for op, parent in enumerate(operations))
    return valid


@pytest.mark.parametrize("expr", [BALANCED, ("-", ("*", ("+", 1, 2), 3), 4), ("+", 5, ("*", 6, 7)),
                                  ("-", ("*", ("+", 1, 2), ("-", 9, 3)), ("+", 4, 4)), 3])
def test_reduction_orders_count_the_dependency_respecting_orders(expr):
    assert reduction_orders(expr) == brute_force_orders(expr)


def test_reference_chains_draw_every_allowed_order_equally_often():
    expr = ("-", ("*", ("+", 1, 2), ("-", 9, 3)), ("+", 4, 4))  # 4+4 anywhere before the root: 8 orders
    rng = random.Random(0)
    counts = Counter(render_solution(expr, rng) for _ in range(6000))
    assert len(counts) == reduction_orders(expr) == 8
    assert all(abs(c - 750) < 120 for c in counts.values())  # ~4.7 standard deviations of a binomial(6000, 1/8)


def test_solution_lines_are_correct_reductions_ending_in_the_boxed_value():
    table = generate_arithmetic(seed=3, n_train=300, n_val=50, n_test=50)
    for row in table.itertuples():
        assert eval(row.expression) == row.value == int(row.answer)  # noqa: S307  (our own generated expressions)
        *lines, boxed = row.solution.split("\n")
        assert boxed == f"\\boxed{{{row.value}}}"
        for line in lines:
            a, op, b, result = re.fullmatch(r"(\d+)([+\-*])(\d+)=(\d+)", line).groups()
            assert eval(f"{a}{op}{b}") == int(result) >= 0  # noqa: S307
        assert len(lines) == row.num_numbers - 1 and int(lines[-1].split("=")[1]) == row.value
        assert set(row.question + row.solution) <= set(ALPHABET)  # the tiny policy's tokenizer covers the task


def test_generation_is_deterministic_with_disjoint_splits_and_bounded_values():
    a = generate_arithmetic(seed=1, n_train=400, n_val=60, n_test=60, max_value=99)
    b = generate_arithmetic(seed=1, n_train=400, n_val=60, n_test=60, max_value=99)
    assert a.equals(b)
    by_split = {split: set(group["expression"]) for split, group in a.groupby("split")}
    assert sum(len(s) for s in by_split.values()) == len(a) and not set.intersection(*by_split.values())
    assert a["value"].between(0, 99).all()
    assert a.groupby("split").size().to_dict() == {"test": 60, "train": 400, "val": 60}
    assert (a["num_orders"] > 1).any()  # balanced four-number expressions fork in their first reduction


def test_render_expression_brackets_all_but_the_outermost_operation():
    assert render_expression(BALANCED) == "(7-4)*(2+13)"
    assert render_expression(("-", ("*", ("+", 1, 2), 3), 4)) == "((1+2)*3)-4"
    assert evaluate(BALANCED) == 45


def test_arithmetic_answers_are_graded_as_math_on_the_boxed_value():
    assert grade("7-4=3\n2+13=15\n3*15=45\n\\boxed{45}", "45", "arithmetic").score == 1.0
    assert grade("7-4=3\n2+13=15\n3*15=46\n\\boxed{46}", "45", "arithmetic").score == 0.0
    assert grade("7-4=3\n2+13=15", "45", "arithmetic").status in ("no_answer", "wrong")


def test_bad_generator_settings_are_errors_naming_them():
    with pytest.raises(ValueError, match="p_balanced 1.5"):
        generate_arithmetic(n_train=1, n_val=1, n_test=1, p_balanced=1.5)
