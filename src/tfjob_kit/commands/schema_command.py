"""``tfjob-kit schema``: the bundled JSON Schema (``schema.py``) or the CRD generated from it
(``crd.py``)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from tfjob_kit import schema
from tfjob_kit.commands import EXIT_OK
from tfjob_kit.commands.output import dump_yaml, write

if TYPE_CHECKING:
    from tfjob_kit.commands import Subparsers


def register(sub: Subparsers) -> None:
    parser = sub.add_parser("schema", help="print the bundled JSON Schema or the generated CRD")
    parser.add_argument("what", choices=["json", "crd", "crd-json-schema"])
    parser.add_argument("--format", choices=["yaml", "json"], default="yaml", help="for crd")
    parser.add_argument("-o", "--output", metavar="FILE")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from tfjob_kit import crd

    if args.what == "crd":
        text = (
            dump_yaml([crd.crd()])
            if args.format == "yaml"
            else json.dumps(crd.crd(), indent=2) + "\n"
        )
    elif args.what == "crd-json-schema":
        text = json.dumps(crd.openapi_v3_schema(), indent=2) + "\n"
    else:
        text = json.dumps(schema.bundled_schema(), indent=2) + "\n"
    write(text, args.output)
    return EXIT_OK
