"""Resumable jobs: a checkpoint records the fingerprint of what produced it and is resumed only by the same job.

A killed job restarted with the same settings and inputs resumes from its last checkpoint (and ends with the tables
of an uninterrupted run). A checkpoint left by other settings or inputs (an edited config, a retrained policy, a
regenerated data table) is named in the log and discarded, and the job starts over: no table ever mixes rows
produced under two settings.

    fingerprint = job_fingerprint(settings, [policy_dir, data])
    resuming = resumable(checkpoint_dir, fingerprint, log)      # False: nothing usable there (any stale one is gone)
    with atomic_directory(checkpoint_dir) as staging:            # when saving
        ...; stamp(staging, fingerprint)
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Iterable

from ead.io import file_sha256

FINGERPRINT_FILE = "fingerprint.json"


def job_fingerprint(settings: dict, inputs: Iterable[str | Path]) -> str:
    """sha256 over the job's settings (canonical JSON) and the contents of its input files and directories."""
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode())
    for source in inputs:
        source = Path(source)
        files = sorted(p for p in source.rglob("*") if p.is_file()) if source.is_dir() else [source]
        for file in files:
            digest.update(f"{file.relative_to(source) if source.is_dir() else source.name}\0".encode())
            digest.update(file_sha256(file).encode())
    return digest.hexdigest()


def stamp(checkpoint_dir: str | Path, fingerprint: str) -> None:
    """Record ``fingerprint`` in a checkpoint being written (call inside its staging directory)."""
    (Path(checkpoint_dir) / FINGERPRINT_FILE).write_text(json.dumps({"fingerprint": fingerprint}))


def resumable(checkpoint_dir: str | Path, fingerprint: str, log) -> bool:
    """True if ``checkpoint_dir`` holds a checkpoint made with ``fingerprint``; otherwise remove whatever is there
    (saying why in ``log``) and return False, so the job starts over."""
    directory = Path(checkpoint_dir)
    if not directory.exists():
        return False
    record = directory / FINGERPRINT_FILE
    recorded = json.loads(record.read_text())["fingerprint"] if record.exists() else None
    if recorded == fingerprint:
        return True
    log.warning("checkpoint %s was made with other settings or inputs (fingerprint %s, this job %s): "
                "discarding it and starting over", directory, (recorded or "none")[:12], fingerprint[:12])
    shutil.rmtree(directory)
    return False


#: The directory under which every job keeps its checkpoints (results/checkpoints/...); :func:`discard` prunes the
#: empty directories a finished job leaves below it, never it or anything above it.
CHECKPOINT_ROOT_NAME = "checkpoints"


def discard(checkpoint_dir: str | Path) -> None:
    """Remove a finished job's checkpoint and the directories it leaves empty, up to (not including) the nearest
    ancestor named ``checkpoints`` (e.g. results/checkpoints/rl/tiny1m/dapo/ead/n8/seed0 and then every parent that
    is left empty, stopping at results/checkpoints). Without such an ancestor only the checkpoint itself goes."""
    directory = Path(checkpoint_dir)
    shutil.rmtree(directory, ignore_errors=True)
    parents = list(directory.absolute().parents)
    if not any(parent.name == CHECKPOINT_ROOT_NAME for parent in parents):
        return
    for parent in parents:
        if parent.name == CHECKPOINT_ROOT_NAME:
            return
        try:
            parent.rmdir()  # only if empty; another job's checkpoint beside it keeps it
        except OSError:
            return
