"""What the verl backend's tests share: a faked installed stack for the version checks."""

import importlib.metadata

from ead.rl.verl import cpu_stack


def fake_versions(monkeypatch, versions):
    def version(name):
        if versions.get(name) is None:
            raise importlib.metadata.PackageNotFoundError(name)
        return versions[name]

    monkeypatch.setattr(cpu_stack.importlib.metadata, "version", version)
