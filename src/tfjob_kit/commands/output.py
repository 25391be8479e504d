"""Where a command's result goes: standard output, or the file ``-o`` names."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml


def dump_yaml(documents: list[dict[str, Any]]) -> str:
    return yaml.safe_dump_all(documents, sort_keys=False, default_flow_style=False, width=100)


def write(text: str, output: str | None) -> None:
    if output in (None, "-"):
        sys.stdout.write(text)
    else:
        Path(output).write_text(text, encoding="utf-8")
