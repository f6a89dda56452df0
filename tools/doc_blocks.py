"""Marked blocks in the docs: the one place a measured number is written, by the program that measured it.

A block is the text between ``<!-- name:begin -->`` and ``<!-- name:end -->`` in a Markdown file. The program that
measured or generated it (a benchmark of benchmarks/, or a generator beside this module) writes it there
(``replace_block``); ``tests/repository/test_docs.py`` reads the blocks (``read_block``) to check that nothing
else quotes their numbers and that generated blocks match their sources.
"""

from __future__ import annotations

import re
from pathlib import Path

from ead.io import atomic_path

BLOCK = re.compile(r"<!-- ([a-z0-9-]+):begin -->\n(.*?)<!-- \1:end -->", re.DOTALL)


def markers(name: str) -> tuple[str, str]:
    return f"<!-- {name}:begin -->", f"<!-- {name}:end -->"


def replace_between_markers(text: str, block: str, where: str, name: str) -> str:
    """``text`` with the block ``name`` replaced by ``block`` (which ends with a newline); exactly one block."""
    begin, end = markers(name)
    if text.count(begin) != 1 or text.count(end) != 1:
        raise ValueError(f"{where} must hold exactly one {begin} and one {end}")
    head, rest = text.split(begin)
    _, tail = rest.split(end)
    return f"{head}{begin}\n{block}{end}{tail}"


def replace_block(path: Path, name: str, block: str) -> None:
    """Write ``block`` between the markers ``name`` of the Markdown file ``path`` (atomically)."""
    path = Path(path)
    updated = replace_between_markers(path.read_text(), block, str(path), name)
    with atomic_path(path) as tmp:
        Path(tmp).write_text(updated)


def publish(block: str, out: Path, doc: Path | None, name: str) -> None:
    """A generated report: ``block`` written to ``out`` (atomically) and, with ``doc``, into its block ``name``; then
    printed."""
    with atomic_path(out) as tmp:
        Path(tmp).write_text(block)
    if doc:
        replace_block(doc, name, block)
    print(block)


def read_block(path: Path, name: str) -> str:
    """The text of block ``name`` in ``path``; a missing block is an error naming the file."""
    blocks = all_blocks(Path(path).read_text())
    if name not in blocks:
        raise ValueError(f"{path}: no block <!-- {name}:begin --> ... <!-- {name}:end -->")
    return blocks[name]


def all_blocks(text: str) -> dict[str, str]:
    """Every marked block of a Markdown text, by name."""
    return {match.group(1): match.group(2) for match in BLOCK.finditer(text)}
