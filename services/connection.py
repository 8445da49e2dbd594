"""Connections to the broker: every long-running process connects through here, so that
connection problems are logged (never silent) and reconnects are retried forever."""

from __future__ import annotations

from typing import Any

import nats
from nats.aio.client import Client

from . import logs


async def connect(url: str, name: str, **options: Any) -> Client:
    """A connection whose problems are logged, never silent (slow consumers are only reported
    through ``error_cb``)."""
    log = logs.get(connection=name)

    async def error_cb(exc: Exception) -> None:
        log.warning("nats_error", error=repr(exc))

    async def disconnected_cb() -> None:
        if nc.is_closed or nc.is_draining:
            log.debug("nats_disconnected")  # we are shutting down
        else:
            log.warning("nats_disconnected")

    async def reconnected_cb() -> None:
        log.info("nats_reconnected", url=str(nc.connected_url.netloc if nc.connected_url else ""))

    nc = await nats.connect(
        url,
        name=name,
        error_cb=error_cb,
        disconnected_cb=disconnected_cb,
        reconnected_cb=reconnected_cb,
        max_reconnect_attempts=-1,
        reconnect_time_wait=0.5,
        **options,
    )
    return nc
