"""Shared test helpers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"


@pytest.fixture
def data_dir() -> Path:
    return DATA


def _register_hypothesis_profiles() -> None:
    import os

    from hypothesis import HealthCheck, settings

    common: dict[str, Any] = {
        "deadline": None,
        "suppress_health_check": [HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    }
    settings.register_profile("default", max_examples=800, **common)
    settings.register_profile("deep", max_examples=20_000, **common)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


_register_hypothesis_profiles()
