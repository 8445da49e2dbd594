"""Property tests of the event codecs and of reading logs from the outside world.

Events are the protocol: they are stored, sent over NATS, and replayed by other services and
by other languages' bots. So every event must survive both codecs unchanged, an event from a
newer writer must be skipped rather than fatal, and bytes or logs that are broken or forged
must fail in the one documented way (``msgspec.DecodeError`` / ``ValidationError`` for bytes,
``LogError`` for logs), never with a stray ``KeyError`` or ``TypeError`` that crashes a service.
"""

from __future__ import annotations

import math
import random
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from msgspec import inspect as mi

from protocol.events import (
    JSON,
    MSGPACK,
    Codec,
    Envelope,
    Event,
    TableOpened,
    UnknownEvent,
)
from protocol.registry import event_types
from protocol.skat.rules import Rules
from protocol.skat.table import LogError, fold

try:  # tests/ is not a package: pytest's default import mode puts it on sys.path
    from test_properties import SEEDS, TABLE_RULES, run_table, snapshot
except ImportError:  # pragma: no cover - rootdir-relative import mode
    from tests.protocol.test_properties import SEEDS, TABLE_RULES, run_table, snapshot

CODECS = (MSGPACK, JSON)
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FEW = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])

KNOWN = set(event_types())  # every registered game's tags: the codec knows them all


def codec_ids(c: Codec) -> str:
    return c.format


# --- strategies for every event, built from the event types themselves ------------------------

RULES = st.builds(
    Rules,
    profile=st.sampled_from(["isko", "classic"]),
    kontra=st.booleans(),
    ramsch=st.booleans(),
    bock=st.booleans(),
    bock_triggers=st.lists(
        st.sampled_from(["kontra_lost", "re", "sixty_all", "grand_hand_won", "schneider_lost"]), max_size=5
    ).map(tuple),
    seeger_fabian=st.booleans(),
    rounds=st.integers(0, 2**31),
    players=st.sampled_from([3, 4]),
    turn_seconds=st.floats(min_value=1e-3, max_value=1e9, allow_nan=False, allow_infinity=False),
)
"""Rules as ``Rules.__post_init__`` allows them (finite turn seconds only)."""

INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
_cache: dict[type, st.SearchStrategy[Any]] = {Rules: RULES}


def from_type_info(t: mi.Type) -> st.SearchStrategy[Any]:
    """A strategy for any value of a msgspec type (ints within 64 bits: the msgpack range)."""
    if isinstance(t, mi.IntType):
        return INT64
    if isinstance(t, mi.BoolType):
        return st.booleans()
    if isinstance(t, mi.StrType):
        return st.text(max_size=12)
    if isinstance(t, mi.FloatType):
        return st.floats(allow_nan=False, allow_infinity=False)
    if isinstance(t, mi.NoneType):
        return st.none()
    if isinstance(t, mi.LiteralType):
        return st.sampled_from(t.values)
    if isinstance(t, mi.EnumType):
        return st.sampled_from(list(t.cls))
    if isinstance(t, mi.ListType):
        return st.lists(from_type_info(t.item_type), max_size=4)
    if isinstance(t, mi.VarTupleType):
        return st.lists(from_type_info(t.item_type), max_size=4).map(tuple)
    if isinstance(t, mi.TupleType):
        return st.tuples(*(from_type_info(x) for x in t.item_types))
    if isinstance(t, mi.UnionType):
        return st.one_of(*(from_type_info(x) for x in t.types))
    if isinstance(t, mi.DictType):
        return st.dictionaries(from_type_info(t.key_type), from_type_info(t.value_type), max_size=3)
    if isinstance(t, mi.StructType):
        return struct_strategy(t.cls)
    if isinstance(t, mi.AnyType):  # a game's options by name (table_opened/2): plain JSON values
        return st.one_of(st.integers(-5, 500), st.booleans(), st.text(max_size=6), st.none())
    raise NotImplementedError(f"no strategy for {t!r}")


