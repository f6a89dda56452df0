"""The results contract's front door (ead.tables): readers and writers import every table and helper from the
package, so what it exports must be exactly what its modules declare for them."""

import ead.tables
from ead.tables import TABLES, Table, declarations, provenance, schema


def test_the_package_exports_every_name_it_lists_and_every_declared_table():
    for name in ead.tables.__all__:
        assert getattr(ead.tables, name) is not None, name
    declared = {name for name, value in vars(declarations).items() if isinstance(value, Table)}
    assert declared <= set(ead.tables.__all__), sorted(declared - set(ead.tables.__all__))
    assert {table.name for table in (getattr(declarations, name) for name in declared)} == set(TABLES)
    for module in (schema, provenance):  # the package re-exports its modules' public names as they are
        for name in getattr(module, "__all__", ()):
            if name in ead.tables.__all__:
                assert getattr(ead.tables, name) is getattr(module, name), name
