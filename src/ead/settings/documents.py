"""Typed settings documents: a job's settings as a frozen dataclass, handed to the job as JSON and read back strictly.

:func:`as_document` turns such a dataclass into its JSON-ready document (nested dicts and lists); :func:`read_document`
reads a document back as the dataclass, refusing an unknown or a missing key and a value of the wrong type with a
ConfigError naming the document and the dotted key (``cell settings: unknown key 'eval.evry'``). The RL cell's
settings (:class:`ead.settings.cell.CellSettings`) and the premise probe's
(:class:`ead.settings.premises.ProbeSettings`) are such documents.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing

from ead.settings.base import ConfigError

__all__ = ["as_document", "json_document", "read_document"]


def as_document(value):
    """The JSON-ready document of ``value`` (a dataclass, list, tuple, dict or plain value)."""
    if dataclasses.is_dataclass(value):
        return {field.name: as_document(getattr(value, field.name)) for field in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [as_document(item) for item in value]
    if isinstance(value, dict):
        return {key: as_document(item) for key, item in value.items()}
    return value


def json_document(text: str, what: str):
    """The document a job was handed as JSON text; ConfigError naming ``what`` where the text is not JSON."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ConfigError(f"{what}: not a JSON document ({error})") from None


#: What a value of each plain type must be (bool is an int to Python, never to the document).
_PLAIN = {
    int: ("an integer", lambda value: isinstance(value, int) and not isinstance(value, bool)),
    float: ("a number", lambda value: isinstance(value, (int, float)) and not isinstance(value, bool)),
    str: ("a string", lambda value: isinstance(value, str)),
    bool: ("true or false", lambda value: isinstance(value, bool)),
    dict: ("a mapping", lambda value: isinstance(value, dict) and all(isinstance(key, str) for key in value)),
}


def read_document(kind, value, what: str, where: str = ""):
    """``value`` of a document read as ``kind`` (a dataclass, a plain type, ``tuple[X, ...]`` or ``X | None``);
    ``what`` names the document in messages, ``where`` is the value's dotted key. Values are kept as written (an int
    where a float is declared stays an int), so a document reads back to itself."""
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        if value is None and type(None) in typing.get_args(kind):
            return None
        (kind,) = [option for option in typing.get_args(kind) if option is not type(None)]
    if dataclasses.is_dataclass(kind):
        if not isinstance(value, dict):
            raise ConfigError(f"{what}: {where!r} = {value!r} is not a mapping" if where
                              else f"{what}: the document is not a mapping: {value!r}")
        fields = typing.get_type_hints(kind)
        for key in value:
            if key not in fields:
                raise ConfigError(f"{what}: unknown key {_key(where, key)!r}")
        for key in fields:
            if key not in value:
                raise ConfigError(f"{what}: missing key {_key(where, key)!r}")
        values = {key: read_document(field, value[key], what, _key(where, key)) for key, field in fields.items()}
        try:
            return kind(**values)
        except ValueError as error:  # a group's own checks (the grader's ranges)
            raise ConfigError(f"{what}: {where or 'the document'}: {error}") from None
    if typing.get_origin(kind) is tuple:
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{what}: {where!r} = {value!r} is not a list")
        (item, _) = typing.get_args(kind)
        return tuple(read_document(item, element, what, f"{where}[{index}]") for index, element in enumerate(value))
    description, fits = _PLAIN[kind]
    if not fits(value):
        raise ConfigError(f"{what}: {where!r} = {value!r} is not {description}")
    return value


def _key(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key
