"""Logs written before partitions existed (``skat.log.<table>.<event>``, no partition token)
stay readable: a table's read, reads by kind, the open-table scan and ``has_event``."""

from __future__ import annotations

import pytest
from nats.aio.client import Client

from protocol.events import MSGPACK, TAGS
from protocol.skat.rules import Rules
from protocol.subjects import event_name, log_subject, parse_log_subject, partition_of
from services.store import EventStore
from tests.services.test_table_over_bus import pure_log


async def test_a_log_from_before_partitions_is_still_read(nats_server: object, nc: Client) -> None:
    store = EventStore(nc)
    await store.ensure_stream()
    log = pure_log("old", Rules(rounds=1), "old", "old")
    for index, event in enumerate(log[:3]):  # opened, dealt, one bid: as an older version wrote them
        subject = f"skat.log.old.{event_name(TAGS[type(event)])}"
        await store.js.publish(subject, MSGPACK.encode(event), headers={"Nats-Msg-Id": f"old:{index}"})
    assert [s.event for s in await store.read("old")] == log[:3]
    assert [s.event for s in await store.read("old", kind="deal_dealt")] == [log[1]]
    assert "old" in await store.open_tables()
    assert await store.has_event("old", "table_opened")
    assert parse_log_subject("skat.log.old.bid") == ("old", "bid")
    assert parse_log_subject(log_subject("old", "bid")) == ("old", "bid")
    assert log_subject("old", "bid").endswith(f".{partition_of('old')}")


def test_a_partition_token_that_is_not_the_tables_own_is_refused() -> None:
    """The partition is derived from the table id, never taken from the subject: a message on
    another partition's subject (forged, or by a writer with other ideas) is not this table's."""
    own = partition_of("old")
    other = (own + 1) % 8
    with pytest.raises(ValueError):
        parse_log_subject(f"skat.log.old.bid.{other}")
    for bad in ("skat.log.old.bid.*", "skat.log.old.bid.>", "skat.log.*.bid.1", "skat.log.old.bid.1.2"):
        with pytest.raises(ValueError):
            parse_log_subject(bad)
