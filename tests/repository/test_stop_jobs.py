"""Recovering from an interrupted run: stopping one profile's leftover jobs never touches another profile's."""

import shutil
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def fake_job(cwd: Path) -> subprocess.Popen:
    """A process that looks like a workflow job (`python -m ead.<job>` on its command line) running in ``cwd``."""
    return subprocess.Popen(["bash", "-c", 'exec -a "python -m ead.analyses.forking --fake" sleep 120'], cwd=cwd)


def test_stop_jobs_stops_the_named_profiles_jobs_only(tmp_path):
    (tmp_path / "workflow" / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "workflow" / "scripts" / "stop_jobs.sh", tmp_path / "workflow" / "scripts")
    for name in ("smoke", "other"):
        (tmp_path / "runs" / name).mkdir(parents=True)
    smoke, other, default = (fake_job(tmp_path / "runs" / "smoke"), fake_job(tmp_path / "runs" / "other"),
                             fake_job(tmp_path))
    try:
        time.sleep(0.5)
        result = subprocess.run(["bash", str(tmp_path / "workflow" / "scripts" / "stop_jobs.sh"), "smoke"],
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        assert "stopped 1 job(s) of profile 'smoke'" in result.stdout
        assert smoke.wait(timeout=10) == -15  # SIGTERM
        assert other.poll() is None and default.poll() is None  # another profile's jobs, and the default's, run on
        result = subprocess.run(["bash", str(tmp_path / "workflow" / "scripts" / "stop_jobs.sh"), "nosuch"],
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 2 and "no profile root" in result.stderr
    finally:
        for process in (smoke, other, default):
            process.kill()
            process.wait()
