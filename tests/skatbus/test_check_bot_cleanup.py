"""After a check, check-bot leaves no table prompting the bot: every table it opened that has not
closed is paused (``table_paused``), so the bot hears nothing more from them."""

from __future__ import annotations

import pytest
from nats.aio.client import Client

from protocol.events import TableClosed, TablePaused
from services.store import EventStore
from tests.bus import Stack
from tests.skatbus.test_check_bot import _check, _skat_bot


@pytest.mark.timeout(200)
async def test_check_bot_pauses_its_tables_when_done(stack: Stack, nc: Client) -> None:
    code, out = await _check(["cleo", "--nats", stack.url, "--only", "msgpack"], _skat_bot("random", "cleo"))
    assert code == 0, out
    store = EventStore(nc)
    tables = [t for t in await store.open_tables() if t.startswith("check-")]
    assert tables, "check-bot opened no table"
    for table in tables:
        log = [s.event for s in await store.read(table)]
        events = [e for e in log if isinstance(e, TablePaused | TableClosed)]
        assert events, (table, [type(e).__name__ for e in log][-5:])
