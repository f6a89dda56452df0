"""Atomic writes and logging shared by every job: nothing half-written is ever left at an output path."""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pandas as pd


def _umask() -> int:
    """The process umask, read without changing it where the OS allows (setting it races with other threads)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextmanager
def atomic_path(path: str | Path):
    """Yield a temporary path in the target's directory; rename it onto ``path`` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp" + path.suffix, dir=path.parent)
    os.close(fd)
    os.chmod(tmp, 0o666 & ~_umask())  # mkstemp creates 0600; outputs get the mode of any file the user creates
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextmanager
def atomic_directory(path: str | Path):
    """Yield an empty staging directory beside ``path``; if the block succeeds it replaces ``path`` whole."""
    path = Path(path)
    staging = path.with_name(path.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        yield staging
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    honour_umask(staging)
    shutil.rmtree(path, ignore_errors=True)
    staging.rename(path)


def honour_umask(directory: str | Path) -> None:
    """Give ``directory`` and everything under it the modes the user's umask grants (files 0666 & ~umask, directories
    0777 & ~umask): libraries write some outputs 0600 (transformers' ``save_pretrained`` writes the weights so)."""
    mask = _umask()
    directory = Path(directory)
    os.chmod(directory, 0o777 & ~mask)
    for root, folders, files in os.walk(directory):
        for name in folders:
            os.chmod(os.path.join(root, name), 0o777 & ~mask)
        for name in files:
            os.chmod(os.path.join(root, name), 0o666 & ~mask)


def write_table(df: pd.DataFrame, path: str | Path) -> None:
    """Write a tidy table atomically as CSV or Parquet, chosen by the file suffix."""
    path = Path(path)
    with atomic_path(path) as tmp:
        if path.suffix == ".csv":
            df.to_csv(tmp, index=False)
        elif path.suffix == ".parquet":
            df.to_parquet(tmp, index=False)
        else:
            raise ValueError(f"Unsupported table format {path.suffix!r} for {path}; use .csv or .parquet")


def read_table(path: str | Path) -> pd.DataFrame:
    """Read a table written by :func:`write_table`."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"Result table {path} does not exist; run the rule that produces it first")
    if path.suffix not in (".csv", ".parquet"):
        raise ValueError(f"Unsupported table format {path.suffix!r} for {path}; use .csv or .parquet")
    try:
        return pd.read_csv(path) if path.suffix == ".csv" else pd.read_parquet(path)
    except Exception as error:  # pyarrow / pandas name neither the file nor what to do
        raise DamagedFileError(f"{path}: cannot be read as {path.suffix[1:]} ({type(error).__name__}: {error}); "
                               "the file is damaged: restore it, or delete it and rerun snakemake to rebuild "
                               "it") from error


class DamagedFileError(OSError):
    """An input file exists but cannot be read (a truncated or corrupt table); the message names the file."""


def file_sha256(path: str | Path) -> str:
    """Hex sha256 of a file's contents, read in 1 MiB blocks (pinned wheels, checkpoint fingerprints)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def setup_logging(name: str) -> logging.Logger:
    """Log to stderr (Snakemake redirects it to the rule's log file)."""
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    return logging.getLogger(name)


#: Seconds between progress lines when stderr is a log file (a terminal updates every 0.1 s).
LOG_PROGRESS_INTERVAL_S = 20.0


def progress(total: int, desc: str, unit: str, *, file=None):
    """A progress bar for a long loop: done/total, rate and ETA (tqdm). In a job's log (stderr not a terminal) it
    writes one line every :data:`LOG_PROGRESS_INTERVAL_S` seconds instead of redrawing, so the log shows how far a
    18-minute job is without growing by megabytes."""
    from tqdm import tqdm

    stream = file if file is not None else sys.stderr
    logged = not (hasattr(stream, "isatty") and stream.isatty())
    return tqdm(total=total, desc=desc, unit=unit, unit_scale=True, file=stream, dynamic_ncols=False,
                mininterval=LOG_PROGRESS_INTERVAL_S if logged else 0.1, ascii=logged,
                **({"bar_format": "{desc}: {n_fmt}/{total_fmt} {unit} [{elapsed}<{remaining}, {rate_fmt}]\n"}
                   if logged else {}))
