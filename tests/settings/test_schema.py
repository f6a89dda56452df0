"""The JSON-schema check (ead.settings.schema): one-line messages naming the key, finite numbers only, and a schema
file parsed once per version (an edited schema is read again, not served from the cache)."""

import pytest

from ead.settings.base import ConfigError
from ead.settings.schema import check_schema

SCHEMA = """
type: object
additionalProperties: false
required: [rate]
properties:
  rate: {type: number, minimum: 0}
  name: {type: string}
"""


def test_a_violation_names_the_key_and_the_value(tmp_path):
    schema = tmp_path / "schema.yaml"
    schema.write_text(SCHEMA)
    check_schema({"rate": 0.5}, schema)
    with pytest.raises(ConfigError, match=r"unknown key\(s\) rat; allowed here: \['name', 'rate'\]"):
        check_schema({"rate": 0.5, "rat": 1}, schema)
    with pytest.raises(ConfigError, match=r"rate = -1"):
        check_schema({"rate": -1}, schema)
    with pytest.raises(ConfigError, match=r"'rate' is a required property"):
        check_schema({}, schema)


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_nan_and_infinity_are_not_numbers_of_the_config(tmp_path, value):
    schema = tmp_path / "schema.yaml"
    schema.write_text(SCHEMA)
    with pytest.raises(ConfigError, match=r"rate = (nan|inf): must be a finite number"):
        check_schema({"rate": value}, schema)


def test_an_edited_schema_is_read_again(tmp_path):
    schema = tmp_path / "schema.yaml"
    schema.write_text(SCHEMA)
    check_schema({"rate": 0.5, "name": "x"}, schema)
    schema.write_text(SCHEMA.replace("  name: {type: string}\n", ""))  # another size: a new version of the file
    with pytest.raises(ConfigError, match="unknown key"):
        check_schema({"rate": 0.5, "name": "x"}, schema)
