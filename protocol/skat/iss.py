"""Reading game records of the International Skat Server (ISS).

A record is one line ``(;GM[Skat]...MV[...]R[...] ;)``; the format is described in
``tests/data/iss/FORMAT.md``. ``parse_record`` turns a line into an ``IssRecord`` (header, the
deal, the moves as engine commands, the published result); ``replay`` plays the moves through
the engine; ``check`` compares the engine's result with the published one. Records that the
game rules cannot score (passed, penalties, time-outs, corrupt moves) are classified and
reported, never raised: real archives hold millions of lines and some are broken.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Final, Literal

import msgspec

from . import cards as C
from .commands import (
    BIDS,
    HOLD,
    PASS,
    PICKUP,
    RESIGN,
    SHOW,
    Bid,
    Command,
    Declare,
    Discard,
    PlayCard,
)
from .deal import ENDED, Deal
from .rules import Rules
from .scoring import DealResult

Status = Literal["comparable", "passed", "penalty", "timeout", "left", "corrupt"]

_FIELD = re.compile(r"([A-Z][A-Z0-9]?)\[([^\]]*)\]")
_CARD = re.compile(r"^[CSHD][789TJQKA]$")


class IssResult(msgspec.Struct, frozen=True, kw_only=True, repr_omit_defaults=True):
    """The published ``R[...]`` result."""

    passed: bool = False
    declarer: int | None = None
    outcome: str = ""
    """"win", "loss", "penalty" (empty for a passed game)."""
    value: int = 0
    matadors: int = 0
    overbid: bool = False
    points: int = 0
    tricks: int = 0
    schneider: bool = False
    schwarz: bool = False
    left: int | None = None
    timed_out: int | None = None
    resigned: bool = False


class IssRecord(msgspec.Struct, kw_only=True):
    """One parsed record. ``moves`` are (deal position, command) in order."""

    game_id: str
    header: dict[str, str]
    players: list[str]
    hands: tuple[int, int, int] = (0, 0, 0)
    skat: int = 0
    moves: list[tuple[int, Command]] = []
    result: IssResult | None = None
    status: Status = "comparable"
    note: str = ""
    """Why a record is not comparable, or what was odd about it."""


class IssFormatError(ValueError):
    """The line is not a record at all (not even one the classifier could name)."""


def _seat(value: str | None) -> int | None:
    """A seat number from a result field, None where the field is absent (nobody)."""
    return None if value is None or int(value) < 0 else int(value)


def parse_result(text: str) -> IssResult:
    """Parse the inside of ``R[...]``."""
    text = text.strip()
    if text == "passed":
        return IssResult(passed=True)
    kv: dict[str, str] = {}
    words: set[str] = set()
    for token in text.split():
        key, sep, value = token.partition(":")
        if sep:
            kv[key] = value
        else:
            words.add(token)
    outcome = next((w for w in ("win", "loss", "penalty") if w in words), "")
    return IssResult(
        declarer=_seat(kv.get("d")),
        outcome=outcome,
        value=int(kv.get("v", 0)),
        matadors=int(kv.get("m", 0)),
        overbid="overbid" in words,
        points=int(kv.get("p", 0)),
        tricks=int(kv.get("t", 0)),
        schneider=kv.get("s") == "1",
        schwarz=kv.get("z") == "1",
        left=_seat(kv.get("l")),
        timed_out=_seat(kv.get("to")),
        resigned=kv.get("r") == "1",
    )


def parse_record(line: str) -> IssRecord:
    """Parse one record line; problems inside the moves become ``status``/``note``, not errors."""
    line = line.strip()
    if not line.startswith("(;") or "MV[" not in line:
        raise IssFormatError("not an ISS record: expected '(;GM[Skat]...MV[...]...;)'")
    header = {key: value for key, value in _FIELD.findall(line)}
    record = IssRecord(
        game_id=header.get("ID", ""),
        header=header,
        players=[header.get(f"P{i}", "") for i in range(3)],
    )
    if "R" in header:
        record.result = parse_result(header["R"])
    try:
        _parse_moves(record, header["MV"].split())
    except (ValueError, IndexError) as exc:
        record.status, record.note = "corrupt", f"unreadable moves: {exc}"
    if record.result is not None and record.result.outcome == "penalty" and record.status != "corrupt":
        why = f" ({record.note})" if record.note else ""
        record.status, record.note = "penalty", f"scored by the server's penalty rules{why}"
    if record.status == "comparable" and record.result is not None:
        r = record.result
        if r.timed_out is not None:
            record.status, record.note = "timeout", f"seat {r.timed_out} timed out"
        elif r.left is not None:
            record.status, record.note = "left", f"seat {r.left} left the table"
        elif r.passed:
            record.status, record.note = "passed", "everyone passed"
    if record.result is None and record.status == "comparable":
        record.status, record.note = "corrupt", "no R[...] result"
    return record


def _parse_moves(record: IssRecord, tokens: list[str]) -> None:
    if len(tokens) % 2:
        raise ValueError("moves do not come in pairs")
    moves: list[tuple[int, Command]] = []
    picked_up = False
    pending_declare: tuple[int, Declare] | None = None
    dealt = False
    for i in range(0, len(tokens), 2):
        who, what = tokens[i], tokens[i + 1]
        if what == "??":
            record.status, record.note = "corrupt", f"unknown card '??' at move {i // 2}"
            break
        if who == "w":
            if what.startswith("TI."):
                record.status, record.note = "timeout", f"seat {what[3:]} timed out"
                break
            if what.startswith("LE."):
                record.status, record.note = "left", f"seat {what[3:]} left the table"
                break
            cards = what.split(".")
            if not dealt:
                if len(cards) != 32:
                    raise ValueError(f"the deal has {len(cards)} cards, not 32")
                ids = [C.card(c) for c in cards]
                record.hands = (C.mask(ids[0:10]), C.mask(ids[10:20]), C.mask(ids[20:30]))
                record.skat = C.mask(ids[30:32])
                if C.mask(ids) != C.ALL:
                    raise ValueError("the deal does not hold all 32 cards once")
                dealt = True
            elif C.parse(cards) != record.skat:
                raise ValueError(f"skat shown as {what} but dealt as {C.fmt(record.skat, '.')}")
            continue
        pos = int(who)
        if not 0 <= pos <= 2:
            raise ValueError(f"seat {who}")
        if what.isdigit():
            value = int(what)
            moves.append((pos, BIDS.get(value) or Bid(value=value)))
        elif what == "y":
            moves.append((pos, HOLD))
        elif what == "p":
            moves.append((pos, PASS))
        elif what == "s":
            moves.append((pos, PICKUP))
            picked_up = True
        elif what == "SC":
            moves.append((pos, SHOW))
        elif what == "RE":
            moves.append((pos, RESIGN))
        elif _CARD.match(what):
            moves.append((pos, PlayCard(card=what)))  # type: ignore[arg-type]
        elif "." in what and _CARD.match(what.split(".")[0]):
            # Split form: the discard as its own move, after the declaration.
            if pending_declare is None:
                raise ValueError(f"discard {what} without a declaration")
            discard = what.split(".")
            moves.append((pos, Discard(cards=(discard[0], discard[1]))))  # type: ignore[arg-type]
            moves.append(pending_declare)
            pending_declare = None
        elif what[0] in "GCSHDN":
            parts = what.split(".")
            declare = _declaration(parts[0])
            cards = parts[1:]
            if picked_up:
                if cards:
                    moves.append((pos, Discard(cards=(cards[0], cards[1]))))  # type: ignore[arg-type]
                    moves.append((pos, declare))
                else:
                    pending_declare = (pos, declare)
            else:
                moves.append((pos, declare))
        else:
            raise ValueError(f"unknown move {who} {what}")
    record.moves = moves


def _declaration(token: str) -> Declare:
    game, mods = token[0], set(token[1:])
    unknown = mods - set("OHSZ")
    if unknown:
        raise ValueError(f"unknown declaration modifiers in {token}")
    ouvert = "O" in mods
    schwarz = "Z" in mods or (ouvert and game != "N")
    schneider = "S" in mods or schwarz
    return Declare(game=game, schneider=schneider, schwarz=schwarz, ouvert=ouvert)  # type: ignore[arg-type]


def replay(record: IssRecord, rules: Rules | None = None) -> Deal:
    """Play the record's moves through the engine; raises ``ValueError`` on an illegal move."""
    deal = Deal(record.hands, record.skat, rules or Rules())
    for n, (pos, command) in enumerate(record.moves):
        if deal.phase == ENDED:
            break  # ISS keeps logging moves after a deal is decided
        err = deal.check(pos, command)
        if err:
            raise ValueError(f"move {n} ({pos} {command}): {err}")
        deal.push(command, pos)
    return deal


