"""The signal dispositions of a job started from an interactive shell, for tests that act as
the terminal (Ctrl-C, a closed window).

A suite started from a script's background job (`make test &`: the shell sets SIGINT and
SIGQUIT to "ignore") or under `nohup` (SIGHUP ignored) hands those ignores down to every
process it starts, and a command is right to keep an ignore it inherited: that is how `nohup
skat up` survives a closed terminal. A test that plays the terminal therefore starts its
command as a shell on a terminal would, with the default dispositions.
"""

from __future__ import annotations

import signal

TERMINAL_SIGNALS = (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP)


def as_a_terminal_job() -> None:
    """``preexec_fn`` for a command a test drives as a terminal: default SIGINT, SIGQUIT, SIGHUP."""
    for sig in TERMINAL_SIGNALS:
        signal.signal(sig, signal.SIG_DFL)
