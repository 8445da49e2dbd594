"""``skat verify RUN``: check a tournament's run folder from its files alone.

Why. Entrants of a tournament they did not run must be able to check, without the broker and
without trusting the operator, that the published results are what was played, and that what
was played was dealt from the seed the operator committed to before their nonces came in.
Everything needed is in the run folder (``OUT/<tid>``): the tournament's own log
(tournament.jsonl: config, commitment, schedule, nonces), every table's events (archive.jsonl),
the results (results.json) and the operator's signature over them (signature.json).

The checks, in the order their problems are listed:

1. The deals' source: the revealed seed against the commitment (``fairness.commitment``), the
   closed nonces against the ones given and against their digest, and results.json's reveal
   against the tournament's log. Legacy runs (``fair == 0``) have no commitment: a note.
2. results.json's config is the tournament log's.
3. The archive holds every table of the schedule (the series drawn later included) and no
   other.
4. Each table: opened as scheduled (players, rules, and the table seed
   ``TournamentState.table_seed``), then replayed with its game from the registry. Every
   derived event (one a service writes, ``game.owner(event)``: the deals, tricks, ends, scores,
   the close) must be exactly what ``game.due`` computes at that point, which re-derives every
   card from the seed and every score from the rules. The players' moves, time-outs,
   withdrawals, pauses and the default actions after a time-out are no one's computation to
   repeat: they are folded, and the fold refuses any that breaks a rule (``LogError``).
5. results.json's and tournament.jsonl's table results (``table_finished``) and the standings
   (``standings_of``; a tournament of many entrants: each series' standings and the
   crosstable too) recomputed from the archive.
6. The signature (``skatbus.signing.check_signature``).

What this proves and what it does not is in docs/operations.md ("Verifying a run").
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import msgspec

from protocol import fairness, registry
from protocol.events import DealDealt, Event, TableClosed, UnknownEvent
from protocol.explain import newer_event
from protocol.lifecycle import LogError, NewerEvent
from protocol.series import draw_series
from protocol.thirty_one.events import T31Dealt, T31Restocked
from protocol.tournament import (
    ADDED_STANDING_FIELDS,
    NonceGiven,
    NoncesClosed,
    SeriesDrawn,
    TableFinished,
    TableSpec,
    TournamentConfig,
    TournamentCreated,
    TournamentEvent,
    TournamentFinished,
    TournamentState,
    fold_tournament,
    opening,
    schedule,
    standings_of,
    table_finished,
)

from .archive_reader import Damage, NotAnArchive, entries
from .errors import UsageError
from .signing import SIGNATURE_FILE, check_signature, read_signature
from .tournament_file import TournamentLogError, parse_tournament_log

REQUIRED: Final = ("results.json", "archive.jsonl", "tournament.jsonl")
"""The files without which nothing can be checked."""
MAX_DIFFERENCES_PER_TABLE: Final = 3
"""Derived events reported per table before the rest of it is skipped: a wrong table seed
makes every deal differ, and one line each would bury the other problems."""
_SEEDED: Final = (DealDealt, T31Dealt, T31Restocked)
"""Derived events whose content comes from the seed (the cards), not from the rules."""
LEGACY_NOTE: Final = "legacy deals: no commitment to check"


class RunUnreadable(UsageError):
    """RUN is no run folder, or one of its files is missing or cannot be read."""


@dataclass
class Verification:
    """What ``verify_run`` found: the problems in the order checked (none: verified), notes
    that are no problems, and the facts the summary line states."""

    tournament: str
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    tables: int = 0
    deals: int = 0
    nonces: int = 0
    fair: int = 0
    key: str | None = None
    """The public key signature.json names (whether or not it verifies)."""

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        """The last line ``skat verify`` prints."""
        if not self.ok:
            n = len(self.problems)
            return f"NOT verified: {n} problem{'s' * (n != 1)}"
        source = (
            f"deals from the committed seed and {self.nonces} nonce{'s' * (self.nonces != 1)}"
            if self.fair
            else "legacy deals (no commitment)"
        )
        return f"verified: {self.tournament}, {self.tables} tables, {self.deals} deals, {source}, signed by {self.key}"

    def to_json(self) -> dict[str, Any]:
        return {
            "tournament": self.tournament,
            "verified": self.ok,
            "problems": list(self.problems),
            "notes": list(self.notes),
            "tables": self.tables,
            "deals": self.deals,
            "nonces": self.nonces,
            "fair": self.fair,
            "key": self.key,
            "summary": self.summary(),
        }


def run_folder(path: Path) -> Path:
    """The run folder ``path`` names: the folder itself, or the folder of its results.json."""
    if path.is_file() and path.name == "results.json":
        return path.parent
    if not path.is_dir():
        what = "no such folder" if not path.exists() else "not a run folder nor its results.json"
        raise RunUnreadable(f"{path}: {what} (want OUT/<tournament> or its results.json)")
    return path


def verify_run(
    run_dir: Path,
    expect_key: str | None = None,
    expect_commitment: str | None = None,
    expect_nonces: Mapping[str, str] | None = None,
) -> Verification:
    """Check the run folder ``run_dir`` (or its results.json); ``expect_key``: the public NKey
    the signature must be by. ``expect_commitment`` and ``expect_nonces`` are what an entrant
    recorded itself (the commitment announced before the first deal, the nonce it gave): the
    run must hold exactly those, or the operator's own files prove nothing to that entrant.
    ``RunUnreadable`` when there is nothing to check."""
    run_dir = run_folder(run_dir)
    raw = _read_files(run_dir)
    found = Verification(tournament=run_dir.name)
    problems = found.problems

    def checked(what: str, check: Callable[..., Any], *args: Any) -> Any:
        """A check on files anyone may have written: whatever it meets in them is a problem
        line naming ``what``, never a traceback."""
        try:
            return check(*args)
        except Exception as exc:
            problems.append(f"{what}: cannot be checked ({type(exc).__name__}: {' '.join(str(exc).split())[:200]})")
            return None

    results = checked("results.json", _results, raw["results.json"], problems)
    state, events = checked("tournament.jsonl", _tournament, raw["tournament.jsonl"], problems) or (None, [])
    if state is not None and state.config is not None:
        config = state.config
        found.tournament, found.fair, found.nonces = config.id, config.fair, len(state.nonces)
        checked("your records", _check_recorded, config, state, expect_commitment, expect_nonces or {}, problems)
        checked("the deals' source", _check_deal_source, config, state, events, results, found)
        if results is not None:
            checked("results.json", _check_results_header, config, results, problems)
        damaged: set[str] = set()
        """Tables whose archive lines are damaged or out of order: their problem is said once."""
        logs = checked("archive.jsonl", _archive, raw["archive.jsonl"], problems, damaged) or {}
        checked("the schedule", _check_schedule, events, logs, problems)
        scheduled = checked("the tables", _check_tables_present, state, logs, problems) or []
        unreadable = set(damaged)
        """Tables not read whole (damaged, or an event of a newer skatbus): no truth to check
        results.json against, so one problem each and not one per field they make differ."""
        for spec in scheduled:
            found.deals += (
                checked(f"table {spec.table}", _replay, spec, logs[spec.table], state, problems, unreadable) or 0
            )
        found.tables = len(scheduled)
        table_logs = {spec.table: logs[spec.table] for spec in scheduled}
        checked("the table results", _check_table_results, state, table_logs, results, problems, unreadable)
        if results is not None and unreadable & set(table_logs):
            found.notes.append(
                f"results.json: the standings are not checked against the archive: "
                f"{len(unreadable & set(table_logs))} table(s) cannot be read whole"
            )
        elif results is not None:
            checked("the standings", _check_standings, config, state, table_logs, results, problems)
    doc = checked("signature.json", read_signature, run_dir)
    found.key = doc.get("key") if isinstance(doc, dict) and isinstance(doc.get("key"), str) else None
    if (
        isinstance(doc, dict)
        and state is not None
        and state.config is not None
        and doc.get("tournament") != state.config.id
    ):
        problems.append(f"signature: signed as tournament {json.dumps(doc.get('tournament'))}, not {state.config.id}")
    if (
        isinstance(results, dict)
        and "signed_by" in results
        and found.key is not None
        and results["signed_by"] != found.key
    ):
        problems.append(f"results.json: signed_by {results['signed_by']}, but {SIGNATURE_FILE} is by {found.key}")
    problems += checked("signature.json", check_signature, run_dir, expect_key) or []
    return found


# --- the files -----------------------------------------------------------------------------


def _read_files(run_dir: Path) -> dict[str, bytes]:
    out = {}
    for name in REQUIRED:
        path = run_dir / name
        if not path.is_file():
            raise RunUnreadable(f"{run_dir}: no {name} (a run folder of skat tournament holds {', '.join(REQUIRED)})")
        try:
            out[name] = path.read_bytes()
        except OSError as exc:
            raise RunUnreadable(f"cannot read {path}: {exc.strerror or exc}") from None
    return out


def _results(data: bytes, problems: list[str]) -> dict[str, Any] | None:
    try:
        doc = json.loads(data)
    except ValueError as exc:
        problems.append(f"results.json is not JSON ({exc}): its results are not checked")
        return None
    if not isinstance(doc, dict):
        problems.append("results.json is not a JSON object: its results are not checked")
        return None
    return doc


def _tournament(data: bytes, problems: list[str]) -> tuple[TournamentState | None, list[TournamentEvent]]:
    """The folded tournament.jsonl and its events; None (and a problem) when it cannot be
    folded, which leaves nothing to check the tables against."""
    try:
        events = parse_tournament_log(data)
    except TournamentLogError as exc:
        problems.append(f"{exc}: the tables are not checked")
        return None, []
    try:
        state = fold_tournament(events)
    except ValueError as exc:
        problems.append(f"tournament.jsonl: {exc}: the tables are not checked")
        return None, events
    if state.config is None:
        problems.append("tournament.jsonl holds no tournament_created: the tables are not checked")
        return None, events
    if not state.done:
        problems.append("tournament.jsonl: the tournament never finished (no tournament_finished)")
    else:
        ends = [e for e in events if isinstance(e, TournamentFinished)]
        if ends and ends[-1].tables != len(state.tables):
            problems.append(
                f"tournament.jsonl: tournament_finished counts {ends[-1].tables} tables, the schedule has {len(state.tables)}"
            )
    return state, events


UNTOLD: Final = ""
"""In the set of damaged tables: a damaged line whose table could not be told (a cut last
line): a table that then ends before it closed is taken to be its table, not a second problem."""


def _archive(
    data: bytes, problems: list[str], damaged: set[str] | None = None
) -> dict[str, list[Event | UnknownEvent]]:
    """Every table's events from archive.jsonl, in the order of the file. A line that does
    not decode, or an event index out of sequence, is a problem; a damaged line costs only its
    table (``archive_reader``): that table is checked up to there, every other table whole.
    One problem per damaged table, as the replay says it: a line inserted or lost would
    otherwise put every later event of the table out of sequence, one problem each. The
    tables so cut short go to ``damaged`` (their replay does not add that they end early)."""
    stopped: set[str] = set() if damaged is None else damaged
    logs: dict[str, list[Event | UnknownEvent]] = {}
    try:
        for item in entries(data.splitlines()):
            if isinstance(item, Damage):
                table = f"table {item.table}" if item.table is not None else "its table cannot be told"
                problems.append(f"archive.jsonl line {item.lineno}: not an archived event ({item.reason}; {table})")
                if item.table is not None:
                    logs.setdefault(item.table, [])
                stopped.add(item.table or UNTOLD)
                continue
            if item.table in stopped:
                continue
            log = logs.setdefault(item.table, [])
            if item.index != len(log):
                problems.append(
                    f"archive.jsonl line {item.lineno}: table {item.table} event {item.index} where event {len(log)} "
                    "belongs (events missing or out of order); the table is checked up to there"
                )
                stopped.add(item.table)
                continue
            log.append(item.event)
    except NotAnArchive as exc:
        problems.append(f"archive.jsonl {exc}: the tables are not checked")
    return logs


# --- the deals' source ---------------------------------------------------------------------


def _check_deal_source(
    config: TournamentConfig,
    state: TournamentState,
    events: Sequence[TournamentEvent],
    results: Mapping[str, Any] | None,
    found: Verification,
) -> None:
    problems = found.problems
    if not config.fair:
        found.notes.append(LEGACY_NOTE)
        return
    if config.fair != fairness.SCHEME:
        problems.append(
            f"tournament.jsonl: deal scheme {config.fair} is unknown to this skatbus: its deals are not checked"
        )
        return
    if not config.commitment:
        problems.append("tournament.jsonl: the fair scheme without a commitment: nothing bound the seed")
    elif fairness.commitment(config.seed) != config.commitment:
        problems.append(
            f"seed does not match the commitment: the revealed seed hashes to {fairness.commitment(config.seed)}, "
            f"the tournament committed to {config.commitment}"
        )
    from .tournament_cli import seed_weakness

    weak = seed_weakness(config.seed)
    if weak is not None:
        found.notes.append(f"the revealed seed may be weak ({weak}): an entrant could have recovered it from its cards")
    _check_nonces(state, events, problems)
    if results is not None:
        _check_reveal(config, state, results, problems)


def _check_nonces(state: TournamentState, events: Sequence[TournamentEvent], problems: list[str]) -> None:
    closes = [i for i, e in enumerate(events) if isinstance(e, NoncesClosed)]
    if not closes or state.digest is None:
        problems.append("tournament.jsonl: the nonces never closed (no nonces_closed): no table seed is fixed")
        return
    first_result = next((i for i, e in enumerate(events) if isinstance(e, TableFinished)), len(events))
    if closes[0] > first_result:
        problems.append("tournament.jsonl: a table finished before the nonces closed")
    if state.digest != fairness.nonces_digest(state.nonces):
        problems.append("tournament.jsonl: nonces_closed's digest is not the digest of its nonces")
    given: dict[str, str] = {}
    for e in events:
        if isinstance(e, NonceGiven):
            given.setdefault(e.player, e.nonce)
    for player in sorted(set(given) | set(state.nonces)):
        if player not in state.nonces:
            problems.append(f"tournament.jsonl: {player} gave a nonce, but the closed nonces leave it out")
        elif player not in given:
            problems.append(f"tournament.jsonl: the closed nonces hold one of {player}, who gave none")
        elif state.nonces[player] != given[player]:
            problems.append(f"tournament.jsonl: {player}'s closed nonce is not the one it gave first")
    assert state.config is not None
    for player in sorted(set(state.nonces) & set(state.config.bots)):
        # The operator's own bots give none: a nonce in their name is one the operator chose
        # after seeing the entrants', which could pick the deals.
        problems.append(f"tournament.jsonl: a nonce of {player}, a built-in bot (only remote entrants give nonces)")
    for player, nonce in sorted(state.nonces.items()):
        try:
            ok = fairness.check_nonce(nonce) == nonce
        except ValueError:
            ok = False
        if not ok:
            problems.append(f"tournament.jsonl: {player}'s nonce is not 16 to 128 lower-case hex digits")


def _check_schedule(
    events: Sequence[TournamentEvent], logs: Mapping[str, Sequence[Event | UnknownEvent]], problems: list[str]
) -> None:
    """Every table and its group are the ones the rules draw: the schedule ``schedule(config)``
    draws from the configuration alone, and each ``series_drawn`` what ``draw_series`` draws
    from the results before it. A group is an input of the table seed: an operator free to
    choose it after the nonces closed could try groups until the deals suited it."""
    state = TournamentState()
    for event in events:
        try:
            if isinstance(event, TournamentCreated):
                want = schedule(event.config)
                where = first_difference(msgspec.to_builtins(event.tables), msgspec.to_builtins(want))
                if where is not None:
                    problems.append(
                        f"tournament.jsonl: the schedule is not the one its configuration draws (tables{where})"
                    )
            elif isinstance(event, SeriesDrawn) and state.config is not None:
                done = {t: [e for e in logs[t] if isinstance(e, Event)] for t in state.finished if t in logs}
                drawn = draw_series(state.config, state, event.series, done, started=False)
                got = msgspec.to_builtins(event.tables)
                if drawn is None or first_difference(got, msgspec.to_builtins(drawn.tables)) is not None:
                    problems.append(
                        f"tournament.jsonl: series {event.series} is not drawn as the rules draw it from the "
                        "results before it"
                    )
            state.apply(event)
        except (ValueError, TypeError, KeyError, IndexError) as exc:
            problems.append(f"tournament.jsonl: the schedule cannot be checked: {str(exc)[:200]}")
            return


def _check_reveal(
    config: TournamentConfig, state: TournamentState, results: Mapping[str, Any], problems: list[str]
) -> None:
    reveal = results.get("fairness")
    if not isinstance(reveal, dict):
        problems.append("results.json reveals no seed (no fairness section)")
        return
    want = {
        "scheme": config.fair,
        "commitment": config.commitment,
        "seed": config.seed,
        "nonces": dict(state.nonces),
        "nonces_digest": state.digest,
    }
    for name, value in want.items():
        if reveal.get(name) != value:
            problems.append(f"results.json: fairness {name} is not the tournament log's")


def _check_results_header(config: TournamentConfig, results: Mapping[str, Any], problems: list[str]) -> None:
    from .tournament import config_json

    if results.get("tournament") != config.id:
        problems.append(f"results.json: tournament {json.dumps(results.get('tournament'))}, not {config.id}")
    if results.get("game", config.game) != config.game:
        problems.append(f"results.json: game {json.dumps(results.get('game'))}, not {config.game}")
    want = _plain(config_json(config))
    where = first_difference(results.get("config"), want)
    if where is not None:
        problems.append(f"results.json: config {where or '(all of it)'} is not the tournament log's")


# --- the tables ----------------------------------------------------------------------------


def _check_tables_present(
    state: TournamentState, logs: Mapping[str, Sequence[Event | UnknownEvent]], problems: list[str]
) -> list[TableSpec]:
    """The scheduled tables that are in the archive; a problem for each missing one and for
    each archived table the schedule does not have."""
    names = {spec.table for spec in state.tables}
    for spec in state.tables:
        if spec.table not in logs:
            problems.append(f"table {spec.table} of the schedule is missing from the archive")
    for table in logs:
        if table not in names:
            problems.append(f"table {table} is in the archive but not in the schedule")
    return [spec for spec in state.tables if spec.table in logs]


def _replay(
    spec: TableSpec,
    log: Sequence[Event | UnknownEvent],
    tournament: TournamentState,
    problems: list[str],
    unreadable: set[str] | None = None,
) -> int:
    """Check one table's log (see the module docstring); the deals it dealt. A table that
    cannot be read whole (in ``unreadable``: damaged lines, said already; or an event of a
    newer skatbus, said here) is added to ``unreadable``."""
    assert tournament.config is not None
    config = tournament.config
    name = spec.table
    cut = unreadable is not None and name in unreadable
    if unreadable is None:
        unreadable = set()
    if log and isinstance(log[0], UnknownEvent):  # a newer table_opened: not a missing one
        problems.append(f"table {name}, event 0: {newer_event(log[0])}")
        unreadable.add(name)
        return 0
    if not log and cut:
        return 0
    if not log or not registry.is_opening(log[0]):
        problems.append(f"table {name}: its log does not start with table_opened")
        return 0
    game = registry.game_of(log[0])
    state: Any = game.new_state()
    differences = 0
    for position, logged in enumerate(log):
        if isinstance(logged, UnknownEvent):  # a newer skatbus wrote it: nothing after it can be judged
            if not (cut and position == len(log) - 1):  # else the line the index gap after it said
                problems.append(f"table {name}, event {position}: {newer_event(logged)}")
            unreadable.add(name)
            return _deals(state)
        event: Event = logged
        if position and game.owner(logged) is not None:
            expected = game.due(state)
            where = _where(name, logged, state)
            if expected is None or type(expected) is not type(logged):
                owed = "nothing is due" if expected is None else f"{_kind(expected)} is due"
                problems.append(
                    f"{where}: {_kind(logged)} is logged where {owed}; the rest of the table is not checked"
                )
                return _deals(state)
            differs = first_difference(msgspec.to_builtins(logged), msgspec.to_builtins(expected))
            if differs is not None:
                differences += 1
                if differences > MAX_DIFFERENCES_PER_TABLE:
                    problems.append(f"table {name}: more derived events differ; the rest of the table is not checked")
                    return _deals(state)
                source = "the seed gives" if isinstance(expected, _SEEDED) else "the rules give"
                problems.append(f"{where}: {_kind(logged)} is not what {source} ({differs or 'all of it'} differs)")
                event = expected  # the rest of the log is checked against the true deal
        try:
            state.apply(event)
        except NewerEvent as exc:
            problems.append(f"table {name}, event {exc.position}: {exc.reason}")
            unreadable.add(name)
            return _deals(state)
        except LogError as exc:
            problems.append(f"table {name}, event {position}: {exc.reason} (against the rules)")
            return _deals(state)
        if position == 0:
            _check_opening(spec, state, tournament, problems)
            if game.name != config.game:
                problems.append(f"table {name}: a table of {game.name}, but the tournament plays {config.game}")
    if not state.closed and UNTOLD in unreadable:  # likely the damaged line whose table was not told
        unreadable.add(name)
    elif not state.closed and not cut:  # a damaged table's end was said as its damage
        problems.append(f"table {name}: its log ends before the table closed")
    return _deals(state)


def _check_opening(spec: TableSpec, state: Any, tournament: TournamentState, problems: list[str]) -> None:
    assert tournament.config is not None
    config = tournament.config
    name = spec.table
    if state.table != name:
        problems.append(f"table {name}: its log opens table {state.table}")
    if list(state.players) != list(spec.players):
        problems.append(
            f"table {name}: seats {', '.join(state.players)}, but the schedule seats {', '.join(spec.players)}"
        )
    try:
        want_rules = config.table_rules(len(spec.players))
    except ValueError as exc:
        problems.append(f"tournament.jsonl: {exc}")
    else:
        where = first_difference(_plain(msgspec.to_builtins(state.rules)), _plain(msgspec.to_builtins(want_rules)))
        if where is not None:
            problems.append(f"table {name}: opened with other rules than the tournament's ({where or 'all'} differs)")
    if config.fair not in (0, fairness.SCHEME):
        return
    try:
        seed = tournament.table_seed(spec)
    except ValueError:
        return  # no nonces closed: said already
    if state.seed != seed:
        given = "the committed seed and the nonces give" if config.fair else "the schedule gives"
        problems.append(f"table {name}: opened with a seed that is not the one {given}")


def _kind(event: Event) -> str:
    """An event's tag without its version: ``deal_dealt``."""
    return str(type(event).__struct_config__.tag).partition("/")[0]


