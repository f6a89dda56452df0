"""Atomic writes (ead.io): results appear whole or not at all, with the permissions of any file the user creates,
and a damaged table names its file."""

import os
import stat
import subprocess
import sys

import pandas as pd
import pytest

from ead.io import DamagedFileError, atomic_path, read_table, write_table


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_a_damaged_table_names_its_file(tmp_path, suffix):
    """A corrupt parquet used to give a bare `OSError: Corrupt snappy compressed data.`"""
    path = tmp_path / f"countdown{suffix}"
    write_table(pd.DataFrame({"question": ["a" * 50] * 200, "answer": list(range(200))}), path)
    if suffix == ".parquet":
        data = bytearray(path.read_bytes())
        data[100:900] = bytes(range(200)) * 4
        path.write_bytes(bytes(data))
    else:
        path.write_bytes(b'a,"b\n1,"2\n"\x00')  # an unterminated quote
    with pytest.raises(DamagedFileError, match=rf"(?s){path}: cannot be read as {suffix[1:]} .* restore it, or delete"):
        read_table(path)


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_outputs_honour_the_umask(tmp_path, umask):
    out = tmp_path / f"table_{umask:o}.csv"
    # a fresh process, so the test's own umask change cannot leak into other tests
    code = (f"import os; os.umask({umask}); import pandas as pd; from ead.io import write_table; "
            f"write_table(pd.DataFrame({{'a': [1]}}), {str(out)!r})")
    subprocess.run([sys.executable, "-c", code], check=True)
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~umask


def test_a_failed_write_leaves_neither_output_nor_temporary_file(tmp_path):
    out = tmp_path / "table.csv"
    with pytest.raises(RuntimeError):
        with atomic_path(out) as tmp:
            tmp.write_text("half")
            raise RuntimeError("killed mid-write")
    assert os.listdir(tmp_path) == []
    write_table(pd.DataFrame({"a": [1]}), out)
    assert os.listdir(tmp_path) == ["table.csv"]
