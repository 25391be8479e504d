"""Where a command's result goes: standard output, or the file ``-o`` names."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import yaml

from tfjob_kit.commands import UsageError

# Devices and the process's own descriptors (/dev/stdout, /dev/fd/3, /proc/self/fd/1) are
# symbolic links by design; writing through them writes to the stream they stand for.
_STREAMS = ("/dev/", "/proc/self/fd/")


def dump_yaml(documents: list[dict[str, Any]]) -> str:
    return yaml.safe_dump_all(documents, sort_keys=False, default_flow_style=False, width=100)


def write(text: str, output: str | None) -> None:
    """`text` to standard output (`output` None or "-"), else to the file `output`, created or
    truncated. A symbolic link there is refused, not followed: in a CI checkout of a pull
    request, `-o report.txt` must not overwrite what a planted link points to."""
    if output in (None, "-"):
        sys.stdout.write(text)
        return
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    if not output.startswith(_STREAMS):
        flags |= os.O_NOFOLLOW
    try:
        fd = os.open(output, flags, 0o644)
    except OSError as exc:
        if Path(output).is_symlink():
            raise UsageError(
                f"-o {output}: a symbolic link (to {Path(output).readlink()}); refusing to write "
                "through it: remove it or name another file"
            ) from None
        raise UsageError(f"-o {output}: {exc.strerror}") from None
    with os.fdopen(fd, "w", encoding="utf-8") as stream:
        stream.write(text)