def _where(table: str, event: Event, state: Any) -> str:
    """Where a derived event is: its table, and the deal it belongs to (the close belongs to none)."""
    if isinstance(event, TableClosed):
        return f"table {table}"
    deal = getattr(event, "deal", None) or getattr(state, "deal_no", 0)
    return f"table {table}, deal {deal}" if deal else f"table {table}"


def _deals(state: Any) -> int:
    return int(getattr(state, "deal_no", 0) or 0)


# --- the results ---------------------------------------------------------------------------


def _finished_of(table_logs: Mapping[str, Sequence[Event | UnknownEvent]]) -> dict[str, TableFinished | None]:
    """Each table's result as its log gives it (None: the log gives none, a problem said)."""
    out: dict[str, TableFinished | None] = {}
    for table, log in table_logs.items():
        try:
            out[table] = table_finished(log) if opening(log) is not None else None
        except (ValueError, LogError):
            out[table] = None
    return out


def _check_table_results(
    state: TournamentState,
    table_logs: Mapping[str, Sequence[Event | UnknownEvent]],
    results: Mapping[str, Any] | None,
    problems: list[str],
    unreadable: set[str] | None = None,
) -> None:
    """The table results of results.json and tournament.jsonl against the archive's, for the
    tables it holds whole (an ``unreadable`` one gives no result to hold them against)."""
    want = {t: (None if unreadable and t in unreadable else r) for t, r in _finished_of(table_logs).items()}
    _compare_results("tournament.jsonl", dict(state.finished), want, problems)
    if results is None:
        return
    entries = results.get("tables")
    if not isinstance(entries, list):
        problems.append("results.json: no table results (tables)")
        return
    got: dict[str, TableFinished] = {}
    for i, entry in enumerate(entries):
        try:
            result = msgspec.convert(entry, TableFinished)
        except msgspec.ValidationError as exc:
            problems.append(f"results.json: tables[{i}] is not a table result ({exc})")
            continue
        got[result.table] = result
    _compare_results("results.json", got, want, problems)


