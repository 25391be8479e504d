"""The ``tfjob-kit`` command: the parser built from ``commands/``, and its exit codes
(``commands/__init__.py`` says them)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from tfjob_kit import __version__, commands, extras
from tfjob_kit.commands import EXIT_OK, EXIT_USAGE, UsageError


def build_parser(only_validate: bool = False) -> argparse.ArgumentParser:
    """The command line. `only_validate`: with the validate command alone, which parses a
    validate command line the same (the other commands' modules not imported)."""
    parser = argparse.ArgumentParser(
        prog="tfjob-kit",
        description="Validate, explain and convert Kubeflow TFJobs; run a local cluster.",
    )
    parser.add_argument("--version", action="version", version=f"tfjob-kit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in ("validate",) if only_validate else commands.COMMANDS:
        commands.load(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    # A sub-command's name must be given in full, so a first argument `validate` is that command
    # and the rest is its subparser's (or, unrecognised, the top parser's, whose usage names no
    # command): the other commands' parsers are not needed.
    parser = build_parser(only_validate=bool(argv) and argv[0] == "validate")
    args = parser.parse_args(argv)
    try:
        code: int = args.run(args)
    except (UsageError, extras.MissingExtraError) as exc:
        print(f"tfjob-kit: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_OK
    return code


if __name__ == "__main__":
    sys.exit(main())
