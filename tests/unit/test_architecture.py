"""ARCHITECTURE.md stays true: every package has a section whose module table names exactly the
package's modules, and every path the document names in backquotes exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TEXT = (ROOT / "ARCHITECTURE.md").read_text()
# "## Title (`src/tfjob_kit/<package>/`)" up to the next "## ".
SECTION = re.compile(r"^## [^\n]*\(`(src/tfjob_kit/[a-z_]+/)`\)\n(.*?)(?=^## |\Z)", re.S | re.M)
SECTIONS = {folder: body for folder, body in SECTION.findall(TEXT)}


def test_the_document_describes_each_package() -> None:
    packages = {
        f"{p.parent.relative_to(ROOT)}/" for p in (ROOT / "src" / "tfjob_kit").glob("*/__init__.py")
    }
    assert len(packages) >= 7
    assert set(SECTIONS) == packages


@pytest.mark.parametrize("folder", sorted(SECTIONS))
def test_module_table_names_every_module(folder: str) -> None:
    rows = [line for line in SECTIONS[folder].splitlines() if line.startswith("| `")]
    listed = {name for row in rows for name in re.findall(r"`([a-z0-9_]+\.py)`", row.split("|")[1])}
    present = {p.name for p in (ROOT / folder).glob("*.py")} - {"__init__.py", "__main__.py"}
    assert listed == present, (
        f"{folder}: not in ARCHITECTURE.md: {sorted(present - listed)}; "
        f"gone: {sorted(listed - present)}"
    )


def test_named_paths_exist() -> None:
    """Paths are the repository's (`schemas/tfjob-v1.json`), the package's (`kube/status.py`),
    or the installed collection's (`ansible_collections/tfjob/kit`, from .collections/)."""
    bases = (ROOT, ROOT / "src" / "tfjob_kit", ROOT / ".collections")
    named = re.findall(r"`((?:[a-z0-9_.-]+/)+[A-Za-z0-9_.-]*)`", TEXT)
    paths = {p for p in named if p.endswith("/") or re.search(r"\.(py|ya?ml|json|md|toml|sh)$", p)}
    assert len(paths) > 20
    missing = sorted(p for p in paths if not any((base / p).exists() for base in bases))
    assert not missing, missing