def _compare_results(
    source: str, got: Mapping[str, TableFinished], want: Mapping[str, TableFinished | None], problems: list[str]
) -> None:
    for table, expected in want.items():
        given = got.get(table)
        if expected is None:
            continue
        if given is None:
            problems.append(f"{source}: no result for table {table}")
            continue
        for name in TableFinished.__struct_fields__:
            value, right = getattr(given, name), getattr(expected, name)
            if value != right:
                problems.append(f"{source}: table {table} {name} {_text(value)} but the archive gives {_text(right)}")
    for table in got:
        if table not in want:
            problems.append(f"{source}: a result for table {table}, which the archive does not hold")


def _check_standings(
    config: TournamentConfig,
    state: TournamentState,
    table_logs: Mapping[str, Sequence[Event | UnknownEvent]],
    results: Mapping[str, Any],
    problems: list[str],
) -> None:
    logs = [list(log) for log in table_logs.values()]
    try:
        want = _plain(msgspec.to_builtins(standings_of(config.game, logs)))  # type: ignore[arg-type]
    except (ValueError, LogError):
        return  # the replay said what is wrong with the logs
    _compare_standings(results.get("standings"), want, problems)
    if config.many:
        _check_series(config, state, table_logs, results, problems)


def _compare_standings(got: Any, want: list[dict[str, Any]], problems: list[str]) -> None:
    if not isinstance(got, list) or not all(isinstance(s, dict) and "player" in s for s in got):
        problems.append("results.json: no standings (a list of players' standings)")
        return
    given = {s["player"]: s for s in got}
    right = {s["player"]: s for s in want}
    for player, standing in right.items():
        if player not in given:
            problems.append(f"results.json: the standings leave out {player}")
            continue
        for name, value in standing.items():
            if name in ADDED_STANDING_FIELDS and name not in given[player]:
                continue  # a results.json written before the standings had it
            mine = given[player].get(name)
            where = first_difference(mine, value, name)
            if where is not None:
                problems.append(
                    f"results.json: standings of {player}: {where} {_text(_at(mine, where, name))} "
                    f"but the archive gives {_text(_at(value, where, name))}"
                )
    for player in given:
        if player not in right:
            problems.append(f"results.json: the standings list {player}, who played no deal in the archive")
    if set(given) == set(right):
        for rank, (mine, theirs) in enumerate(zip(got, want, strict=False), 1):
            if mine["player"] != theirs["player"]:
                problems.append(
                    f"results.json: the standings rank {mine['player']} {rank}, the archive ranks {theirs['player']} there"
                )
                break