COMPARED_FIELDS: Final = (
    "declarer", "outcome", "value", "matadors", "overbid", "points", "tricks", "schneider", "schwarz",
)  # fmt: skip


def engine_result(deal: Deal) -> IssResult:
    """The engine's result of a replayed deal in ISS terms."""
    if deal.phase != ENDED:
        raise ValueError(f"the moves end before the deal does (phase {deal.phase})")
    result: DealResult = deal.result()
    if result.kind == "passed":
        return IssResult(passed=True)
    return IssResult(
        declarer=deal.declarer,
        outcome="win" if result.won else "loss",
        value=result.game_score,
        matadors=result.matadors,
        overbid=result.overbid,
        points=result.declarer_points,
        tricks=result.declarer_tricks,
        schneider=result.schneider,
        schwarz=result.schwarz,
        resigned=deal.end_reason == "defenders_resigned",
    )


class Verdict(msgspec.Struct, kw_only=True):
    """The outcome of checking one record."""

    game_id: str
    status: Literal["agree", "differ", "skipped", "error"]
    reason: str = ""
    differences: dict[str, tuple[object, object]] = {}
    """field -> (published, engine)."""


def check(record: IssRecord) -> Verdict:
    """Replay a record and compare with its published result."""
    if record.status not in ("comparable", "passed"):
        return Verdict(game_id=record.game_id, status="skipped", reason=f"{record.status}: {record.note}")
    try:
        mine = engine_result(replay(record))
    except ValueError as exc:
        return Verdict(game_id=record.game_id, status="error", reason=str(exc))
    published = record.result
    assert published is not None
    if published.passed or mine.passed:
        same = published.passed == mine.passed
        return Verdict(
            game_id=record.game_id,
            status="agree" if same else "differ",
            reason="passed" if same else "",
            differences={} if same else {"passed": (published.passed, mine.passed)},
        )
    diffs = {
        f: (getattr(published, f), getattr(mine, f))
        for f in COMPARED_FIELDS
        if getattr(published, f) != getattr(mine, f)
    }
    return Verdict(game_id=record.game_id, status="differ" if diffs else "agree", differences=diffs)


def read_records(lines: Iterable[str]) -> Iterator[IssRecord | IssFormatError]:
    """Parse records from lines (streaming); blank lines are skipped, bad lines yielded as errors."""
    for line in lines:
        if not line.strip():
            continue
        try:
            yield parse_record(line)
        except IssFormatError as exc:
            yield exc
