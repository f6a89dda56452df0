"""Boxed answers in LaTeX text: where the last ``\\boxed{...}`` is, and what it holds.

The data loaders use :func:`extract_boxed` to take a MATH reference answer from its solution, and the grader
(:mod:`ead.rewards`) uses :func:`last_boxed_span` to cut a response down to its last box when it is told to
grade only that. It lives with the data (pure string work, standard library only) so that ``ead.data`` never
imports ``ead.rewards``: the dependency runs one way, rewards -> data.

Run a check from the shell:
``python -c "from ead.data.answers import extract_boxed; print(extract_boxed('so \\\\boxed{7}'))"``.
"""

from __future__ import annotations

import re

__all__ = ["extract_boxed", "last_boxed_span"]

_BOX_COMMANDS = ("\\boxed", "\\fbox")


def last_boxed_span(text: str) -> tuple[int, int, int, int] | None:
    """(command start, content start, content end, span end) of the last ``\\boxed``/``\\fbox``; None if absent.

    ``text[command start:span end]`` is the whole ``\\boxed{...}`` and ``text[content start:content end]`` its
    content (nested braces handled). ``\\boxed 7`` (no braces) spans ``7``. An unclosed last box is None rather
    than a guess. Linear in ``len(text)``.
    """
    if not isinstance(text, str):
        return None
    start = max(text.rfind(command) for command in _BOX_COMMANDS)
    if start < 0:
        return None
    command_end = start + (len("\\boxed") if text.startswith("\\boxed", start) else len("\\fbox"))
    rest = text[command_end:]
    stripped = rest.lstrip()
    if not stripped.startswith("{"):
        match = re.match(r"\s+([^\s$]+)", rest)  # "\boxed 7"
        if match is None:
            return None
        return start, command_end + match.start(1), command_end + match.end(1), command_end + match.end(1)
    open_at = command_end + (len(rest) - len(stripped))
    depth = 0
    for position in range(open_at, len(text)):
        char = text[position]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return start, open_at + 1, position, position + 1
    return None


def extract_boxed(text: str) -> str | None:
    """Content of the last ``\\boxed{...}`` (or ``\\fbox{...}``), stripped; None if absent or unclosed."""
    span = last_boxed_span(text)
    return None if span is None else text[span[1]:span[2]].strip()
