"""Fault-injection point for the SLURM cancellation test (tests/end_to_end/test_slurm_local.py).

Python imports ``sitecustomize`` at start-up from the path, so every process started with this directory on
PYTHONPATH loads it; it does something only where ``EAD_TEST_HOLD_AFTER`` names a directory. Then, the first time any
of those processes renames a directory into that path (the RL cell's checkpoint is written into a staging directory
and renamed into place whole, ``ead.io.atomic_directory``), the process holds for up to ``EAD_TEST_HOLD_S`` seconds
(300 by default) right after the rename. The test cancels the job during that hold, so the cancellation lands between
the step-1 checkpoint and the cell's tables on any machine, however long scancel takes to act. Only the first
rename holds (it creates the file ``EAD_TEST_HOLD_MARKER`` exclusively): a retried job that wrongly started over and
saved a new checkpoint would not hang the test but fail its assertions.
"""

import os
import time

HOLD_AFTER = os.environ.get("EAD_TEST_HOLD_AFTER")

if HOLD_AFTER:
    rename = os.rename

    def rename_then_hold(source, target, *args, **kwargs):
        rename(source, target, *args, **kwargs)
        if os.path.abspath(target) != os.path.abspath(HOLD_AFTER):
            return
        try:
            os.close(os.open(os.environ["EAD_TEST_HOLD_MARKER"], os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return
        time.sleep(float(os.environ.get("EAD_TEST_HOLD_S", "300")))

    os.rename = rename_then_hold
