"""The ``engine`` section: the pure rules engine on one core (one process, one thread, no I/O).

What it measures, and why each figure exists:

* **random deals/s** (target 7,500): ``deal_from_seed`` -> ``Deal`` -> uniformly random legal
  actions (``random.Random.choice`` over ``Deal.legal_actions()``) to the end -> ``result()``.
  This is what a tournament runner or a self-play bot does for every deal.
* **fold events/s** (target 300,000): ``protocol.table.fold`` over complete table logs made
  beforehand with ``due``/``decide``; this is what every service pays to rebuild a table from
  its stream. **decode + fold** adds the msgpack codec, as when reading the stream from NATS.
* **msgpack encode/decode events/s**: the codec alone, to tell it apart from the fold.
* **interpreter baseline**: a fixed, trivial pure-Python loop, timed right before every repeat
  of every figure. Each figure's "x baseline" is the median of its per-repeat ratios to it;
  unlike absolute figures, that stays comparable across machines and noisy neighbours.

Every workload is deterministic (fixed seeds, a fresh ``random.Random(opts.seed)`` per call),
so all repeats, and all runs with the same seed, do exactly the same work.
"""

from __future__ import annotations

import cProfile
import io
import pstats
import random
from collections.abc import Sequence

from protocol.events import MSGPACK, Event, TableOpened
from protocol.skat.commands import Declare
from protocol.skat.deal import Deal
from protocol.skat.dealing import deal_from_seed
from protocol.skat.decide import decide
from protocol.skat.rules import Rules
from protocol.skat.table import TableState, due, fold

from . import BASELINE_RATE, Options, Rate, Row, measure, times

DEALS_TARGET = 7_500.0
EVENTS_TARGET = 300_000.0
RULES = Rules()
"""Plain ISkO rules for the random deals: the table default, and the most common case."""


# --- workloads ---------------------------------------------------------------------------


def baseline(units: int, seed: int) -> int:
    """The interpreter baseline: per unit, 32 ``random()`` calls appended to a list, then a sort.

    Roughly the interpreter work of a cheap "deal" without any Skat in it. Never change this
    loop: its only value is being the same yardstick in every run, on every machine.
    """
    rand = random.Random(seed).random
    for _ in range(units):
        xs: list[float] = []
        for _ in range(32):
            xs.append(rand())
        xs.sort()
    return units


def play_random_deals(seeds: Sequence[str], seed: int, rules: Rules = RULES) -> int:
    """Play one complete random deal per seed; returns the number of actions pushed."""
    choice = random.Random(seed).choice
    actions = 0
    for s in seeds:
        hands, skat = deal_from_seed(s)
        deal = Deal(hands, skat, rules)
        while not deal.is_over:
            deal.push(choice(deal.legal_actions()))
            actions += 1
        deal.result()
    return actions


def play_full_deals(seeds: Sequence[str], seed: int, rules: Rules = RULES) -> int:
    """Like ``play_random_deals``, but the declarer picks only plain suit games and grands (no
    null, no announcements), so no deal ends early and all 30 cards are played. Uniform random
    choices end most deals after a few cards (ouvert and schwarz announcements lose at the first
    defender trick), which flatters deals/s; this is the honest worst case."""
    rng = random.Random(seed)
    choice = rng.choice
    actions = 0
    for s in seeds:
        hands, skat = deal_from_seed(s)
        deal = Deal(hands, skat, rules)
        while not deal.is_over:
            legal = deal.legal_actions()
            if deal.phase in ("skat", "declare"):
                legal = [a for a in legal if not isinstance(a, Declare) or (a.game != "N" and not a.schneider)]
            deal.push(choice(legal))
            actions += 1
        deal.result()
    return actions


def random_table_log(table: str, rounds: int, rng: random.Random) -> tuple[list[Event], TableState]:
    """A complete table log, written the way the services write it: every derived event that
    ``due`` owes is appended first; otherwise the seat to move takes a random legal action,
    turned into events by ``decide``. Returns the log and the state built along the way."""
    opened = TableOpened(table=table, players=["ann", "bob", "cy"], rules=Rules(rounds=rounds), seed=table)
    state = TableState()
    state.apply(opened)
    log: list[Event] = [opened]
    while True:
        owed = due(state)
        if owed is not None:
            state.apply(owed)
            log.append(owed)
            continue
        if state.closed:
            return log, state
        seat = state.to_move
        assert seat is not None, "nothing is due, the table is open, yet no one is to move"
        events = decide(state, seat, rng.choice(state.legal_actions(seat)))
        assert isinstance(events, list), events
        for e in events:
            state.apply(e)
        log.extend(events)


def fold_logs(logs: Sequence[Sequence[Event]]) -> int:
    """Fold every log from scratch; returns the number of events folded."""
    n = 0
    for log in logs:
        n += fold(log).events
    return n


def decode_fold_logs(logs: Sequence[Sequence[bytes]]) -> int:
    """Decode every log from msgpack while folding it, as a reader of the stream does."""
    decode = MSGPACK.decode
    n = 0
    for log in logs:
        n += fold(map(decode, log)).events
    return n


