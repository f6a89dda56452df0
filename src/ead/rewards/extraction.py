"""What the grader reads from a response and a reference, before anything is compared.

* Math: the text handed to math-verify. The response is cut to its last ``TAIL_CHARS`` characters (the
  final answer is at the end; this bounds the regex work, so a 1 MB response costs what an 8 KB one does),
  and with ``last_boxed_only`` further to its last ``\\boxed{...}`` if the tail has one. math-verify then
  extracts with its own default configs (:func:`math_verify_targets`: ``LatexExtractionConfig()`` then
  ``ExprExtractionConfig()``, any-match with the first-match string fallback). A bare reference answer
  (no math delimiters) is wrapped as ``$ref$``, math-verify's documented gold form; a reference that already
  has ``$``, ``\\[``, ``\\(`` or ``\\boxed`` is parsed as it is, all of its boxes included.
* MMLU: the chosen letter (:func:`extract_choice`).
* A task with its own verifier (countdown, strategy): nothing here; the task's ``verify`` reads the response
  (:class:`ead.data.tasks.Task`).

The math-verify calls (:func:`parse_text`, :func:`canonical_key`) run inside the grader's worker subprocess
(:mod:`ead.rewards.worker`), never in the calling process: they have no time limit of their own there.
math_verify and sympy are imported inside those functions so the calling process never loads them.

Run: ``python -c "from ead.rewards.extraction import prediction_text as p; print(p('so \\\\boxed{7}', True))"``.
"""

from __future__ import annotations

import re

from ead.data.answers import extract_boxed, last_boxed_span

__all__ = [
    "MAX_KEY_CHARS",
    "MAX_REFERENCE_CHARS",
    "TAIL_CHARS",
    "canonical_key",
    "extract_boxed",
    "extract_choice",
    "fallback_key",
    "gold_text",
    "math_verify_targets",
    "parse_text",
    "prediction_text",
]

# The final answer sits at the end of a response, but models often ramble on after it (one of math-verify's own
# real cases repeats a note for 3.8 KB after "The final answer is $20\%$"). math-verify's regexes cost ~0.3 ms per
# KB, so 8 KB is cheap (a 1 MB response costs what an 8 KB one does), while the worst case, an 8 KB arithmetic
# expression that sympy must build, still finishes inside the 3 s limit (~1.7 s).
TAIL_CHARS = 8192
MAX_REFERENCE_CHARS = 4096
MAX_KEY_CHARS = 512  # vote keys are truncated to this (they are compared as strings)

# An unescaped "$", "\[", "\(" or a box: the reference already says where its math is.
_DELIMITED_RE = re.compile(r"(?<!\\)\$|\\\[|\\\(|\\boxed|\\fbox")


def response_tail(response: str) -> str:
    """The last ``TAIL_CHARS`` characters: all the grader ever looks at in a math or MMLU response."""
    return response[-TAIL_CHARS:]


def prediction_text(response: str, last_boxed_only: bool) -> str | None:
    """The text math-verify extracts the predicted answer from; None if there is nothing to read.

    With ``last_boxed_only`` and a closed box in the tail, only that ``\\boxed{...}`` (so a response that
    boxes several candidates, or whose last box does not parse, is graded on its last box alone, never on
    an earlier one). Otherwise the whole tail, where math-verify looks for boxes, "final answer is ...",
    ``$...$`` and plain numbers itself.
    """
    tail = response_tail(response)
    if not tail.strip():
        return None
    if last_boxed_only:
        span = last_boxed_span(tail)
        if span is not None:
            return tail[span[0]:span[3]]
    return tail


def gold_text(reference: str) -> str:
    """The reference as math-verify parses it: ``$ref$`` for a bare answer, else unchanged.

    Wrapping matters: math-verify finds LaTeX inside math delimiters, so a bare ``\\text{Evelyn}`` or
    ``(3,\\frac{\\pi}{2})`` parses to nothing, while ``$\\text{Evelyn}$`` parses; ``$20\\%$`` parses to 20.
    """
    reference = reference.strip()
    if len(reference) > MAX_REFERENCE_CHARS:
        raise ValueError(f"Reference longer than {MAX_REFERENCE_CHARS} characters: {reference[:80]!r}...")
    return reference if _DELIMITED_RE.search(reference) else f"${reference}$"


