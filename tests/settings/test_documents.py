"""Typed settings documents (ead.settings.documents): a dataclass to its JSON document and back, strictly."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from ead.settings.base import ConfigError
from ead.settings.documents import as_document, read_document


@dataclass(frozen=True)
class Inner:
    k: int
    name: str | None


@dataclass(frozen=True)
class Outer:
    rate: float
    steps: tuple[int, ...]
    inner: Inner
    extra: dict

    def __post_init__(self):
        if self.rate < 0:
            raise ValueError(f"rate = {self.rate} must be >= 0")


DOCUMENT = {"rate": 1, "steps": [1, 16], "inner": {"k": 4, "name": None}, "extra": {"a": [1]}}


def test_a_document_reads_as_written_and_writes_back_to_itself():
    value = read_document(Outer, DOCUMENT, "toy settings")
    assert value == Outer(1, (1, 16), Inner(4, None), {"a": [1]})
    assert isinstance(value.rate, int)  # kept as written: the document reads back to itself
    assert as_document(value) == DOCUMENT


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d["inner"].update(kk=1), "toy settings: unknown key 'inner.kk'"),
    (lambda d: d.pop("steps"), "toy settings: missing key 'steps'"),
    (lambda d: d.update(steps=[1, True]), "toy settings: 'steps[1]' = True is not an integer"),
    (lambda d: d.update(rate="fast"), "toy settings: 'rate' = 'fast' is not a number"),
    (lambda d: d.update(inner=[4]), "toy settings: 'inner' = [4] is not a mapping"),
    (lambda d: d["inner"].update(name=3), "toy settings: 'inner.name' = 3 is not a string"),
    (lambda d: d.update(rate=-1), "toy settings: the document: rate = -1 must be >= 0"),
])
def test_each_kind_of_bad_document_is_refused_naming_its_dotted_key(change, message):
    document = {**DOCUMENT, "inner": dict(DOCUMENT["inner"])}
    change(document)
    with pytest.raises(ConfigError) as raised:
        read_document(Outer, document, "toy settings")
    assert str(raised.value) == message