def encode_all(events: Sequence[Event]) -> int:
    encode = MSGPACK.encode
    for e in events:
        encode(e)
    return len(events)


def decode_all(blobs: Sequence[bytes]) -> int:
    decode = MSGPACK.decode
    for b in blobs:
        decode(b)
    return len(blobs)


# --- the section -------------------------------------------------------------------------


def _sizes(opts: Options) -> tuple[int, int, int, int]:
    """Work per repeat: (baseline units, deals, tables, rounds per table); each repeat of the
    full run takes a few tenths of a second, long enough to swamp timer and scheduler noise."""
    if opts.quick:
        return 2_000, 500, 12, 2
    return 10_000, 4_000, 120, 4


def make_logs(tables: int, rounds: int, seed: int) -> list[list[Event]]:
    """Random table logs, checked: each must fold (from events and from bytes) to the state that
    wrote it, so the timed folds provably do the full work."""
    rng = random.Random(seed)
    logs = []
    for t in range(tables):
        log, state = random_table_log(f"bench-{t}", rounds, rng)
        for replay in (fold(log), fold(MSGPACK.decode(MSGPACK.encode(e)) for e in log)):
            if replay.totals != state.totals or replay.events != len(log) or not replay.closed:
                raise RuntimeError(f"table {t}: the fold of its log differs from the state that wrote it")
        logs.append(log)
    return logs


def run(opts: Options) -> list[Row]:
    """Measure every engine figure; see the module docstring."""
    n_base, n_deals, n_tables, rounds = _sizes(opts)
    reps, seed = opts.repeats, opts.seed

    def base_work() -> int:
        return baseline(n_base, seed)

    base = measure(base_work, repeats=reps)

    seeds = [f"bench/{i}" for i in range(n_deals)]
    actions = play_random_deals(seeds, seed)

    def deal_work() -> int:
        play_random_deals(seeds, seed)
        return n_deals

    deals = measure(deal_work, repeats=reps, baseline=base_work)

    full_actions = play_full_deals(seeds, seed)

    def full_work() -> int:
        play_full_deals(seeds, seed)
        return n_deals

    full = measure(full_work, repeats=reps, baseline=base_work)

    logs = make_logs(n_tables, rounds, seed)
    events = [e for log in logs for e in log]
    blob_logs = [[MSGPACK.encode(e) for e in log] for log in logs]
    blobs = [b for log in blob_logs for b in log]
    folded = measure(lambda: fold_logs(logs), repeats=reps, baseline=base_work)
    decoded_folded = measure(lambda: decode_fold_logs(blob_logs), repeats=reps, baseline=base_work)
    encoded = measure(lambda: encode_all(events), repeats=reps, baseline=base_work)
    decoded = measure(lambda: decode_all(blobs), repeats=reps, baseline=base_work)

    def row(name: str, rate: Rate, unit: str, target: float | None = None, note: str = "") -> Row:
        relative = rate.relative or 1.0
        return Row(name, rate.best, unit, rate.median, target, relative, note, times(relative, BASELINE_RATE))

    per_deal = len(events) / (n_tables * rounds * 3)
    actions_per_s = actions / n_deals * deals.best
    log_note = f"{len(events):,} events, {len(logs)} tables x {rounds * 3} deals"
    bytes_note = f"{sum(map(len, blobs)) / len(blobs):.0f} bytes/event"
    return [
        row("interpreter baseline", base, "units/s", note="32 random() + list ops per unit"),
        row("random deals", deals, "deals/s", DEALS_TARGET, f"{n_deals:,} deals/repeat"),
        Row("  actions per deal (mean)", actions / n_deals, "actions", note=f"{actions_per_s:,.0f} actions/s"),
        row("random deals, played out", full, "deals/s", DEALS_TARGET, "plain suit/grand games only: 30 cards"),
        Row("  actions per deal (mean)", full_actions / n_deals, "actions"),
        row("fold", folded, "events/s", EVENTS_TARGET, log_note),
        row("decode + fold (msgpack)", decoded_folded, "events/s", EVENTS_TARGET, f"{per_deal:.1f} events/deal"),
        row("msgpack encode", encoded, "events/s", note=bytes_note),
        row("msgpack decode", decoded, "events/s"),
    ]


def profile(opts: Options, top: int = 25) -> str:
    """cProfile of the random-deal loop and of the fold, sorted by own time (tottime): where the
    engine itself spends its time, as opposed to the functions it merely calls."""
    n_deals = 1_000 if opts.quick else 4_000
    seeds = [f"bench/{i}" for i in range(n_deals)]
    logs = make_logs(12 if opts.quick else 60, 4, opts.seed)
    out = io.StringIO()
    for title, work in (
        (f"random deals ({n_deals:,})", lambda: play_random_deals(seeds, opts.seed)),
        (f"fold ({sum(map(len, logs)):,} events)", lambda: fold_logs(logs)),
    ):
        prof = cProfile.Profile()
        prof.runcall(work)
        out.write(f"\n--- profile: {title}, top {top} by tottime ---\n")
        pstats.Stats(prof, stream=out).strip_dirs().sort_stats("tottime").print_stats(top)
    return out.getvalue()
