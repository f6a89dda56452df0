"""Boxed answers in LaTeX text (ead.data.answers): the last box's span and content, nested braces, the brace-less
form, \\fbox, and an unclosed last box read as no box."""

import pytest

from ead.data.answers import extract_boxed, last_boxed_span


@pytest.mark.parametrize(("text", "content"), [
    ("so \\boxed{7}", "7"),
    ("\\boxed{1} then \\boxed{ \\frac{1}{2} }.", "\\frac{1}{2}"),  # the last box, stripped, nested braces kept
    ("\\boxed 7 and done", "7"),  # no braces: the next token
    ("an \\fbox{x+1}", "x+1"),
    ("\\boxed{1} \\fbox{2}", "2"),
    ("\\boxed{{a}{b}}", "{a}{b}"),
    ("no box here", None),
    ("\\boxed{3} and an unclosed \\boxed{4", None),  # an unclosed last box is not a guess at an earlier one
    ("\\boxed", None),
    (None, None),
])
def test_extract_boxed_reads_the_last_box(text, content):
    assert extract_boxed(text) == content


def test_the_span_covers_the_command_and_its_content():
    text = "answer: \\boxed{12} ok"
    start, content_start, content_end, end = last_boxed_span(text)
    assert text[start:end] == "\\boxed{12}" and text[content_start:content_end] == "12"
    text = "x \\boxed  9$"
    start, content_start, content_end, end = last_boxed_span(text)
    assert text[content_start:content_end] == "9" and end == content_end
    huge = "\\boxed{" + "{" * 10_000 + "1" + "}" * 10_000 + "}"
    assert extract_boxed(huge) == "{" * 10_000 + "1" + "}" * 10_000
