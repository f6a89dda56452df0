"""The strategy task (ead.data.strategy), checked against its rules rather than its code: a key of ``+ - * /`` calls for
``add`` / ``sub`` / ``dub`` / ``rot``; the one response that scores 1 names that strategy on its first line and writes
its exact output on the second. The strategies are re-implemented here from their definitions (digit tables and
index arithmetic), and every verdict of the verifier and the grader is compared with a brute-force checker that
knows only the rules. Also: the tokenizer covers the task, splits are disjoint and seeded, the biased teacher is
what its config says, and the positive-control overlay configures an SFT from it."""

from __future__ import annotations

import itertools
import random
import string
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from ead.data.strategy import (
    FAILURE_TYPES,
    FAVOURITE,
    ROLES,
    StrategyProblem,
    failure_type,
    generate_strategy,
    parse_problem,
    response_roles,
    teacher_responses,
    verify_response,
)
from ead.models.tiny_policy import ALPHABET, build_tokenizer, encode_strict
from ead.rewards import grade

# The rules, written out independently of the module.
RULE_KEYS = {"+": "add", "-": "sub", "*": "dub", "/": "rot"}


DIGIT_TABLES = {"add": "1234567890", "sub": "9012345678", "dub": "0246802468"}  # image of 0123456789


def naive_execute(name: str, digits: str) -> str:
    """A strategy by its definition: a digit table for add / sub / dub, the index one place on for rot."""
    if name == "rot":
        return "".join(digits[(i + 1) % len(digits)] for i in range(len(digits)))
    return "".join(DIGIT_TABLES[name]["0123456789".index(d)] for d in digits)


def brute_force_score(response: str, key: str, digits: str) -> int:
    """1 iff the response, whitespace around it and its two lines aside, is the key's strategy and its output: the
    only candidate of the four strategies x their outputs that the rules reward."""
    candidates = {(name, naive_execute(name, digits)) for name in RULE_KEYS.values()}
    lines = response.strip().split("\n")
    if len(lines) != 2:
        return 0
    said = (lines[0].strip(), lines[1].strip())
    return int(said in candidates and said == (RULE_KEYS[key], naive_execute(RULE_KEYS[key], digits)))


@pytest.fixture(scope="module")
def table():
    return generate_strategy(seed=5, n_train=400, n_val=60, n_test=60, n_digits=16)


def test_every_row_is_its_key_strategy_executed_by_the_rules(table):
    assert Counter(table["split"]) == {"train": 400, "val": 60, "test": 60}
    for row in table.itertuples():
        assert row.question == f"{row.key} {row.digits}\n" and row.answer == f"{row.key} {row.digits}"
        assert len(row.digits) == 16 and set(row.digits) <= set(string.digits)
        assert row.strategy == RULE_KEYS[row.key]
        assert row.solution == f"{row.strategy}\n{naive_execute(row.strategy, row.digits)}"
        assert row.source == "strategy" and row.id.startswith(f"strategy/s5/{row.split}/")
    assert set(table["key"]) == set(RULE_KEYS)  # every key is drawn (each ~1/4 of 520 rows)
    assert min(Counter(table["key"]).values()) > 80


def test_response_length_is_the_task_size():
    """The name, a newline and one output digit per input digit: 20 characters at the default 16 digits."""
    solutions = generate_strategy(seed=0, n_train=20, n_val=2, n_test=2)["solution"]
    assert set(solutions.str.len()) == {20}


def test_strategies_are_distinct_on_generic_inputs(table):
    """On an input with varied digits no two strategies write the same output, so a right-looking output cannot hide
    a wrong strategy (the name decides anyway)."""
    for digits in table["digits"][:50]:
        outputs = [naive_execute(name, digits) for name in RULE_KEYS.values()]
        assert len(set(outputs)) == 4


