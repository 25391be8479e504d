"""Shell completion for ``tfjob-kit``, written from the command line's own parser (so it never
lags behind a new command, option or choice): commands and sub-commands, each one's options, and
the values of options and arguments that have choices. Anything else completes file names.

The script is for bash; zsh runs it through ``bashcompinit``.
"""

from __future__ import annotations

import argparse
import shlex

FUNCTION = "_tfjob_kit"


def _walk(
    parser: argparse.ArgumentParser, path: tuple[str, ...]
) -> list[tuple[tuple[str, ...], list[str], list[str], dict[str, list[str]]]]:
    """For the parser of each command path: its sub-commands, its options, and the choices of
    each option (and of its positional arguments, under "")."""
    commands: dict[str, argparse.ArgumentParser] = {}
    options: list[str] = []
    choices: dict[str, list[str]] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            commands.update(action.choices)
        elif action.option_strings:
            options.extend(action.option_strings)
            if action.choices:
                for option in action.option_strings:
                    choices[option] = [str(c) for c in action.choices]
        elif action.choices:
            choices.setdefault("", []).extend(str(c) for c in action.choices)
    found = [(path, sorted(commands), options, choices)]
    for name, sub in commands.items():
        found.extend(_walk(sub, (*path, name)))
    return found


def zsh(parser: argparse.ArgumentParser) -> str:
    """The same script for zsh, through its bash completion layer."""
    return "autoload -U +X compinit && compinit\nautoload -U +X bashcompinit && bashcompinit\n" + (
        bash(parser)
    )


def bash(parser: argparse.ArgumentParser) -> str:
    """The bash completion script of ``parser``'s program."""
    program = parser.prog
    tables = _walk(parser, ())
    known = " ".join(shlex.quote(" ".join(path)) for path, *_ in tables if path)
    words, values = [], []
    for path, commands, options, choices in tables:
        key = shlex.quote(" ".join(path))
        offered = " ".join(commands + choices.get("", []))
        words.append(
            f"    {key}) words={shlex.quote(offered)}; options={shlex.quote(' '.join(options))} ;;"
        )
        for option, allowed in choices.items():
            if option:
                values.append(
                    f"    {shlex.quote(' '.join(path) + ' ' + option)}) "
                    f'COMPREPLY=($(compgen -W {shlex.quote(" ".join(allowed))} -- "$cur")); '
                    "return ;;"
                )
    return "\n".join(
        [
            f"# {program} completion for bash (and zsh: autoload -U +X bashcompinit && "
            "bashcompinit first).",
            f'# eval "$({program} completion bash)", or save it as',
            f"# ~/.local/share/bash-completion/completions/{program}",
            f"{FUNCTION}() {{",
            '    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"',
            '    local path="" word words="" options="" i',
            "    # the command path so far: the words that name a command under the last one",
            "    for ((i = 1; i < COMP_CWORD; i++)); do",
            '        word="${COMP_WORDS[i]}"',
            f"        for known in {known}; do",
            '            if [[ "$known" == "${path:+$path }$word" ]]; then',
            '                path="$known"',
            "            fi",
            "        done",
            "    done",
            '    case "$path $prev" in',
            *values,
            "    esac",
            '    case "$path" in',
            *words,
            "    esac",
            '    if [[ "$cur" == -* ]]; then',
            '        COMPREPLY=($(compgen -W "$options" -- "$cur"))',
            '    elif [[ -n "$words" ]]; then',
            '        COMPREPLY=($(compgen -W "$words" -- "$cur"))',
            "    fi",
            "}",
            f"complete -o default -o bashdefault -F {FUNCTION} {program}",
            "",
        ]
    )
