"""The argument parser every ``skat`` command (and every ``python -m skatbus...`` entry point)
is built with: one line per mistake, and ``--help`` that states each option's default.

Why a class of its own: argparse's own mistakes (``--rounds x``, an unknown option, a missing
argument) print the whole usage block, nine lines and more for ``skat tournament``, before the
one line that says what is wrong; a person reads the block and misses the line. Here a mistake
is that line, naming the command and where to read more, and exit code 2, as every other
mistake of the command line is (``skatbus.cli._guarded``).

Subparsers made by ``add_subparsers`` are of the parent's class (argparse's default
``parser_class``), so giving the top ``skat`` parser this class gives it to every subcommand
and every nested one (``skat iss check``) without each module having to ask for it.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from typing import Any, NoReturn

USAGE_ERROR = 2
"""Exit code of a mistake on the command line (argparse's, and the project's)."""

_SAYS_DEFAULT = re.compile(r"\bdefault\b(?!\s+(moves?|actions?)\b)", re.IGNORECASE)
"""A help text that states its default in words ("default: a free one", "ISkO (default)"),
not one that merely speaks of the default move played for a player who missed a turn."""
_BY_DEFAULT = re.compile(r"\bby default\b", re.IGNORECASE)


def shown_default(value: Any) -> str | None:
    """How a default reads in ``--help``, or None where stating it would say nothing: no value
    (None, empty), a switch's off state (a bool) or argparse's "leave unset" marker."""
    if value is None or value is argparse.SUPPRESS or isinstance(value, bool):
        return None
    if isinstance(value, str):
        return value or None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, Sequence):
        return ",".join(str(v) for v in value) or None
    return str(value)


class DefaultsHelpFormatter(argparse.HelpFormatter):
    """``--help`` with ``(default: X)`` after every option that has a meaningful default and
    whose help does not already say it. argparse's ``ArgumentDefaultsHelpFormatter`` would add
    ``(default: None)`` and ``(default: False)`` everywhere and repeat the defaults that the
    help texts already explain in words ("default: a free one")."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help
        if not text or text == argparse.SUPPRESS or _SAYS_DEFAULT.search(_BY_DEFAULT.sub("", text)):
            return text
        if action.nargs == 0 or (not action.option_strings and action.nargs not in ("?", "*")):
            return text  # a switch (its default is "off"), or a positional that must be given
        shown = shown_default(action.default)
        if shown is None:
            return text
        return f"{text} (default: {shown.replace('%', '%%')})"


class SkatParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose mistakes are one line on stderr and exit code 2, e.g.
    ``skat tournament: error: argument --rounds: invalid int value: 'x' (see skat tournament
    --help)``, and whose help shows the defaults (``DefaultsHelpFormatter``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", DefaultsHelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(USAGE_ERROR, one_line_error(self.prog, message))


def one_line_error(prog: str, message: str) -> str:
    """The line a mistake prints: the command, what is wrong (on one line, whatever argparse
    put in it) and where the options are explained."""
    return f"{prog}: error: {' '.join(message.split())} (see {prog} --help)\n"