def _check_series(
    config: TournamentConfig,
    state: TournamentState,
    table_logs: Mapping[str, Sequence[Event | UnknownEvent]],
    results: Mapping[str, Any],
    problems: list[str],
) -> None:
    """A tournament of many entrants: each series' standings and the crosstable, where
    results.json has them (``protocol.series``, as the runner computes them)."""
    from protocol.series import crosstable, series_standings

    logs = {table: [e for e in log if isinstance(e, Event)] for table, log in table_logs.items()}
    seating = [[t.players for t in state.series_of(s)] for s in range(1, config.series + 1)]
    schedule = results.get("schedule")
    if isinstance(schedule, dict) and "series" in schedule:
        where = first_difference(schedule["series"], _plain(seating), "schedule.series")
        if where is not None:
            problems.append(f"results.json: {where} is not the seating of the tournament's log")
    recomputed: dict[str, Callable[[], Any]] = {
        "series": lambda: series_standings(config, state, logs),
        "crosstable": lambda: crosstable(config, state),
    }
    for key, compute in recomputed.items():
        if key not in results:
            continue
        try:
            want = _plain(compute())
        except (ValueError, LogError, KeyError):
            continue  # the replay said what is wrong with the logs
        where = first_difference(results[key], want, key)
        if where is not None:
            problems.append(
                f"results.json: {where} {_text(_at(results[key], where, key))} but the archive gives {_text(_at(want, where, key))}"
            )


