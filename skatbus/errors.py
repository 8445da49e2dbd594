"""The one exception a ``skat`` command raises for a mistake in what it was given.

``skatbus.cli.main`` turns it into one line on stderr and exit code 2, the same as argparse
does for a malformed flag, so a user who mistyped something reads what to change, not a
traceback. Anything else that escapes a command is a bug and keeps its traceback.
"""

from __future__ import annotations


class UsageError(Exception):
    """A command-line or configuration mistake: the message is the whole line shown."""
