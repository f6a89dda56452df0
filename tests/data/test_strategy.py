"""The strategy task's failure classifier (ead.data.strategy.failure_type), checked against its rule written out here:
a response's first mistake, read line by line (the name line, then what follows it)."""

import itertools
import random

import pytest

from ead.data.strategy import FAILURE_TYPES, StrategyProblem, failure_type

NAMES = ("add", "sub", "dub", "rot")
KEY_NAME = {"+": "add", "-": "sub", "*": "dub", "/": "rot"}


def exact_output(name: str, digits: str) -> str:
    """Each strategy's output from the task's rules (not the module's code): +1, -1, x2 (all mod 10), rotate left."""
    if name == "rot":
        return digits[1:] + digits[0]
    step = {"add": lambda d: d + 1, "sub": lambda d: d - 1, "dub": lambda d: 2 * d}[name]
    return "".join(str(step(int(d)) % 10) for d in digits)


def first_mistake(response: str, key: str, digits: str) -> str:
    """The rule: ok for the key's name then its exact output (whitespace around the response and lines ignored);
    otherwise the first line decides: another strategy's name -> strategy, no name -> format, the key's -> execution."""
    lines = [line.strip() for line in response.strip().split("\n")]
    if lines == [KEY_NAME[key], exact_output(KEY_NAME[key], digits)]:
        return "ok"
    if lines[0] == KEY_NAME[key]:
        return "execution"
    return "strategy" if lines[0] in NAMES else "format"


def responses(digits: str, rng: random.Random):
    """Every name (and some non-names) with exact, corrupted, short, long, non-digit and multi-line outputs."""
    for name in (*NAMES, "ad", "adds", "", "xyz"):
        for output_name in NAMES:
            exact = exact_output(output_name, digits)
            position = rng.randrange(len(exact))
            wrong_digit = str((int(exact[position]) + rng.randrange(1, 10)) % 10)
            corrupted = exact[:position] + wrong_digit + exact[position + 1:]
            for output in (exact, corrupted, exact[:-1], exact + "7", exact[:3] + "a" + exact[4:], ""):
                yield f"{name}\n{output}"
                yield f"  {name} \n {output}\n"
                yield f"{name}\n{output}\n{output}"
        yield name


@pytest.mark.parametrize("key", sorted(KEY_NAME))
def test_failure_type_names_the_first_mistake_as_the_rule_does(key):
    rng = random.Random(hash(key) % 1000)
    seen = set()
    for _ in range(5):
        digits = "".join(rng.choice("0123456789") for _ in range(16))
        problem = StrategyProblem(key, digits)
        for response in responses(digits, rng):
            expected = first_mistake(response, key, digits)
            assert failure_type(response, problem) == expected, (response, key, digits)
            seen.add(expected)
    assert seen == {"ok", *FAILURE_TYPES}  # every kind is reached


def test_a_wrong_strategy_is_a_strategy_failure_whatever_its_execution():
    problem = StrategyProblem("*", "1234567890123456")
    for name, output in itertools.product(("add", "sub", "rot"), ("2345678901234567", "0000", "12x")):
        assert failure_type(f"{name}\n{output}", problem) == "strategy"
    assert failure_type("dub\n2468024680246802", problem) == "ok"
    assert failure_type("dub\n2468024680246803", problem) == "execution"


def test_failure_type_never_raises_on_odd_input():
    problem = StrategyProblem("+", "12")
    for response in (None, 3, "", "\n\n", "a" * 5000, "add\n" + "1" * 5000):
        assert failure_type(response, problem) in FAILURE_TYPES