def check_results(
    results: Mapping[str, Any],
    table_logs: Mapping[str, Sequence[Event | UnknownEvent]],
    tournament: TournamentState | None = None,
) -> list[str]:
    """Where results.json disagrees with what the archive's logs give (``skat report`` says so
    at the top of its page): each table's result, the standings, and with the tournament's log
    (``tournament``) a tournament of many entrants' series and crosstable too. One line per
    differing field (``results.json: standings of ann: seeger_fabian 480 but the archive gives
    48``); none when they agree. The logs are taken as they are: a caller with damaged tables
    leaves them out or skips the check, as the archive is then no truth either."""
    problems: list[str] = []
    config = tournament.config if tournament is not None else None
    game = config.game if config is not None else str(results.get("game") or registry.DEFAULT)
    entries = results.get("tables")
    if isinstance(entries, list):
        want = _finished_of(table_logs)
        got: dict[str, TableFinished] = {}
        for i, entry in enumerate(entries):
            try:
                result = msgspec.convert(entry, TableFinished)
            except msgspec.ValidationError as exc:
                problems.append(f"results.json: tables[{i}] is not a table result ({exc})")
                continue
            got[result.table] = result
        _compare_results("results.json", got, want, problems)
    logs = [[e for e in log if isinstance(e, Event)] for log in table_logs.values()]
    try:
        right = _plain(msgspec.to_builtins(standings_of(game, logs)))
    except (ValueError, LogError) as exc:
        problems.append(f"the archive's standings cannot be computed ({exc})")
        return problems
    _compare_standings(results.get("standings"), right, problems)
    if config is not None and tournament is not None and config.many:
        _check_series(config, tournament, table_logs, results, problems)
    return problems


