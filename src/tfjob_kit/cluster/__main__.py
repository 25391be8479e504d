"""``python -m tfjob_kit.cluster`` = ``tfjob-kit cluster``."""

from __future__ import annotations

import argparse
import sys

from tfjob_kit.cluster.cli import register


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tfjob_kit.cluster")
    sub = parser.add_subparsers(dest="command", required=True)
    register(sub)
    args = parser.parse_args(["cluster", *(sys.argv[1:] if argv is None else argv)])
    rc: int = args.func(args)
    return rc


if __name__ == "__main__":
    sys.exit(main())
