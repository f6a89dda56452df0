"""docs/use-ead.md's vLLM block, run as written (a script: vLLM starts engine processes) on a tiny local model, in
.venv-vllm; the page's other blocks are run by tests/repository/test_use_ead_page.py.

Run: ``.venv-vllm/bin/python -m pytest tests/vllm/test_use_ead_page.py``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("vllm", reason="vLLM is only installed in .venv-vllm (workflow/scripts/setup_vllm_venv.sh)")

from tests.repository.test_use_ead_page import the_block  # noqa: E402
from tests.vllm.test_vllm_processors import ENGINE_ENV, write_tiny_llama  # noqa: E402


def test_the_vllm_block_samples_ead_and_another_schedule_with_behaviour_logprobs(tmp_path):
    model_dir = write_tiny_llama(tmp_path / "model")
    script = tmp_path / "vllm_block.py"
    script.write_text(the_block("vllm"))
    request_log = tmp_path / "requests.jsonl"
    env = {**os.environ, **ENGINE_ENV, "EAD_MODEL": str(model_dir), "HF_HUB_OFFLINE": "1",
           "EAD_VLLM_REQUEST_LOG": str(request_log)}
    result = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, env=env,
                            timeout=900)
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    number = r"-?\d+(?:\.\d+)?(?:e-?\d+)?"
    printed = [line for line in result.stdout.splitlines()  # text, then its first four behaviour log-probs
               if re.search(rf"\[(?:{number}, ){{3}}{number}\]$", line) and not line.startswith("(")]
    assert len(printed) == 2, result.stdout[-2000:]
    # the processor saw both requests: EAD as its four numbers, the two-stage schedule as its document
    seen = [json.loads(line)["extra_args"] for line in request_log.read_text().splitlines()]
    assert any(args and {"tau_max", "tau_min", "d", "c"} <= set(args) for args in seen), seen
    assert any(args and args.get("ead_schedule", {}).get("name") == "two_stage" for args in seen), seen