def test_the_verifier_accepts_exactly_the_right_strategy_exactly_executed(table):
    for row in table.head(40).itertuples():
        problem = parse_problem(row.question)
        right = RULE_KEYS[row.key]
        output = naive_execute(right, row.digits)
        for text in (f"{right}\n{output}", f"  {right} \n {output}\n", f"\n{right}\n{output}  "):
            check = verify_response(text, problem)
            assert check.valid and check.error == "" and brute_force_score(text, row.key, row.digits) == 1
            assert grade(text, row.answer, "strategy").score == 1.0
        for other in set(RULE_KEYS.values()) - {right}:  # a wrong strategy, executed exactly
            text = f"{other}\n{naive_execute(other, row.digits)}"
            check = verify_response(text, problem)
            assert not check.valid and check.error == "strategy" and check.strategy == other
            assert grade(text, row.answer, "strategy").status == "wrong"
            text = f"{other}\n{output}"  # a wrong name over the right output
            assert verify_response(text, problem).error == "strategy"
        for position in range(len(output)):  # the right strategy with one digit wrong, at every place
            for digit in set(string.digits) - {output[position]}:
                text = f"{right}\n{output[:position]}{digit}{output[position + 1:]}"
                check = verify_response(text, problem)
                assert not check.valid and check.error == "execution"
        for cut in range(len(output)):  # truncated output: an execution error, or no output line at all
            check = verify_response(f"{right}\n{output[:cut]}", problem)
            assert not check.valid and check.error == ("execution" if cut else "format")
        assert verify_response(f"{right}\n{output}7", problem).error == "execution"  # one digit too many
        for text in (f"{right}\n{output}\n\\boxed{{1}}", f"{right}{output}", f"{right[:2]}\n{output}", output, "",
                     f"{right}\n{output[:4]} {output[4:]}", f"{right}\n{output[:-1]}x"):
            check = verify_response(text, problem)
            assert not check.valid and check.error == "format" and brute_force_score(text, row.key, row.digits) == 0
            assert grade(text, row.answer, "strategy").status == "no_answer"


def test_the_verifier_agrees_with_the_brute_force_checker_on_random_edits(table):
    rng = random.Random(0)
    alphabet = "0123456789adsubrot\n +-*/x"
    for row in table.itertuples():
        problem = parse_problem(row.answer)
        for _ in range(30):
            text = list(rng.choice([row.solution, f"{rng.choice(list(RULE_KEYS.values()))}\n{row.digits}"]))
            for _ in range(rng.randint(0, 2)):  # 0-2 random edits: replace, insert or delete a character
                position = rng.randrange(len(text) + 1)
                kind = rng.choice(["replace", "insert", "delete"])
                if kind == "insert":
                    text.insert(position, rng.choice(alphabet))
                elif text and position < len(text):
                    if kind == "replace":
                        text[position] = rng.choice(alphabet)
                    else:
                        del text[position]
            text = "".join(text)
            assert int(verify_response(text, problem).valid) == brute_force_score(text, row.key, row.digits), text
            assert grade(text, row.answer, "strategy").score == brute_force_score(text, row.key, row.digits)


def test_the_verifier_never_raises():
    problem = parse_problem("+ 1234")
    for text in (None, 5, "x" * 5000, "add\n" + "1" * 5000, "\x00", "add\n2345\n"):
        assert verify_response(text, problem).valid in (True, False)


def test_problems_parse_from_the_prompt_or_the_reference_and_nothing_else():
    assert parse_problem("* 0123\n") == parse_problem("* 0123") == parse_problem("  *\t0123  ")
    for text in ("x 0123", "* ", "*0123", "Numbers: 1 2\nTarget: 3", "+ 12a"):
        with pytest.raises(ValueError, match="Not a strategy problem"):
            parse_problem(text)


def test_every_character_of_the_task_is_in_the_tiny_policys_alphabet(table):
    tokenizer = build_tokenizer()
    texts = [*table["question"], *table["solution"], *teacher_responses(table["question"], 0.5, 0)]
    assert set("".join(texts)) <= set(ALPHABET)
    assert set("".join(RULE_KEYS) + "".join(RULE_KEYS.values()) + string.digits + " \n") <= set(ALPHABET)
    for text in texts[:50]:
        ids = encode_strict(tokenizer, text, add_special_tokens=False)
        assert len(ids) == len(text) and tokenizer.decode(ids) == text  # one token per character


def test_splits_never_share_an_input_and_the_test_split_does_not_move_with_n_train(table):
    by_split = {name: set(rows["digits"]) for name, rows in table.groupby("split")}
    assert sum(map(len, by_split.values())) == len(table)  # an input appears once in the table
    assert not (by_split["train"] & by_split["val"]) and not (by_split["train"] & by_split["test"])
    assert not (by_split["val"] & by_split["test"])
    bigger = generate_strategy(seed=5, n_train=800, n_val=60, n_test=60)
    pd.testing.assert_frame_equal(bigger[bigger["split"] == "test"].reset_index(drop=True),
                                  table[table["split"] == "test"].reset_index(drop=True))


def test_generation_is_deterministic_by_seed(table):
    pd.testing.assert_frame_equal(generate_strategy(seed=5, n_train=400, n_val=60, n_test=60), table)
    other = generate_strategy(seed=6, n_train=400, n_val=60, n_test=60)
    assert not set(other["digits"]) & set(table["digits"])


