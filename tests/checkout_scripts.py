"""The checkout's files that are modules but not of a package (``tools/*.py``,
``plugins/modules/*.py``), imported from their paths for the tests that call or read them."""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


@functools.cache
def load(path: str) -> ModuleType:
    """The module of `path` (relative to the checkout), imported once. It is registered in
    ``sys.modules`` so that its dataclasses can resolve their annotations."""
    name = "_checkout_" + path.removesuffix(".py").replace("/", "_")
    spec = importlib.util.spec_from_file_location(name, ROOT / path)
    assert spec and spec.loader, path
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
