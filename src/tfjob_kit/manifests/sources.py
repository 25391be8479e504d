"""Where texts come from: files, directories of manifests, standard input."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from tfjob_kit.manifests.documents import DEFAULT_LIMITS, Document, InputError, Limits, LoadError
from tfjob_kit.manifests.loader import load_text

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


class _UndecodableError(Exception):
    def __init__(self, error: LoadError) -> None:
        super().__init__(error.message)
        self.error = error


def read_source(path: str, limits: Limits = DEFAULT_LIMITS) -> str:
    """Text of a file, or of standard input for '-'. Raises InputError when unreadable."""
    try:
        if path == "-":
            data = sys.stdin.buffer.read(limits.max_file_bytes + 1)
        else:
            with Path(path).open("rb") as handle:
                data = handle.read(limits.max_file_bytes + 1)
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = data[: exc.start].decode("utf-8")
        line = text.count("\n") + 1
        raise _UndecodableError(
            LoadError(
                "yaml-syntax",
                f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
                f"{exc.start}); is this a binary file?",
                line,
            )
        ) from None


def expand_paths(paths: list[str]) -> list[str]:
    """Files named, and manifest files under directories named (sorted, recursive)."""
    found: list[str] = []
    for path in paths:
        if path == "-":
            found.append(path)
            continue
        if Path(path).is_dir():
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                found.extend(
                    str(Path(root) / name)
                    for name in sorted(files)
                    if name.endswith(MANIFEST_SUFFIXES)
                )
        elif Path(path).exists():
            found.append(path)
        else:
            raise InputError(f"{path}: no such file or directory")
    return found


def load_path(path: str, limits: Limits = DEFAULT_LIMITS) -> list[Document]:
    """Documents of one file (or '-'); an undecodable file is one error document."""
    try:
        text = read_source(path, limits)
    except _UndecodableError as exc:
        return [Document(path, 1, exc.error.line or 1, error=exc.error)]
    return load_text(text, path, limits)


def load_paths(paths: list[str], limits: Limits = DEFAULT_LIMITS) -> list[Document]:
    """Documents of every file and directory named. Raises InputError for unreadable paths."""
    docs: list[Document] = []
    for path in expand_paths(paths):
        docs.extend(load_path(path, limits))
    return docs
