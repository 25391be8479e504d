"""What each optional part of tfjob-kit needs installed.

``pip install tfjob-kit`` brings what ``validate``, ``explain``, ``convert``, ``rules`` and
``schema`` need. The extras of pyproject.toml add the rest: ``cluster`` (a cluster's API and the
local cluster), ``ansible`` (the tfjob.kit modules), ``bootstrap`` (the roles and playbooks),
``plot`` (the timeline pictures). A command that needs an extra that is not installed stops at
once and names the ``pip install`` that brings it.

``EXTRAS`` is a copy of pyproject.toml's extras (tests/unit/test_extras.py holds them equal):
the check runs in every module task and CLI command, and finding a module costs a path lookup
where reading the package's metadata costs a tenth of a second or more.
"""

from __future__ import annotations

from importlib.util import find_spec

DISTRIBUTION = "tfjob-kit"
# Each extra's distributions (pyproject.toml's [project.optional-dependencies], but dev and bench).
EXTRAS = {
    "cluster": ("cryptography", "kubernetes"),
    "ansible": ("ansible-core", "kubernetes"),
    "bootstrap": ("ansible", "cryptography", "kubernetes"),
    "plot": ("matplotlib",),
}
# The module each distribution provides (the ansible package: the collections it ships).
PROVIDES = {
    "cryptography": "cryptography",
    "kubernetes": "kubernetes",
    "ansible-core": "ansible",
    "ansible": "ansible_collections.kubernetes.core",
    "matplotlib": "matplotlib",
}


class MissingExtraError(Exception):
    """A command needs packages of an extra that are not installed."""


def _installed(module: str) -> bool:
    try:
        return find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


def missing(extra: str) -> list[str]:
    """The distributions of ``extra`` that are not installed."""
    if extra not in EXTRAS:
        raise ValueError(f"{DISTRIBUTION} has no extra {extra!r}")
    return [name for name in EXTRAS[extra] if not _installed(PROVIDES[name])]


def require(extra: str, purpose: str) -> None:
    """Raise MissingExtraError, naming what to install, when ``extra`` is not all installed."""
    absent = missing(extra)
    if absent:
        verb = "is" if len(absent) == 1 else "are"
        raise MissingExtraError(
            f"{purpose} needs {' and '.join(absent)}, which {verb} not installed: "
            f"pip install '{DISTRIBUTION}[{extra}]'"
        )