def struct_strategy(cls: type) -> st.SearchStrategy[Any]:
    if cls not in _cache:
        info = mi.type_info(cls)
        assert isinstance(info, mi.StructType)
        _cache[cls] = st.builds(cls, **{f.name: from_type_info(f.type) for f in info.fields})
    return _cache[cls]


ANY_EVENT: st.SearchStrategy[Event] = st.one_of(*(struct_strategy(t) for t in event_types().values()))

JSONISH = st.recursive(
    st.none() | st.booleans() | INT64 | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
"""Any value both codecs can carry: what a random payload may hold."""


def table_log(rules: Rules, play: int) -> list[Event]:
    log, _ = run_table(rules, random.Random(play), max_deals=3, p_timeout=0.05, p_abort=0.002)
    return log


# --- round trips ---------------------------------------------------------------------------


@FEW
@given(rules=TABLE_RULES, play=SEEDS)
def test_every_logged_event_round_trips(rules: Rules, play: int) -> None:
    """Property 5. Every event a real table writes comes back equal (and of the same type) from
    both codecs, and the decoded log folds to the same table."""
    log = table_log(rules, play)
    for codec in CODECS:
        decoded = [codec.decode(codec.encode(e)) for e in log]
        for e, d in zip(log, decoded):
            assert type(d) is type(e) and d == e, (codec.format, e, d)
        assert snapshot(fold(decoded)) == snapshot(fold(log))  # type: ignore[arg-type]
    assert [JSON.decode(JSON.encode(MSGPACK.decode(MSGPACK.encode(e)))) for e in log] == log  # type: ignore[arg-type]


@SETTINGS
@given(event=ANY_EVENT)
def test_any_well_typed_event_round_trips(event: Event) -> None:
    """Property 5. Beyond what tables write today: any value the event schema admits (odd
    strings, 64-bit ints, optional fields set or not) survives both codecs unchanged."""
    for codec in CODECS:
        back = codec.decode(codec.encode(event))
        assert type(back) is type(event) and back == event


def test_every_constructible_rules_survives_json() -> None:
    """Either ``Rules`` refuses a non-finite turn time, or a table opened with it round-trips
    (JSON has no infinity: it would write null and the log would be unreadable from event 0)."""
    try:
        rules = Rules(turn_seconds=math.inf)
    except ValueError:
        return
    opened = TableOpened(table="t", players=["a", "b", "c"], rules=rules, seed="s")
    assert MSGPACK.decode(MSGPACK.encode(opened)) == opened
    assert JSON.decode(JSON.encode(opened)) == opened


# --- unknown events ------------------------------------------------------------------------

UNKNOWN_NAMES = (
    st.tuples(st.text(max_size=20), st.integers(min_value=-(2**31), max_value=2**31))
    | st.tuples(
        st.sampled_from(sorted({tag.partition("/")[0] for tag in KNOWN})), st.integers(min_value=2, max_value=99)
    )
).filter(lambda nv: f"{nv[0]}/{nv[1]}" not in KNOWN)  # table_opened/2 is known: a version 2 may be too
"""Unknown types, and known types at a version this reader does not know."""


def envelope(codec: Codec, name: str, version: int, payload: Any) -> bytes:
    enc = msgspec.json.encode if codec is JSON else msgspec.msgpack.encode
    return enc(Envelope(name, version, msgspec.Raw(enc(payload))))


@pytest.mark.parametrize("codec", CODECS, ids=codec_ids)
@SETTINGS
@given(nv=UNKNOWN_NAMES, payload=JSONISH)
def test_unknown_type_or_version_decodes_to_unknown_event(codec: Codec, nv: tuple[str, int], payload: Any) -> None:
    """Property 5. A reader older than the writer must skip what it does not know, whatever the
    payload holds, instead of failing the whole log."""
    name, version = nv
    assert codec.decode(envelope(codec, name, version, payload)) == UnknownEvent(name, version)


@FEW
@given(rules=TABLE_RULES, play=SEEDS, data=st.data())
def test_fold_skips_unknown_events(rules: Rules, play: int, data: st.DataObject) -> None:
    """Property 5. Unknown events anywhere in a log (even before table_opened) change nothing
    but the event counters."""
    log = table_log(rules, play)
    spots = data.draw(st.lists(st.integers(0, len(log)), max_size=8))
    mixed: list[Event | UnknownEvent] = list(log)
    for spot in sorted(spots, reverse=True):
        mixed.insert(spot, UnknownEvent("from_the_future", 7))
    plain, skipped = fold(log), fold(mixed)
    assert snapshot(skipped, counts=False) == snapshot(plain, counts=False)
    assert skipped.unknown == len(spots) and skipped.events == len(mixed)
    for codec in CODECS:  # the same, through the bytes a newer writer would produce
        raw = [
            envelope(codec, "from_the_future", 7, {"x": 1}) if isinstance(e, UnknownEvent) else codec.encode(e)
            for e in mixed
        ]
        assert snapshot(fold(codec.decode(b) for b in raw), counts=False) == snapshot(plain, counts=False)


# --- malformed bytes -----------------------------------------------------------------------


def decode_or_msgspec_error(codec: Codec, data: bytes) -> None:
    """The documented failure of ``Codec.decode``: a DecodeError (ValidationError is one)."""
    try:
        got = codec.decode(data)
    except msgspec.DecodeError:
        return
    assert isinstance(got, (Event, UnknownEvent))


@pytest.mark.parametrize("codec", CODECS, ids=codec_ids)
@SETTINGS
@given(data=st.binary(max_size=64))
def test_random_bytes_raise_only_decode_errors(codec: Codec, data: bytes) -> None:
    """Property 5. Garbage on the wire fails in the one way a service catches."""
    decode_or_msgspec_error(codec, data)


MUTATIONS = st.sampled_from(["flip", "truncate", "insert", "delete", "set"])


@pytest.mark.parametrize("codec", CODECS, ids=codec_ids)
@SETTINGS
@given(event=ANY_EVENT, how=MUTATIONS, where=st.floats(0, 1), byte=st.integers(0, 255))
def test_mutated_encodings_raise_only_decode_errors(
    codec: Codec, event: Event, how: str, where: float, byte: int
) -> None:
    """Property 5. Corrupted real encodings (a flipped, lost or extra byte, a cut message) decode
    to some event or fail with a msgspec error; these reach deeper into the decoders than noise."""
    data = bytearray(codec.encode(event))
    i = min(int(where * len(data)), len(data) - 1)
    if how == "flip":
        data[i] ^= byte or 1
    elif how == "truncate":
        del data[i:]
    elif how == "insert":
        data.insert(i, byte)
    elif how == "delete":
        del data[i]
    else:
        data[i] = byte
    decode_or_msgspec_error(codec, bytes(data))


@pytest.mark.parametrize("codec", CODECS, ids=codec_ids)
@SETTINGS
@given(tag=st.sampled_from(sorted(KNOWN)), payload=JSONISH, keep_tag=st.booleans())
def test_known_envelope_with_bad_payload_raises_validation_error(
    codec: Codec, tag: str, payload: Any, keep_tag: bool
) -> None:
    """Property 5. A known type with a payload of the wrong shape is an error (never silently an
    UnknownEvent, never a crash)."""
    name, _, version = tag.partition("/")
    if keep_tag and isinstance(payload, dict):
        payload = {**payload, "type": tag}
    data = envelope(codec, name, int(version), payload)
    try:
        got = codec.decode(data)
    except msgspec.ValidationError:
        return
    assert type(got) is event_types()[tag]  # only a payload that really fits decodes


# --- forged or damaged logs ----------------------------------------------------------------


def _replaced(value: Any, name: str, new: Any) -> Any:
    """``value`` with one field changed; unchanged where the struct itself refuses the new
    value (``Rules`` checks its own invariants, so such a log cannot even be written)."""
    try:
        return msgspec.structs.replace(value, **{name: new})
    except ValueError:
        return value


def nudged(t: mi.Type, value: Any) -> st.SearchStrategy[Any]:
    """A value near ``value`` (an off-by-one, a card doubled, dropped or replaced in a list) or,
    sometimes, any value of its type: near misses get past the first checks and reach deeper."""
    anything = from_type_info(t)
    if isinstance(t, mi.IntType):
        return st.integers(-2, 2).map(lambda d: value + d) | anything
    if isinstance(t, mi.ListType) and value:
        items = list(value)
        return st.one_of(
            st.integers(0, len(items) - 1).map(lambda i: items + [items[i]]),
            st.integers(0, len(items) - 1).map(lambda i: items[:i] + items[i + 1 :]),
            st.tuples(st.integers(0, len(items) - 1), from_type_info(t.item_type)).map(
                lambda iv: items[: iv[0]] + [iv[1]] + items[iv[0] + 1 :]
            ),
            anything,
        )
    if isinstance(t, mi.TupleType):
        return st.integers(0, len(t.item_types) - 1).flatmap(
            lambda i: nudged(t.item_types[i], value[i]).map(lambda v: (*value[:i], v, *value[i + 1 :]))
        )
    if isinstance(t, mi.StructType) and value is not None:
        fields = {f.name: f.type for f in t.fields}
        return st.sampled_from(sorted(fields)).flatmap(
            lambda name: nudged(fields[name], getattr(value, name)).map(lambda v: _replaced(value, name, v))
        )
    if isinstance(t, mi.UnionType):
        inner = [x for x in t.types if not isinstance(x, mi.NoneType)]
        if value is not None and len(inner) == 1:
            return nudged(inner[0], value) | anything
    return anything


def field_values(event: Event) -> dict[str, st.SearchStrategy[Any]]:
    info = mi.type_info(type(event))
    assert isinstance(info, mi.StructType)
    return {f.name: nudged(f.type, getattr(event, f.name)) for f in info.fields}


@FEW
@given(rules=TABLE_RULES, play=SEEDS, data=st.data())
def test_damaged_logs_fail_only_with_log_error(rules: Rules, play: int, data: st.DataObject) -> None:
    """Property 5/4. A log read back from storage or another service may be forged or damaged
    (a field changed, events lost, doubled, swapped, foreign events inserted). Folding it must
    either work or raise ``LogError`` naming the event: anything else crashes the service."""
    log: list[Event] = table_log(rules, play)
    damaged = list(log)
    for _ in range(data.draw(st.integers(1, 3))):
        # Pick the kind of event first: rare kinds (table_opened, deal_dealt, ...) get hit as
        # often as the card_played events that fill most of a log.
        kind = data.draw(st.sampled_from(sorted({type(e).__name__ for e in damaged})))
        i = data.draw(st.sampled_from([j for j, e in enumerate(damaged) if type(e).__name__ == kind]))
        how = data.draw(st.sampled_from(["field", "field", "delete", "duplicate", "swap", "insert"]))
        if how == "field":
            fields = field_values(damaged[i])
            if not fields:
                continue
            name = data.draw(st.sampled_from(sorted(fields)))
            value = data.draw(fields[name])
            damaged[i] = msgspec.structs.replace(damaged[i], **{name: value})
        elif how == "delete":
            del damaged[i]
        elif how == "duplicate":
            damaged.insert(i, damaged[i])
        elif how == "swap" and i + 1 < len(damaged):
            damaged[i], damaged[i + 1] = damaged[i + 1], damaged[i]
        elif how == "insert":
            damaged.insert(i, data.draw(ANY_EVENT))
        if not damaged:
            damaged = [log[0]]
    assume(damaged != log)
    try:
        fold(damaged)
    except LogError as exc:
        assert 0 <= exc.position < len(damaged) and exc.reason
