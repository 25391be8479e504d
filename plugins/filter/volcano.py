# Copyright: tfjob-kit developers
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The volcano role's decisions, as filters: the logic lives, unit-tested, in
tfjob_kit.installs.volcano; each filter's documentation is the YAML file of its name beside
this one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ansible.errors import AnsibleFilterError

try:
    from tfjob_kit.installs import volcano
except ImportError as exc:  # the collection without its library
    IMPORT_ERROR: ImportError | None = exc
else:
    IMPORT_ERROR = None


def _library() -> None:
    if IMPORT_ERROR is not None:
        raise AnsibleFilterError(
            f"the tfjob.kit filters need the tfjob-kit Python package: pip install tfjob-kit "
            f"({IMPORT_ERROR})"
        )


def survey(objects: dict[str, Any], namespace: str, release: str) -> list[str]:
    _library()
    return volcano.survey(objects, namespace, release)


def ownership(objects: dict[str, Any], record: str) -> dict[str, Any]:
    _library()
    return volcano.ownership(objects, record)


class FilterModule:
    """tfjob.kit.volcano_* filters."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"volcano_survey": survey, "volcano_ownership": ownership}
