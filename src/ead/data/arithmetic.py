"""Arithmetic: evaluate a bracketed expression step by step, a synthetic task with one numeric answer.

Countdown's answers are equation chains, many of them right for one problem, so its samples cannot be majority-voted.
This task keeps countdown's response format and alphabet (the tiny policy's tokenizer) but has a unique answer, the
expression's value, for the Maj@N analysis (paper Fig. 9)::

    ((7-4)*(2+13))-5           <- prompt: the expression (every operation but the last bracketed) and a newline
    2+13=15                    <- response: one reduction per line, each after the reductions of its operands
    7-4=3
    3*15=45
    45-5=40
    \\boxed{40}

Where two operations do not depend on each other (here 7-4 and 2+13) the policy chooses which to write first: the
task forks in its path but not in its answer, so samples that get the arithmetic right agree. Numbers are 1-20 with
``+ - *``; every intermediate value stays in [0, ``max_value``] (a subtraction never goes negative), so the work is
the policy's arithmetic on small numbers. Four-number expressions (probability ``p_four_numbers``) are balanced,
``(a.b).(c.d)``, with probability ``p_balanced``: the shape with two independent first reductions.

Reward: the final ``\\boxed{}`` equals the value (task ``arithmetic``, graded by math-verify as a math answer; the
chain itself is not checked, as for GSM8K). Splits come from a seeded hash of the expression (80/10/10), as countdown.

Run: ``python -m ead.data.build --dataset arithmetic --out results/data/arithmetic.parquet --seed 0``.
"""

from __future__ import annotations

import random
from math import comb
from typing import TYPE_CHECKING

from ead.data.splits import draw_table
from ead.data.tasks import Task

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["evaluate", "generate_arithmetic", "reduction_orders", "render_expression", "render_solution"]

MIN_NUMBER, MAX_NUMBER = 1, 20
OPERATORS = ("+", "-", "*")


def evaluate(expr) -> int:
    """The value of an expression tree: an int, or (op, left, right)."""
    if isinstance(expr, int):
        return expr
    op, left, right = expr
    a, b = evaluate(left), evaluate(right)
    return {"+": a + b, "-": a - b, "*": a * b}[op]


def render_expression(expr, outermost: bool = True) -> str:
    """The prompt's expression: every operation bracketed except the outermost one."""
    if isinstance(expr, int):
        return str(expr)
    op, left, right = expr
    text = f"{render_expression(left, False)}{op}{render_expression(right, False)}"
    return text if outermost else f"({text})"


def _operations(expr, path=()) -> list[tuple]:
    """Every operation's path from the root (a tuple of 1 = left, 2 = right), children before parents."""
    if isinstance(expr, int):
        return []
    return [*_operations(expr[1], path + (1,)), *_operations(expr[2], path + (2,)), path]


def reduction_orders(expr) -> int:
    """How many orders of reductions the task allows (orders of operations with every operation after its operands'),
    i.e. how many distinct reference chains a problem has."""
    if isinstance(expr, int):
        return 1
    _, left, right = expr
    sizes = len(_operations(left)), len(_operations(right))
    return comb(sum(sizes), sizes[0]) * reduction_orders(left) * reduction_orders(right)


def render_solution(expr, rng: random.Random) -> str:
    """A reference chain: the operations in a random order that respects their dependencies, then the boxed value.

    Each order allowed by the task is equally likely: an order is one interleaving of the two subtrees' orders at every
    operation, so uniform interleavings of uniform sub-orders are uniform (picking uniformly among the ready operations
    at each line would not be).
    """
    lines: list[str] = []

    def order(node) -> list:
        """A uniformly random dependency-respecting order of the node's operations, as (a, op, b, value) lines."""
        if isinstance(node, int):
            return []
        op, left, right = node
        first, second = order(left), order(right)
        slots = sorted(rng.sample(range(len(first) + len(second)), len(first)))
        merged, i, j = [], 0, 0
        for position in range(len(first) + len(second)):
            if i < len(first) and position == slots[i]:
                merged.append(first[i])
                i += 1
            else:
                merged.append(second[j])
                j += 1
        return [*merged, (evaluate(left), op, evaluate(right), evaluate(node))]

    for a, op, b, value in order(expr):
        lines.append(f"{a}{op}{b}={value}")
    return "\n".join([*lines, f"\\boxed{{{evaluate(expr)}}}"])


def _values_ok(expr, max_value: int) -> bool:
    """Every intermediate value (and the result) in [0, max_value]."""
    if isinstance(expr, int):
        return True
    return 0 <= evaluate(expr) <= max_value and _values_ok(expr[1], max_value) and _values_ok(expr[2], max_value)


def _random_tree(numbers: list[int], rng: random.Random, balanced: bool):
    """A random binary expression tree over ``numbers`` in order, with random operators."""
    if len(numbers) == 1:
        return numbers[0]
    split = len(numbers) // 2 if balanced else rng.choice([1, len(numbers) - 1])
    left = _random_tree(numbers[:split], rng, balanced)
    right = _random_tree(numbers[split:], rng, balanced)
    return (rng.choice(OPERATORS), left, right)


def generate_arithmetic(seed: int = 0, n_train: int = 20000, n_val: int = 500, n_test: int = 1000,
                        p_four_numbers: float = 0.5, p_balanced: float = 0.5, max_value: int = 99) -> pd.DataFrame:
    """The three splits as one tidy table. Columns: id, question, answer (the value, the grader's reference), source,
    split, expression, value, solution (a reference chain), num_numbers, num_orders (reduction orders allowed)."""
    wanted = {"train": n_train, "val": n_val, "test": n_test}
    if not (0 <= p_four_numbers <= 1 and 0 <= p_balanced <= 1) or max_value < MAX_NUMBER:
        raise ValueError(f"p_four_numbers {p_four_numbers} and p_balanced {p_balanced} must be in [0, 1] and "
                         f"max_value {max_value} >= {MAX_NUMBER}")
    def draw(rng: random.Random):
        count = 4 if rng.random() < p_four_numbers else 3
        numbers = [rng.randint(MIN_NUMBER, MAX_NUMBER) for _ in range(count)]
        tree = _random_tree(numbers, rng, balanced=count == 4 and rng.random() < p_balanced)
        solution = render_solution(tree, rng)  # drawn before the checks: the stream does not depend on them
        if not _values_ok(tree, max_value):
            return None
        expression, value = render_expression(tree), evaluate(tree)
        return expression, {"question": f"{expression}\n", "answer": str(value), "expression": expression,
                            "value": value, "solution": solution, "num_numbers": count,
                            "num_orders": reduction_orders(tree)}

    return draw_table("arithmetic", seed, wanted, draw)


#: One integer answer in \boxed{}: graded as math, like GSM8K.
TASK = Task(name="arithmetic", grading="math", generate=generate_arithmetic,
            settings=("seed", "n_train", "n_val", "n_test", "p_four_numbers", "p_balanced", "max_value"))