# ------------------------------------------------------------------------------------------- MMLU letters


def extract_choice(response: str, letters: str = "ABCD") -> str | None:
    """The multiple-choice letter a response picked, or None.

    Accepted, in this priority: ``\\boxed{B}`` (also ``\\boxed{\\text{(B)}}``), "answer is (B)" / "Answer: B",
    "(B)", "B)" at a word start, or a response that is only the letter.
    """
    if not isinstance(response, str):
        return None
    group = f"[{letters}]"
    tail = response_tail(response)
    boxed = extract_boxed(tail)
    if boxed is not None:
        match = re.match(rf"^\s*(?:\\text\{{|\\mathrm\{{|\\textbf\{{)?\s*\(?({group})\)?(?![A-Za-z])", boxed)
        if match:
            return match.group(1)
    patterns = (
        rf"(?i:answer)(?:\s+is)?\s*[:：]?\s*(?i:option\s*)?[\(\[]?\**({group})\b",
        rf"\(({group})\)",
        rf"(?m)(?:^|\s)({group})\)",
    )
    for pattern in patterns:
        matches = re.findall(pattern, tail)
        if matches:
            return matches[-1]
    bare = re.fullmatch(rf"\s*\**({group})[.:]?\**\s*", tail)
    return bare.group(1) if bare else None


# ------------------------------------------------------------------------------------------- math-verify
# Everything below runs in the worker subprocess.


def math_verify_targets() -> tuple:
    """math-verify's default extraction targets, spelled out: LaTeX (boxed priority 50) then plain expressions."""
    from math_verify import ExprExtractionConfig, LatexExtractionConfig

    return (LatexExtractionConfig(), ExprExtractionConfig())


def parse_text(text: str) -> list:
    """``math_verify.parse`` with its defaults, without its signal-based timeout (the worker enforces one)."""
    from math_verify import parse

    return parse(text, extraction_config=math_verify_targets(), fallback_mode="first_match",
                 extraction_mode="any_match", parsing_timeout=None)


def canonical_key(parsed: list) -> str | None:
    """A majority-vote key for a parse: equal keys for the common equivalent spellings.

    The canonical sympy string of the first parsed expression (floats made rational, ``x = 7`` -> ``7``,
    polynomials expanded); if only math-verify's string fallback exists, that string. None if nothing.
    """
    import sympy

    expressions = [item for item in parsed if isinstance(item, (sympy.Basic, sympy.MatrixBase))]
    if not expressions:
        strings = [item for item in parsed if isinstance(item, str) and item.strip()]
        return strings[0][:MAX_KEY_CHARS] if strings else None
    expr = expressions[0]
    # "x = 7" votes with "7": an assignment to a plain symbol is its right-hand side (as math-verify treats it).
    if isinstance(expr, sympy.Eq) and isinstance(expr.lhs, sympy.Symbol):
        expr = expr.rhs
    if isinstance(expr, sympy.Basic):
        floats = expr.atoms(sympy.Float)
        if floats:  # 0.5 and 1/2 share a key; a Float's decimal string is its exact rational value here
            expr = expr.xreplace({value: sympy.Rational(str(value)) for value in floats})
        if expr.free_symbols and not isinstance(expr, (sympy.Set, sympy.Tuple, sympy.core.relational.Relational)):
            expr = sympy.expand(expr)
        elif not expr.free_symbols and isinstance(expr, sympy.Expr):
            expr = expr.doit()
    return str(expr)[:MAX_KEY_CHARS]


def fallback_key(text: str) -> str | None:
    """The vote key of an answer the worker could not finish: its last box's content, whitespace-free, if any.

    (Voting then still groups exact repeats of a runaway answer; an unboxed one casts no vote.)
    """
    boxed = extract_boxed(text)
    return re.sub(r"\s+", "", boxed)[:MAX_KEY_CHARS] if boxed else None
