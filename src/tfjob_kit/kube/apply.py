"""Idempotent, all-or-nothing server-side apply and deletion of prepared items.

apply: every object is first applied with dryRun=All (the API server validates, defaults and
admits it, nothing is stored); only when all of them pass are the changed ones applied for real.
Whether an object changes is decided by comparing what the server holds with what the dry run
returns, without the fields the server manages (resourceVersion, managedFields, status, ...).
"""

from __future__ import annotations

import copy
import hashlib
import json
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from tfjob_kit import redact
from tfjob_kit.kube.api_errors import KubeError
from tfjob_kit.kube.client import Client
from tfjob_kit.kube.jobs import Item
from tfjob_kit.kube.kinds import TRAINING_RUNTIME, TRAINJOB

T = TypeVar("T")
R = TypeVar("R")
WORKERS = 8
# Seconds a deletion waits for TrainJobs to go before it deletes their TrainingRuntime.
RUNTIME_WAIT = 300.0
# What this toolkit last applied, fingerprinted: a re-run whose body has the same fingerprint,
# with every value still in place, is known unchanged without asking the server.
DIGEST_ANNOTATION = "tfjob-kit.dev/applied-digest"
_SERVER_METADATA = (
    "managedFields",
    "resourceVersion",
    "uid",
    "generation",
    "creationTimestamp",
    "selfLink",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
)


@dataclass
class Outcome:
    item: Item
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    action: str  # created | updated | unchanged | deleted | absent

    @property
    def changed(self) -> bool:
        return self.action not in ("unchanged", "absent")

    def diff(self) -> dict[str, Any]:
        header = f"{self.item.describe()} ({self.item.where})"
        return {
            "before": comparable(self.before) if self.before else {},
            "after": comparable(self.after) if self.after else {},
            "before_header": header,
            "after_header": header,
        }


def comparable(obj: dict[str, Any]) -> dict[str, Any]:
    """The object without what the server manages: what a user's change can affect."""
    out = {k: copy.deepcopy(v) for k, v in obj.items() if k != "status"}
    metadata = out.get("metadata")
    if isinstance(metadata, dict):
        out["metadata"] = {k: v for k, v in metadata.items() if k not in _SERVER_METADATA}
    return out


def _owns(obj: dict[str, Any], field_manager: str) -> bool:
    return any(
        entry.get("manager") == field_manager and entry.get("operation") == "Apply"
        for entry in obj.get("metadata", {}).get("managedFields") or []
    )


def attempt_all(
    function: Callable[[T], R], items: Iterable[T], workers: int = WORKERS
) -> list[tuple[R | None, KubeError | None]]:
    """function over items on a thread pool, in order: each call's result or KubeError."""

    def attempt(x: T) -> tuple[R | None, KubeError | None]:
        try:
            return function(x), None
        except KubeError as exc:
            return None, exc

    todo = list(items)
    if len(todo) <= 1:
        return [attempt(x) for x in todo]
    with ThreadPoolExecutor(max_workers=min(workers, len(todo))) as pool:
        return list(pool.map(attempt, todo))


def _first_error(errors: list[KubeError], note: str = "") -> KubeError:
    """The first error, with the count of the others and ``note`` (a sentence or more)."""
    first = errors[0]
    more = f" (and {len(errors) - 1} more failures like it)" if len(errors) > 1 else ""
    return KubeError(f"{first}{more}{note}", first.reason, first.status)


def parallel(function: Callable[[T], R], items: Iterable[T], workers: int = WORKERS) -> list[R]:
    """function over items on a thread pool, results in order. Every call runs; the first
    KubeError (in item order) is raised with the count of the others."""
    results = attempt_all(function, items, workers)
    errors = [e for _, e in results if e is not None]
    if errors:
        raise _first_error(errors)
    return [r for r, _ in results]  # type: ignore[misc]


def _partly_applied(outcomes: list[Outcome], errors: list[KubeError | None]) -> str:
    """What a failed apply stored before it failed, as the server confirmed it."""
    done = [o.item.describe() for o, e in zip(outcomes, errors, strict=True) if e is None]
    failed = [o.item.describe() for o, e in zip(outcomes, errors, strict=True) if e is not None]
    shown = ", ".join(done[:5]) + (f" and {len(done) - 5} more" if len(done) > 5 else "")
    applied = (
        f"{len(done)} of the {len(outcomes)} to apply {'was' if len(done) == 1 else 'were'} "
        f"applied ({shown})"
        if done
        else f"none of the {len(outcomes)} to apply was confirmed applied"
    )
    return (
        f".\n{applied}; {len(failed)} failed (first: {failed[0]}): whether those were stored "
        "is unknown. Once the cause is fixed, run the task again: it applies what is missing or "
        "different and leaves the rest unchanged"
    )


