"""Structured logs: JSON lines when not on a terminal, readable lines on one.

Services bind ``service``, and per table ``table`` and ``deal``, so every line can be traced.
A line per event is logged at debug level only: a structlog JSON line costs 10-20 times
more than encoding the event itself (docs/design notes), so info is kept for lifecycle and
problems.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import Iterator

import structlog


def configure(level: str | None = None, json: bool | None = None) -> None:
    level_name = (level or os.environ.get("SKAT_LOG_LEVEL", "info")).upper()
    numeric = getattr(logging, level_name, logging.INFO)
    as_json = (not sys.stderr.isatty()) if json is None else json
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer() if as_json else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        # One write per line, so the lines of processes sharing a stderr never interleave.
        logger_factory=structlog.WriteLoggerFactory(file=_STDERR),  # type: ignore[arg-type]
        cache_logger_on_first_use=True,
    )
    quiet_client_library()


class _Stderr:
    """Whatever ``sys.stderr`` is when a line is written, not when logging was configured: a
    process that replaces its stderr (a test's capture, a daemon's redirect) must not leave
    every later log line writing into a closed file, which raises where the line was logged."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


_STDERR = _Stderr()


@contextlib.contextmanager
def for_a_command() -> Iterator[None]:
    """Log lines of a command that prints its results on stdout (a bot's ``bot_fault`` in
    ``skatbus.evaluate``) go to stderr, as every service's do: an unconfigured structlog prints
    them on stdout, among the results. Only when logging was not set up already (a caller's, a
    test's capture), and undone afterwards, so that a command run in-process leaves no trace."""
    ours = not structlog.is_configured()
    if ours:
        configure(level=os.environ.get("SKAT_LOG_LEVEL", "warning"))
    try:
        yield
    finally:
        if ours:
            structlog.reset_defaults()


def get(**bound: object) -> structlog.typing.FilteringBoundLogger:
    return structlog.get_logger().bind(**bound)  # type: ignore[no-any-return]


class _OneLine(logging.Formatter):
    """A record as one line: the message and the exception's name and text, no traceback."""

    def format(self, record: logging.LogRecord) -> str:
        exc = record.exc_info[1] if record.exc_info else None
        text = record.getMessage() + (f": {type(exc).__name__}: {exc}" if exc is not None else "")
        return " ".join(text.split())


def _not_a_late_answer(record: logging.LogRecord) -> bool:
    """False for nats-py's InvalidStateError: a reply or PONG arriving for a future the client
    already cancelled while closing (seen on Ctrl-C). Nothing is lost and nothing can be done."""
    exc = record.exc_info[1] if record.exc_info else None
    return not isinstance(exc, asyncio.InvalidStateError)


def quiet_client_library() -> None:
    """nats-py reports some errors of its own (e.g. a reply arriving while a connection is being
    closed) to the stdlib ``nats`` logger with a whole traceback, which Python prints to stderr
    unformatted. Route them through one line each instead (idempotent): they are the client's
    to say, but never a traceback on a user's terminal."""
    nats_log = logging.getLogger("nats")
    if not any(isinstance(h.formatter, _OneLine) for h in nats_log.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(_OneLine())
        handler.addFilter(_not_a_late_answer)
        nats_log.addHandler(handler)
        nats_log.propagate = False