def tournament_of(path: Path) -> TournamentState | None:
    """The folded tournament.jsonl at ``path``, or None when there is none or it cannot be
    read (``skat verify`` says why; a report compares without it)."""
    try:
        state = fold_tournament(parse_tournament_log(path.read_bytes()))
    except (OSError, TournamentLogError, ValueError):
        return None
    return state if state.config is not None else None


# --- comparing JSON values -------------------------------------------------------------------


def _plain(value: Any) -> Any:
    """``value`` as results.json holds it after a JSON round trip (tuples are lists, keys are
    strings), so a recomputed value compares equal to one read back."""
    return json.loads(json.dumps(msgspec.to_builtins(value)))


def _scalars(items: Iterable[Any]) -> bool:
    return all(not isinstance(item, (dict, list, tuple)) for item in items)


def _check_recorded(
    config: TournamentConfig,
    state: TournamentState,
    commitment: str | None,
    nonces: Mapping[str, str],
    problems: list[str],
) -> None:
    """What an entrant recorded against what the run says was committed to and mixed in."""
    if commitment is not None and commitment.strip().lower() != config.commitment:
        problems.append(f"commitment: the run's is {config.commitment or '(none)'}, not the {commitment} you recorded")
    for player, nonce in nonces.items():
        counted = state.nonces.get(player)
        if counted is None:
            problems.append(f"nonce of {player}: not among the nonces the deals were made from")
        elif counted != nonce.strip().lower():
            problems.append(f"nonce of {player}: the deals were made from {counted}, not the {nonce} you gave")


