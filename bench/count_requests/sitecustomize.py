"""Counts the HTTP requests a Python process makes (the benchmark puts this folder first on
PYTHONPATH for the toolkit's run, so ansible-playbook and every module process it starts load it).

Each process appends one line to ``$TFJOB_KIT_BENCH_REQUESTS`` when it exits: its pid and how
many requests it sent by method (a watch counts once, however long it stays open). Nothing is
counted, and nothing is written, when the variable is unset.
"""

from __future__ import annotations

import atexit
import collections
import json
import os
from pathlib import Path
from typing import Any

_PATH = os.environ.get("TFJOB_KIT_BENCH_REQUESTS", "")

if _PATH:
    _counts: collections.Counter[str] = collections.Counter()

    def _patch() -> None:
        try:
            from urllib3.connectionpool import HTTPConnectionPool
        except ImportError:
            return
        urlopen = HTTPConnectionPool.urlopen

        def counted(self: Any, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
            # A retry or a redirect comes back through here: each request on the wire counts.
            _counts[method.upper()] += 1
            return urlopen(self, method, url, *args, **kwargs)

        HTTPConnectionPool.urlopen = counted  # type: ignore[method-assign]

    def _write() -> None:
        if _counts:
            with Path(_PATH).open("a", encoding="utf-8") as out:
                out.write(json.dumps({"pid": os.getpid(), **_counts}) + "\n")

    _patch()
    atexit.register(_write)
