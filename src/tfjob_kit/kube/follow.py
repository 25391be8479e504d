"""Following objects with watches: list once, then watch from the list's resourceVersion.

Each ``Source`` (the jobs of a namespace, their pods, the namespace's events, the PodGroups)
runs in a thread of its own that puts what it learns on one queue: ``Reset`` (a fresh list),
``Change`` (one watch event) or ``Broken`` (the source cannot be read). A watch that ends (the
server closes it after ``timeout_seconds``) is resumed from the last resourceVersion; one that
breaks (an expired resourceVersion, a dropped connection) is listed and watched again after a
short back-off, so the follower never depends on one long-lived connection. Credentials that
may list but not watch get a list every ``POLL_SECONDS`` instead. Whoever reads the
queue decides when to stop; ``stop`` interrupts the open watches and waits for the threads to
end (each thread closes its own watch).
"""

from __future__ import annotations

import contextlib
import json
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from tfjob_kit.kube.api_errors import KubeError
from tfjob_kit.kube.client import Client, core_path, resource_path
from tfjob_kit.kube.kinds import Resource
from tfjob_kit.kube.transport import REQUEST_TIMEOUT

WATCH_SECONDS = 60
POLL_SECONDS = 2.0
BACKOFF = (0.2, 0.5, 1.0, 2.0, 5.0)
# Answers that another try will not change: the source is given up (and reported).
PERMANENT = (401, 403, 404)
# How long `stop` waits for the threads: a list in flight cannot be interrupted, and may take up
# to the request timeout; the process then exits beside it.
STOP_SECONDS = 5.0


@dataclass(frozen=True)
class Source:
    what: Resource | str  # a custom resource, or "pods" / "events"
    namespace: str  # "" for every namespace (pods only)
    label_selector: str | None = None
    field_selector: str | None = None


@dataclass(frozen=True)
class Reset:
    source: Source
    items: list[dict[str, Any]]


@dataclass(frozen=True)
class Change:
    source: Source
    type: str  # ADDED, MODIFIED, DELETED
    object: dict[str, Any]


@dataclass(frozen=True)
class Broken:
    source: Source
    error: KubeError
    permanent: bool


Update = Reset | Change | Broken


def _path(source: Source) -> str:
    what, namespace = source.what, source.namespace
    if isinstance(what, Resource):
        return resource_path(what, namespace)
    return core_path(what, namespace or None)


def _selectors(source: Source) -> list[tuple[str, str]]:
    pairs = (("labelSelector", source.label_selector), ("fieldSelector", source.field_selector))
    return [(k, v) for k, v in pairs if v]


def _action(source: Source) -> str:
    name = source.what.plural if isinstance(source.what, Resource) else source.what
    where = f"in namespace {source.namespace!r}" if source.namespace else "in every namespace"
    return f"following {name} {where} for"


def list_source(client: Client, source: Source) -> tuple[list[dict[str, Any]], str]:
    """The objects and the list's resourceVersion."""
    with client.errors(_action(source)):
        data = client.call("GET", _path(source), _selectors(source))
    items: list[dict[str, Any]] = data.get("items") or []
    return items, str((data.get("metadata") or {}).get("resourceVersion") or "")


def _lines(response: Any) -> Iterator[bytes]:
    """The watch's JSON lines as they arrive (one event per line)."""
    buffer = b""
    for chunk in response.stream(amt=None, decode_content=True):
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        yield from (line for line in lines if line.strip())
    if buffer.strip():
        yield buffer


