"""The commands of ``tfjob-kit``, one module each, all registered the same way.

``<name>_command.py`` has ``register(subparsers)``, which adds the command's parser (and its own
sub-commands, if it has any) and sets ``run`` on each parser that names something to do, and the
``run(args) -> int`` functions themselves. ``cli.py`` builds the command line from ``COMMANDS``,
in that order, and calls ``args.run(args)``. A command module parses and prints; what it decides
lives in the library below it.

Exit codes (other tools rely on them): 0 nothing at or above the fail level, 1 findings at or
above it (malformed YAML included), 2 usage errors and paths that cannot be read.
"""

from __future__ import annotations

import argparse
import importlib
from types import ModuleType
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from tfjob_kit.kube.connection import Connection

    Subparsers: TypeAlias = argparse._SubParsersAction[argparse.ArgumentParser]

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2

# The commands in the order `tfjob-kit --help` lists them.
COMMANDS = (
    "validate",
    "explain",
    "convert",
    "rules",
    "schema",
    "status",
    "wait",
    "gpu",
    "webhooks",
    "images",
    "cluster",
    "completion",
)


class UsageError(Exception):
    """Bad arguments, unreadable paths: exit 2."""


def connection(args: argparse.Namespace) -> Connection:
    """The cluster a command's --kubeconfig and --context name (and K8S_AUTH_*); a bad value is
    a usage error."""
    from tfjob_kit.kube.api_errors import KubeError
    from tfjob_kit.kube.connection import Connection

    try:
        return Connection.from_options({"kubeconfig": args.kubeconfig, "context": args.context})
    except KubeError as exc:
        raise UsageError(str(exc)) from None


def load(name: str) -> ModuleType:
    """The module of command `name` (imported only when its parser is built)."""
    return importlib.import_module(f"tfjob_kit.commands.{name}_command")
