"""Structured logs: JSON lines when not on a terminal, readable lines on one.

Services bind ``service``, and per table ``table`` and ``deal``, so every line can be traced.
A line per event is logged at debug level only: a structlog JSON line costs 10-20 times
more than encoding the event itself (docs/design notes), so info is kept for lifecycle and
problems.
"""

from __future__ import annotations

import logging
import os
import sys

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
        logger_factory=structlog.WriteLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )


def get(**bound: object) -> structlog.typing.FilteringBoundLogger:
    return structlog.get_logger().bind(**bound)  # type: ignore[no-any-return]