def test_the_biased_teacher_favours_one_strategy_whatever_the_key_and_executes_exactly(table):
    questions = list(generate_strategy(seed=2, n_train=4000, n_val=1, n_test=1)["question"])
    assert teacher_responses(questions, 0.0, 1) == [
        f"{RULE_KEYS[q[0]]}\n{naive_execute(RULE_KEYS[q[0]], q[2:-1])}" for q in questions]
    assert {response.split("\n")[0] for response in teacher_responses(questions, 1.0, 1)} == {FAVOURITE}
    responses = teacher_responses(questions, 0.9, 1)
    assert responses == teacher_responses(questions, 0.9, 1) and responses != teacher_responses(questions, 0.9, 2)
    off_key = 0
    for question, response in zip(questions, responses):
        key, digits = question[0], question[2:-1]
        name, output = response.split("\n")
        assert output == naive_execute(name, digits)  # always exactly executed
        assert name in (FAVOURITE, RULE_KEYS[key])  # the favourite, or else the key's
        off_key += RULE_KEYS[key] != FAVOURITE
    favoured = sum(response.startswith(FAVOURITE) for question, response in zip(questions, responses)
                   if RULE_KEYS[question[0]] != FAVOURITE)
    assert abs(favoured / off_key - 0.9) < 0.03  # ~3000 draws: 6 standard deviations
    with pytest.raises(ValueError, match=r"teacher bias must be a number in \[0, 1\]"):
        teacher_responses(questions, 1.5, 0)


def test_a_noisy_teacher_errs_on_each_output_digit_at_its_rate_and_names_what_the_exact_one_names():
    questions = list(generate_strategy(seed=2, n_train=4000, n_val=1, n_test=1)["question"])
    exact = teacher_responses(questions, 0.9, 1)
    assert teacher_responses(questions, 0.9, 1, execution_noise=0.0) == exact  # no noise: the same draws as before
    noisy = teacher_responses(questions, 0.9, 1, execution_noise=0.05)
    assert noisy == teacher_responses(questions, 0.9, 1, execution_noise=0.05)
    wrong = digits = 0
    for question, response in zip(questions, noisy):
        name, output = response.split("\n")
        truth = naive_execute(name, question[2:-1])
        assert name in (FAVOURITE, RULE_KEYS[question[0]]) and len(output) == len(truth) and output.isdigit()
        wrong += sum(a != b for a, b in zip(output, truth))  # a noisy digit is never the right one
        digits += len(truth)
    assert abs(wrong / digits - 0.05) < 0.0035  # ~64000 digits: 4 standard deviations
    assert teacher_responses(questions[:50], np.float32(0.9), 1, np.float64(0.05)) == teacher_responses(
        questions[:50], float(np.float32(0.9)), 1, 0.05)  # numpy scalars are numbers
    for bad in (-0.1, 1.5, float("nan"), "0.1", True):
        with pytest.raises(ValueError, match="teacher execution_noise must be a number"):
            teacher_responses(questions[:2], 0.9, 1, execution_noise=bad)


def test_response_roles_mark_the_fork_and_the_execution():
    assert response_roles("dub\n8842") == ["strategy"] * 3 + ["syntax"] + ["execution"] * 4
    assert response_roles(" rot \n12") == ["syntax", *["strategy"] * 3, "syntax", "syntax", "execution", "execution"]
    assert response_roles("dug\n88\nx") == ["other"] * 3 + ["syntax"] + ["execution"] * 2 + ["syntax", "other"]
    for text in ("", "add", "add\n\n", "a\nb\nc"):
        assert len(response_roles(text)) == len(text) and set(response_roles(text)) <= set(ROLES)


def test_sft_trains_on_the_teacher_only_for_a_strategy_table(table):
    from ead.models.sft import training_solutions

    train = table[table["split"] == "train"]
    assert training_solutions(train, "random", "t.parquet") == list(train["solution"])
    assert training_solutions(train, "random", "t.parquet", 0.9, 4) == teacher_responses(train["question"], 0.9, 4)
    with pytest.raises(SystemExit, match=r"t\.parquet: a teacher bias needs a task with a biased teacher and reference "
                                         r"random, got task 'countdown' and reference 'random'"):
        training_solutions(train.assign(source="countdown"), "random", "t.parquet", 0.9, 4)
    with pytest.raises(SystemExit, match=r"got task 'strategy' and reference 'canonical'"):
        training_solutions(train, "canonical", "t.parquet", 0.9, 4)
    with pytest.raises(SystemExit, match=r"t\.parquet: SFT needs one task of \['arithmetic', 'countdown', "
                                         r"'strategy'\] in the table's 'source' column, found \[\]"):
        training_solutions(train.drop(columns="source"), "random", "t.parquet")


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
