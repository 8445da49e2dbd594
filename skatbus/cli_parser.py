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
import sys
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

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        """As argparse's, noting the words parsed: ``error`` needs them to tell whose mistake an
        unknown argument is."""
        self._words = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        """One line and exit code 2. An unknown argument is the mistake of the (sub)command it
        was given to: argparse leaves it to the top parser, which would name ``skat`` and point
        to ``skat --help`` for ``skat tournament --bogus``."""
        words: list[str] | None = getattr(self, "_words", None)
        if message.startswith("unrecognized arguments") and words is not None:
            self.exit(USAGE_ERROR, one_line_error(self.innermost(words).prog, message))
        self.exit(USAGE_ERROR, one_line_error(self.prog, message))

    def innermost(self, argv: Sequence[str]) -> argparse.ArgumentParser:
        """The (sub)command parser ``argv`` names: each word that is a subcommand of the
        parser reached so far goes one level down (``skat iss export ...``: ``iss export``'s)."""
        parser: argparse.ArgumentParser = self
        for word in argv:
            chosen = next(
                (
                    action.choices[word]
                    for action in parser._actions
                    if isinstance(action, argparse._SubParsersAction) and word in action.choices
                ),
                None,
            )
            if chosen is not None:
                parser = chosen
        return parser


def seed_text(text: str) -> str:
    """``--seed``'s type where any text is a seed: an empty one would silently deal from
    ``""``, which is no seed anyone meant (the tournament and ``skat run`` refuse it too)."""
    if not text:
        raise argparse.ArgumentTypeError("must not be empty (leave it out for the default)")
    return text


def one_line_error(prog: str, message: str) -> str:
    """The line a mistake prints: the command, what is wrong (on one line, whatever argparse
    put in it) and where the options are explained."""
    return f"{prog}: error: {' '.join(message.split())} (see {prog} --help)\n"