def _existing(client: Client, items: list[Item]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """What the server holds now, one list per resource and namespace."""
    found: dict[tuple[str, str, str], dict[str, Any]] = {}
    for resource, namespace in {(i.resource, i.namespace) for i in items}:
        for obj in client.list_objects(resource, namespace):
            found[(resource.plural, namespace, obj["metadata"]["name"])] = obj
    return found


def _key(item: Item) -> tuple[str, str, str]:
    return item.resource.plural, item.namespace, item.name


def digest(body: dict[str, Any]) -> str:
    """A fingerprint of what is applied (without the fingerprint annotation itself).

    Secret env values are left out (masked): the fingerprint is shown with the object, and one
    taken over a weak password would let a reader of the log test guesses. A changed secret is
    still applied: _already_applied also compares every value with what the server holds."""
    content = redact.mask(body)
    metadata = content.get("metadata", {})
    (metadata.get("annotations") or {}).pop(DIGEST_ANNOTATION, None)
    if metadata.get("annotations") == {}:
        del metadata["annotations"]
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def contains(have: Any, want: Any) -> bool:
    """Whether `have` holds every value of `want` (maps may have more keys)."""
    if isinstance(want, dict):
        return isinstance(have, dict) and all(
            k in have and contains(have[k], v) for k, v in want.items()
        )
    if isinstance(want, list):
        return (
            isinstance(have, list)
            and len(have) == len(want)
            and all(contains(h, w) for h, w in zip(have, want, strict=True))
        )
    return bool(have == want and type(have) is type(want))


def _already_applied(
    before: dict[str, Any] | None, body: dict[str, Any], field_manager: str
) -> bool:
    """This manager last applied exactly this body and every value is still in place: the
    apply would be a no-op, and the server need not be asked."""
    if before is None or not _owns(before, field_manager):
        return False
    annotations = before.get("metadata", {}).get("annotations") or {}
    return annotations.get(DIGEST_ANNOTATION) == body["metadata"]["annotations"][
        DIGEST_ANNOTATION
    ] and contains(comparable(before), comparable(body))


def apply_items(
    client: Client,
    items: list[Item],
    *,
    field_manager: str,
    force: bool = False,
    check_mode: bool = False,
    preflight: Callable[[list[tuple[Item, bool]]], None] | None = None,
) -> list[Outcome]:
    """Apply all items or none. In check mode nothing is stored; the outcomes say what would
    change.

    preflight, when given, is called with the items this apply may change (not those this field
    manager last applied exactly so), each with whether it is on the server already, at the
    same time as the dry runs (in a thread of its own); what it raises stops everything before
    anything is stored (a dry run's own error goes first)."""
    existing = _existing(client, items)
    for item in items:
        annotations = item.body.setdefault("metadata", {}).setdefault("annotations", {})
        annotations[DIGEST_ANNOTATION] = digest(item.body)
    settled = {
        id(i) for i in items if _already_applied(existing.get(_key(i)), i.body, field_manager)
    }
    checking = None
    pool = ThreadPoolExecutor(max_workers=1) if preflight is not None else None
    if pool is not None and preflight is not None:
        changing = [(i, _key(i) in existing) for i in items if id(i) not in settled]
        checking = pool.submit(preflight, changing)

    def dry_run(item: Item) -> dict[str, Any]:
        return client.apply(
            item.resource, item.body, field_manager=field_manager, force=force, dry_run=True
        )

    pending = [i for i in items if id(i) not in settled]
    # A TrainJob whose runtime this run creates is dry-run once that runtime is stored.
    deferred = [i for i in pending if i.needs is not None and _key(i.needs) not in existing]
    try:
        first = [i for i in pending if i not in deferred]
        tried = attempt_all(dry_run, first)
        errors = [e for _, e in tried if e is not None]
        if errors:
            raise _first_error(errors, ".\nNothing was applied: the dry runs come first")
        planned = {id(i): r for i, (r, _) in zip(first, tried, strict=True)}
    finally:
        if pool is not None:
            pool.shutdown(wait=True)
    if checking is not None:
        checking.result()
    stored: dict[int, dict[str, Any]] = {}
    if deferred and not check_mode:
        stored, dried = _store_needed(client, deferred, dry_run, field_manager, force)
        planned.update({**stored, **dried})
    elif deferred:  # check mode: what the TrainJob would be, unverified by a dry run
        planned.update({id(i): copy.deepcopy(i.body) for i in deferred})
    outcomes = _outcomes(items, existing, planned)
    if check_mode:
        return outcomes
    # Apply what changes, and what this field manager does not own yet (so that a later
    # removal of a field from the manifest removes it from the object).
    todo = [
        o
        for o in outcomes
        if (o.changed or o.before is None or not _owns(o.before, field_manager))
        and id(o.item) not in stored
    ]

    def really(outcome: Outcome) -> dict[str, Any]:
        return client.apply(
            outcome.item.resource, outcome.item.body, field_manager=field_manager, force=force
        )

    applied = attempt_all(really, todo)
    errors = [e for _, e in applied if e is not None]
    if errors:
        raise _first_error(errors, _partly_applied(todo, [e for _, e in applied]))
    for outcome, (after, _) in zip(todo, applied, strict=True):
        outcome.after = after
    return outcomes


def _outcomes(
    items: list[Item],
    existing: dict[tuple[str, str, str], dict[str, Any]],
    planned: dict[int, dict[str, Any] | None],
) -> list[Outcome]:
    """Each item's outcome: what the server holds, what the dry run (or the store) returned."""
    outcomes = []
    for item in items:
        before = existing.get(_key(item))
        after = planned.get(id(item), before)
        if before is None:
            action = "created"
        elif after is not None and comparable(before) != comparable(after):
            action = "updated"
        else:
            action = "unchanged"
        outcomes.append(Outcome(item, before, after, action))
    return outcomes


def _store_needed(
    client: Client,
    deferred: list[Item],
    dry_run: Callable[[Item], dict[str, Any]],
    field_manager: str,
    force: bool,
) -> tuple[dict[int, dict[str, Any]], dict[int, dict[str, Any]]]:
    """Store the runtimes the deferred TrainJobs need (Trainer's webhook refuses a TrainJob whose
    runtime does not exist), then dry-run the TrainJobs. When one is refused, the runtimes just
    created are deleted again, and nothing is left applied. Returns the stored runtimes and the
    TrainJobs' dry runs, by item."""
    needed = list({id(i.needs): i.needs for i in deferred if i.needs is not None}.values())
    stored = parallel(
        lambda i: client.apply(i.resource, i.body, field_manager=field_manager, force=force),
        needed,
    )
    tried = attempt_all(dry_run, deferred)
    errors = [e for _, e in tried if e is not None]
    if errors:
        for runtime in needed:
            client.delete(runtime.resource, runtime.namespace, runtime.name)
        names = ", ".join(r.describe() for r in needed)
        raise _first_error(
            errors,
            f".\nNothing was applied: {names}, stored for the TrainJobs' dry runs (Trainer "
            "refuses a TrainJob whose runtime does not exist), "
            f"{'was' if len(needed) == 1 else 'were'} deleted again",
        )
    dried = {id(i): r for i, (r, _) in zip(deferred, tried, strict=True) if r is not None}
    return {id(i): obj for i, obj in zip(needed, stored, strict=True)}, dried


def delete_items(
    client: Client,
    items: list[Item],
    *,
    check_mode: bool = False,
    runtime_timeout: float = RUNTIME_WAIT,
    sleep: Callable[[float], None] = time.sleep,
) -> list[Outcome]:
    """Delete the items' objects; the garbage collector removes their pods and services
    (foreground propagation: the job disappears after what it owns). A TrainingRuntime goes
    last, once the TrainJobs deleted with it are gone: Trainer's webhook refuses every update of
    a TrainJob whose runtime is missing, the garbage collector's removal of its
    foregroundDeletion finalizer too, so a TrainJob whose runtime went first is never deleted."""
    existing = _existing(client, items)
    outcomes = [
        Outcome(i, existing.get(_key(i)), None, "deleted" if _key(i) in existing else "absent")
        for i in items
    ]
    if check_mode:
        return outcomes

    def remove(outcome: Outcome) -> bool:
        item = outcome.item
        return client.delete(item.resource, item.namespace, item.name)

    todo = [o for o in outcomes if o.action == "deleted"]
    runtimes = [o for o in todo if o.item.resource is TRAINING_RUNTIME]
    first = [o for o in todo if o.item.resource is not TRAINING_RUNTIME]
    for outcome, was_there in zip(first, parallel(remove, first), strict=True):
        if not was_there:
            outcome.action = "absent"
    if runtimes:
        _until_gone(
            client, [o.item for o in first if o.item.resource is TRAINJOB], runtime_timeout, sleep
        )
    for outcome, was_there in zip(runtimes, parallel(remove, runtimes), strict=True):
        if not was_there:
            outcome.action = "absent"
    return outcomes


def _until_gone(
    client: Client, trainjobs: list[Item], timeout: float, sleep: Callable[[float], None]
) -> None:
    """Until the TrainJobs are gone; a KubeError naming those left when ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while True:
        left = [i for i in trainjobs if client.get(i.resource, i.namespace, i.name) is not None]
        if not left:
            return
        if time.monotonic() >= deadline:
            raise KubeError(
                f"{', '.join(i.describe() for i in left)} still being deleted after {timeout:g}s; "
                "its TrainingRuntime was left in place so that the deletion can finish (Trainer's "
                "webhook refuses every update of a TrainJob whose runtime is gone); run the task "
                "again once it is gone",
                "timeout",
            )
        sleep(1.0)
