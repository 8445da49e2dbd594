"""The live progress of a tournament equals the final table (``skatbus.progress``).

The runs are real (``fair_runs``: the pure engine and the runner's own ``write_results``, with an
entrant whose turns time out and which is withdrawn). Each test replays what the runner sees
after a resume: the tournament's log up to some tables finished, the stored logs of those and of
the running tables up to the interruption, then the public feed with every event delivered twice
and some out of order, and checks the progress against the standings results.json holds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from protocol.events import MSGPACK, Event
from protocol.tournament import TableFinished, TournamentFinished, fold_tournament
from skatbus.progress import Tally, Watch
from skatbus.replay import read_archive
from skatbus.signing import load_or_create_key

from .fair_runs import Built, build, skat_legacy, skat_many, thirty_one_many


class Stored(NamedTuple):
    """What ``EventStore.read`` gives, as far as the progress reads it."""

    index: int
    event: Event


class Msg(NamedTuple):
    """A public feed message, as nats-py hands it to the watcher."""

    subject: str
    data: bytes
    headers: dict[str, str] | None


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Built]:
    out = tmp_path_factory.mktemp("runs")
    key = load_or_create_key(out / "keys" / "signing.nk")
    return {
        "legacy": build(out, skat_legacy(), key, "cid"),
        "many": build(out, skat_many(), key),
        "thirty-one": build(out, thirty_one_many(), key, "p2"),
    }


def _logs(run: Built) -> dict[str, list[Event]]:
    return {
        t: [e for e in log.events if isinstance(e, Event)]
        for t, log in read_archive(run.folder / "archive.jsonl").items()
    }


def _results(run: Built) -> dict[str, Any]:
    return json.loads((run.folder / "results.json").read_text())


def _resumed(run: Built, finished: int) -> Watch:
    """The watch of a runner resumed with the first ``finished`` tables recorded as finished."""
    kept, done = [], 0
    for event in run.events:
        if isinstance(event, TournamentFinished):
            continue
        if isinstance(event, TableFinished):
            done += 1
            if done > finished:
                continue
        kept.append(event)
    state = fold_tournament(kept)
    return Watch(state, [spec for spec in state.tables if spec.table not in state.finished])


def _play_on(watch: Watch, logs: dict[str, list[Event]], cut: float = 0.5) -> None:
    """The rest of a resumed run: the finished tables and the running ones up to ``cut`` of
    their events read from the store, then the feed, which delivers every event twice and
    swaps neighbours now and then, and at the end the running tables read back whole."""
    for table in watch.tally.finished:
        watch.read_back(table, [Stored(i, e) for i, e in enumerate(logs[table])])
    for table in sorted(watch.pending):
        log = logs[table]
        split = int(len(log) * cut)
        watch.read_back(table, [Stored(i, e) for i, e in enumerate(log[:split])])
        feed = list(enumerate(log))[max(0, split - 3) :]  # the feed overlaps what was read
        for k in range(0, len(feed) - 1, 7):  # out of order now and then
            feed[k], feed[k + 1] = feed[k + 1], feed[k]
        for index, event in feed:
            for _ in range(2):  # every event redelivered
                msg = Msg(f"skat.public.{table}", MSGPACK.encode(event), {"Skat-Index": str(index)})
                watch.seen(table, MSGPACK.decode(msg.data), int(msg.headers["Skat-Index"]))  # type: ignore[index]


def _skat_line(standings: list[dict[str, Any]]) -> str:
    return "  ".join(
        f"{s['player']}{' (forfeit)' if s.get('forfeit') else ''} {s['seeger_fabian']:+d}" for s in standings[:4]
    )


@pytest.mark.parametrize("name", ["legacy", "many"])
def test_a_resumed_skat_run_shows_the_final_table(runs: dict[str, Built], name: str) -> None:
    run = runs[name]
    logs, results = _logs(run), _results(run)
    watch = _resumed(run, finished=1)
    assert watch.pending, "the resume must leave tables to play"
    _play_on(watch, logs)
    standings = results["standings"]
    assert watch.leaders() == _skat_line(standings)
    assert watch.tally.points == {s["player"]: s["seeger_fabian"] for s in standings}
    assert watch.tally.played == {s["player"]: s["deals"] for s in standings}
    assert watch.tally.timeouts == {s["player"]: s["timeouts"] for s in standings if s["timeouts"]}
    assert watch.tally.answered == {s["player"]: s["answered"] for s in standings if s["answered"]}
    assert {p for p, _ in watch.tally.withdrawn.items()} == {s["player"] for s in standings if s.get("forfeit")}
    watched = sum(t["deals"] for t in results["tables"] if t["table"] in watch.seating)
    assert watch.deals_done() == watched


def test_the_legacy_run_has_what_the_progress_must_count(runs: dict[str, Built]) -> None:
    """The run above holds time-outs and a withdrawal (a forfeit), or its test proves little."""
    standings = _results(runs["legacy"])["standings"]
    assert any(s["timeouts"] for s in standings) and any(s.get("forfeit") for s in standings)


def test_a_resumed_thirty_one_run_shows_the_final_table(runs: dict[str, Built]) -> None:
    run = runs["thirty-one"]
    logs, results = _logs(run), _results(run)
    watch = _resumed(run, finished=0)
    _play_on(watch, logs)
    standings = results["standings"]
    expected = "  ".join(
        f"{s['player']}{' (forfeit)' if s.get('forfeit') else ''} {s['per_table']:.2f}" for s in standings[:4]
    )
    assert watch.leaders() == expected
    assert watch.progress() == len(watch.specs)
    assert watch.tally.timeouts == {s["player"]: s["timeouts"] for s in standings if s["timeouts"]}


def test_a_repeated_event_counts_once_and_a_gap_waits_for_the_store(runs: dict[str, Built]) -> None:
    table, log = next(iter(_logs(runs["legacy"]).items()))
    tally = Tally("skat")
    scored = [i for i, e in enumerate(log) if type(e).__name__ == "DealScored"]
    first = scored[0]
    for index in range(first + 1):
        assert tally.add(table, index, log[index])
        assert not tally.add(table, index, log[index])  # redelivered: a repeat
    once = dict(tally.points)
    assert sum(once.values()) == sum(log[first].result.seeger_fabian)  # type: ignore[attr-defined]
    # The feed drops the next event: what follows waits, counted only when the gap is filled.
    for index in range(first + 2, len(log)):
        tally.add(table, index, log[index])
    assert tally.points == once and tally.gaps() == [table]
    tally.add_all(table, enumerate(log))  # read back from the store
    assert tally.gaps() == [] and tally.deals() == len(scored)


def test_a_feed_without_indices_sends_the_table_to_the_store(runs: dict[str, Built]) -> None:
    run = runs["legacy"]
    watch = _resumed(run, finished=0)
    table = sorted(watch.pending)[0]
    event = _logs(run)[table][0]
    watch.seen(table, event, None)
    assert watch.tally.deals() == 0 and watch.to_read() == [table]
    assert watch.to_read() == []  # asked once


def test_the_progress_module_is_what_the_runner_uses() -> None:
    from skatbus import tournament

    assert tournament._Watch is Watch
    assert Path(tournament.__file__).read_text().count("class _Watch") == 0


# --- through the services: interrupted, paused, resumed, the feed redelivering -------------------


async def test_the_progress_of_a_resumed_run_ends_at_the_final_table(stack: Any, nc: Any, tmp_path: Path) -> None:
    """A tournament interrupted after some deals (its tables paused, as ``skat tournament`` does
    on Ctrl-C), then resumed while something redelivers every public event once more: the last
    progress line is the final table (deals, leaders, time-outs), not what the resumed process
    happened to watch."""
    import asyncio
    import io

    from protocol import fairness
    from protocol.skat.rules import Rules
    from protocol.tournament import TournamentConfig
    from services.store import EventStore
    from skatbus.tournament import TournamentLog, run_tournament, set_paused

    bots = {"sr": "stepping-random", "rnd": "random", "sr2": "stepping-random"}
    config = TournamentConfig(
        id="live", entrants=list(bots), bots=bots, rules=Rules(rounds=2, seeger_fabian=True),
        groups=1, seed="live", fair=fairness.SCHEME, commitment=fairness.commitment("live"),
    )  # fmt: skip
    store = EventStore(nc)
    first = asyncio.create_task(run_tournament(nc, config, out_dir=tmp_path, out=io.StringIO()))

    async def scored() -> int:
        if not await TournamentLog(nc).read("live"):
            return 0
        return sum(type(s.event).__name__ == "DealScored" for s in await store.read("live-g0r0"))

    while await scored() < 2 and not first.done():
        await asyncio.sleep(0.01)
    assert not first.done(), "finished before it could be interrupted"
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    tables = [f"live-g0r{r}" for r in range(3)]
    await set_paused(nc, tables, True, "interrupted", patience=5.0)

    async def redeliver(msg: Any) -> None:  # every public event once more, as a redelivery would
        if (msg.headers or {}).get("X-Copy"):
            return
        await nc.publish(msg.subject, msg.data, headers={**(msg.headers or {}), "X-Copy": "1"})

    copies = [await nc.subscribe(f"skat.public.{t}", cb=redeliver) for t in tables]
    out = io.StringIO()
    try:
        results = await run_tournament(nc, resume="live", out_dir=tmp_path, out=out)
    finally:
        for sub in copies:
            await sub.unsubscribe()
    lines = [line for line in out.getvalue().splitlines() if " deals  " in line]
    last = lines[-1]
    deals = sum(t["deals"] for t in results["tables"])
    assert last.startswith(f"{deals}/{deals} deals"), last
    assert last.endswith("SF: " + _skat_line(results["standings"])), last
