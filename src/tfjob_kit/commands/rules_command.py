"""``tfjob-kit rules``: every rule, its default severity and what it checks (``rules/``)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from tfjob_kit import rules
from tfjob_kit.commands import EXIT_OK

if TYPE_CHECKING:
    from tfjob_kit.commands import Subparsers


def register(sub: Subparsers) -> None:
    parser = sub.add_parser("rules", help="list the rules")
    parser.add_argument("--format", choices=["text", "json"], default="text")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    rows = [
        (rule_id, str(rules.default_severity(rule_id)), rules.summary(rule_id))
        for rule_id in rules.all_rule_ids()
    ]
    if args.format == "json":
        print(json.dumps([{"id": r, "severity": s, "summary": d} for r, s, d in rows], indent=2))
    else:
        width = max(len(r) for r, _, _ in rows)
        for rule_id, severity, text in rows:
            print(f"{rule_id:<{width}}  {severity:<7}  {text}")
    return EXIT_OK