def first_difference(got: Any, want: Any, path: str = "") -> str | None:
    """Where two JSON values first differ: a field path such as ``hands[1]`` or
    ``result.scores`` (a list of plain values, a hand or a score line, is one value); None
    when they are equal; ``path`` itself when they differ as a whole."""
    if isinstance(got, dict) and isinstance(want, dict):
        for key in [*want, *(k for k in got if k not in want)]:
            inner = f"{path}.{key}" if path else str(key)
            if key not in got and key in ADDED_STANDING_FIELDS:
                continue  # a results.json written before the standings had it
            if key not in got or key not in want:
                return inner
            found = first_difference(got[key], want[key], inner)
            if found is not None:
                return found
        return None
    if isinstance(got, (list, tuple)) and isinstance(want, (list, tuple)) and not (_scalars(got) and _scalars(want)):
        if len(got) != len(want):
            return path
        for i, (a, b) in enumerate(zip(got, want, strict=True)):
            found = first_difference(a, b, f"{path}[{i}]")
            if found is not None:
                return found
        return None
    if isinstance(got, (list, tuple)) and isinstance(want, (list, tuple)):
        return None if list(got) == list(want) else path  # msgspec gives a tuple field as a tuple
    if got == want and (type(got) is type(want) or _numbers(got, want)):
        return None
    return path


def _numbers(*values: Any) -> bool:
    """Whether all are plain numbers (a whole float and an int are the same number: JSON does
    not keep the difference, so a rules field given as 20 reads back as 20.0); a bool is none."""
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def _at(value: Any, where: str, start: str) -> Any:
    """The part of ``value`` (found at path ``start``) that path ``where`` names."""
    rest = where[len(start) :]
    for part in rest.replace("]", "").replace("[", ".").split("."):
        if not part:
            continue
        if isinstance(value, (list, tuple)) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        elif isinstance(value, dict):
            value = value.get(part)
        else:
            return None
    return value


def _text(value: Any) -> str:
    """A value in a problem line: as JSON (never a Python repr)."""
    return json.dumps(_plain(value) if isinstance(value, msgspec.Struct) else value)