class Watch:
    """One watch request; iterate it for (type, object). ``close`` ends it from any thread.
    An ERROR event raises KubeError (status 410: the resourceVersion is too old, list again)."""

    def __init__(self, client: Client, source: Source, resource_version: str) -> None:
        self._client, self._source = client, source
        query = [
            ("watch", "true"),
            ("resourceVersion", resource_version),
            ("allowWatchBookmarks", "true"),
            ("timeoutSeconds", str(WATCH_SECONDS)),
            *_selectors(source),
        ]
        with client.errors(_action(source)):
            self._response = client.transport.request(
                "GET",
                _path(source),
                query=query,
                timeout=(REQUEST_TIMEOUT, WATCH_SECONDS + REQUEST_TIMEOUT),
                stream=True,
            )

    def __iter__(self) -> Iterator[tuple[str, dict[str, Any]]]:
        try:
            with self._client.errors(_action(self._source)):
                for line in _lines(self._response):
                    event = json.loads(line)
                    kind, obj = str(event.get("type")), event.get("object") or {}
                    if kind == "ERROR":
                        raise KubeError(
                            f"{_action(self._source)} a watch: {obj.get('message')}",
                            str(obj.get("reason") or "error").lower(),
                            int(obj.get("code") or 0) or None,
                        )
                    yield kind, obj
        finally:
            self.close()

    def interrupt(self) -> None:
        """End the watch from another thread: its socket is shut for reading, so the thread
        iterating it wakes up. Only that thread gives the connection back (``close``): a
        connection released while another thread reads it could be closed under that read."""
        # A finished or released response has nothing left to wake.
        with contextlib.suppress(Exception):
            self._response.shutdown()

    def close(self) -> None:
        """End the watch and give its connection back; in the thread that iterates it."""
        self.interrupt()
        with contextlib.suppress(Exception):  # a finished or broken response: nothing to close
            self._response.release_conn()


class Follower:
    """Threads that follow the sources and report on ``updates``."""

    def __init__(
        self,
        client: Client,
        sources: list[Source],
        *,
        lister: Callable[[Client, Source], tuple[list[dict[str, Any]], str]] = list_source,
        watcher: Callable[[Client, Source, str], Any] = Watch,
    ) -> None:
        self.updates: queue.Queue[Update] = queue.Queue()
        self._client = client
        self._sources = list(dict.fromkeys(sources))
        self._lister, self._watcher = lister, watcher
        self._stopped = threading.Event()
        self._open: dict[Source, Any] = {}
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []

    def start(self) -> Follower:
        for source in self._sources:
            thread = threading.Thread(
                target=self._follow, args=(source,), name=f"follow-{source}", daemon=True
            )
            thread.start()
            self._threads.append(thread)
        return self

    def stop(self) -> None:
        """Wake every thread (their open watches interrupted) and wait up to ``STOP_SECONDS``
        for them to end, so none is still reading when the client closes or the process exits
        (a daemon thread inside a TLS read at interpreter shutdown can abort the process)."""
        self._stopped.set()
        with self._lock:
            watches = list(self._open.values())
        for watch in watches:
            interrupt = getattr(watch, "interrupt", None)
            if interrupt is not None:
                interrupt()
        deadline = time.monotonic() + STOP_SECONDS
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(max(0.0, deadline - time.monotonic()))

    def __enter__(self) -> Follower:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    def _follow(self, source: Source) -> None:
        failures = 0
        polling = False  # the credentials may list but not watch: list every POLL_SECONDS
        while not self._stopped.is_set():
            listed = False
            try:
                items, version = self._lister(self._client, source)
                listed = True
                self.updates.put(Reset(source, items))
                failures = 0
                if polling:
                    self._stopped.wait(POLL_SECONDS)
                    continue
                while not self._stopped.is_set():
                    watch = self._watcher(self._client, source, version)
                    with self._lock:
                        self._open[source] = watch
                    if self._stopped.is_set():  # stopped before the watch could be interrupted
                        getattr(watch, "close", lambda: None)()
                        return
                    for kind, obj in watch:
                        if self._stopped.is_set():
                            return
                        version = str((obj.get("metadata") or {}).get("resourceVersion") or version)
                        if kind in ("ADDED", "MODIFIED", "DELETED"):
                            self.updates.put(Change(source, kind, obj))
            except KubeError as exc:
                if self._stopped.is_set():
                    return
                permanent = exc.status in PERMANENT
                if permanent and listed:
                    polling = True
                    continue
                self.updates.put(Broken(source, exc, permanent))
                if permanent:
                    return
            except Exception as exc:  # a dropped connection mid-stream, a garbled line
                if self._stopped.is_set():
                    return
                self.updates.put(Broken(source, KubeError(f"{_action(source)}: {exc}"), False))
            finally:
                with self._lock:
                    self._open.pop(source, None)
            self._stopped.wait(BACKOFF[min(failures, len(BACKOFF) - 1)])
            failures += 1
