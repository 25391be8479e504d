"""``tfjob-kit completion``: the shell completion script (``completion.py``)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from tfjob_kit import completion
from tfjob_kit.commands import EXIT_OK

if TYPE_CHECKING:
    from tfjob_kit.commands import Subparsers


def register(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "completion",
        help="print the shell completion script (bash, zsh)",
        description='Print the completion script of tfjob-kit for the shell: eval "$(tfjob-kit '
        'completion bash)" in ~/.bashrc (or save it as ~/.local/share/bash-completion/'
        'completions/tfjob-kit); eval "$(tfjob-kit completion zsh)" in ~/.zshrc. It completes '
        "commands, options and the values of options with choices; other arguments complete "
        "file names.",
    )
    parser.add_argument("shell", choices=["bash", "zsh"])
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from tfjob_kit.cli import build_parser

    script = completion.zsh if args.shell == "zsh" else completion.bash
    print(script(build_parser()), end="")
    return EXIT_OK
