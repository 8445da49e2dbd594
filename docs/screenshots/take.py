"""Take the seat page's screenshots (docs/screenshots/*.png) as a person plays.

    .venv/bin/python docs/screenshots/take.py [--out docs/screenshots] [--width 1280 --height 800]

It starts the real ``skat play`` (its own embedded nats-server, the page on 127.0.0.1, a free
port), opens the seat it prints in a headless chromium (Debian's ``chromium``) driven over the
DevTools protocol with the client the browser tests use (tests/skatbus/cdp.py: real mouse
clicks at an element's centre), and plays a Skat game by clicks only, as a club player would:
it bids while it can (so that it gets to declare), picks up the skat, puts away its two
lowest cards, declares the game the form suggests and plays the first highlighted card. On the
way it saves:

- ``skat-bidding.png``: the bid buttons with their values;
- ``skat-pickup.png``, ``skat-hand.png`` and ``skat-declare.png``: the declaration form before the
  pickup, with "hand game" ticked, and after the pickup;
- ``skat-discard.png``: two cards picked to be put away;
- ``skat-play.png``: a trick in play, the legal cards marked (one where suit must be followed,
  if the deal has one);
- ``skat-end.png``: the end of the deal, its card points and value explained, the score sheet;
- ``skat-closed.png``: the table once its last deal is over, with the final totals;
- ``skat-narrow.png``: the same table at a narrow window (800 px);
- ``lobby.png``: the lobby, the person's seat and the open table;
- ``thirty-one.png``: a Thirty-one seat (a second ``skat play --game thirty-one``) at its turn.

Every process it starts (``skat play``, whose children are its nats-server; chromium) is
stopped by its PID, on success, failure, Ctrl-C or SIGTERM alike. The deals are random (``skat
play`` has no seed option), so two runs give different pictures of the same page.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.skatbus.cdp import Browser, chromium  # noqa: E402  (the repository's root first)

STATE = r"""(() => {
  const b = document.body;
  const r = document.getElementById('resultbox');
  return {
    yourTurn: b.dataset.yourTurn === '1', prompt: Number(b.dataset.prompt || -1),
    closed: (document.getElementById('where') || {textContent: ''}).textContent.includes('table closed'),
    buttons: [...document.querySelectorAll('#buttons button')].map(x => JSON.parse(x.dataset.action || '{}')),
    legal: [...document.querySelectorAll('.seat.me .card.legal')].map(c => c.dataset.card),
    unplayable: document.querySelectorAll('.seat.me .card.unplayable').length,
    hand: document.querySelectorAll('.seat.me [data-card]').length,
    trick: document.querySelectorAll('#trick .slot').length,
    result: r && !r.classList.contains('hidden') ? Number(r.dataset.deal) : 0,
    deal: Number(((document.getElementById('where') || {textContent: ''}).textContent.match(/deal (\d+)/) || [0, 0])[1]),
    declarer: !!document.querySelector('.seat.me .decl'),
  };
})()"""


def descendants(pid: int) -> list[int]:
    """The PIDs of ``pid``'s children, grandchildren, ... (from /proc), deepest last."""
    out: list[int] = []
    todo = [pid]
    while todo:
        p = todo.pop()
        for task in Path(f"/proc/{p}/task").glob("*"):
            with contextlib.suppress(OSError):
                kids = [int(k) for k in (task / "children").read_text().split()]
                out += kids
                todo += kids
    return out


class Play:
    """One ``skat play`` in a process of its own; ``stop`` ends it (and whatever it left) by PID."""

    def __init__(self, *args: str, out: Path) -> None:
        self.args = ["play", *args, "--listen", "127.0.0.1:0", "--out", str(out)]
        self.proc: subprocess.Popen[str] | None = None
        self.lines: list[str] = []

    async def start(self) -> tuple[str, str]:
        """The seat's address and the lobby's, as ``skat play`` prints them."""
        env = {**os.environ, "SKAT_LOG_LEVEL": "warning"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "skatbus.cli", *self.args],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
            start_new_session=True,  # Ctrl-C at the terminal reaches this script only: it stops the play
        )
        seat = lobby = None
        end = time.monotonic() + 60
        while seat is None or lobby is None:
            line = await asyncio.wait_for(asyncio.to_thread(self.proc.stdout.readline), end - time.monotonic())  # type: ignore[union-attr]
            if not line:
                raise RuntimeError("skat play ended before it printed its addresses:\n" + "".join(self.lines))
            self.lines.append(line)
            if m := re.search(r"(http://127\.0\.0\.1:\d+/play/\S+)", line):
                seat = m.group(1)
            if m := re.search(r"watch all tables: (\S+)", line):
                lobby = m.group(1)
        return seat, lobby

    def stop(self) -> None:
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return
        left = descendants(proc.pid)
        proc.send_signal(signal.SIGTERM)  # skat play stops its stack and saves the game
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        for pid in left:  # its nats-server, had it not stopped it
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


async def until_turn(b: Browser, limit: float = 120) -> dict[str, Any]:
    """The page once it is the person's turn or the table has closed."""
    end = asyncio.get_running_loop().time() + limit
    while True:
        s: dict[str, Any] = await b.js(STATE)
        if s["yourTurn"] or s["closed"]:
            return s
        if asyncio.get_running_loop().time() > end:
            raise TimeoutError("no turn for the person")
        await asyncio.sleep(0.1)


def button(action: dict[str, Any]) -> str:
    """The selector of the prompt's button that sends ``action`` (as the page encodes it)."""
    return f"#buttons button[data-action='{json.dumps(action, separators=(',', ':'))}']"


async def shot(b: Browser, out: Path, name: str) -> None:
    """Save the window as ``out/name``, after the page's last redraw has settled."""
    await b.js("window.scrollTo(0, 0)")  # a click scrolls its element into view: the window's top
    await asyncio.sleep(0.3)  # the last redraw settles
    await b.screenshot(out / name)
    print(f"  {out / name} ({(out / name).stat().st_size // 1024} KB)")


async def skat(out: Path, size: tuple[int, int], runs: Path) -> bool:
    """Play a Skat game through ``skat play``, taking its pictures; whether every one was taken."""
    play = Play("--name", "ann", "--vs", "heuristic,heuristic", out=runs)
    try:
        seat, lobby = await play.start()
        async with Browser(*size) as b:
            await b.goto(seat)
            taken: set[str] = set()
            declared_deal = 0
            while True:
                s = await until_turn(b)
                if s["closed"]:
                    break
                kinds = {a.get("type") for a in s["buttons"]}
                playing = bool(s["legal"]) and "discard" not in kinds
                if "bid" in kinds or "hold" in kinds:
                    if "bidding" not in taken and "bid" in kinds:
                        await shot(b, out, "skat-bidding.png")
                        taken.add("bidding")
                    want = not declared_deal  # bid on until the person declares a game once
                    bids = [a for a in s["buttons"] if a.get("type") in ("bid", "hold")]
                    value = bids[0].get("value", 0) if bids else 0
                    if bids and want and value <= 40:
                        await b.click(button(bids[0]))
                    else:
                        await b.click(button({"type": "pass"}))
                elif "pickup" in kinds or (await b.js("!!document.querySelector('.declareform')")):
                    if "pickup" in kinds:
                        if "pickup" not in taken:
                            await shot(b, out, "skat-pickup.png")
                            taken.add("pickup")
                            # A hand game's choices, ticked as a person would, then unticked.
                            await b.click("#handgame")
                            await b.wait_for("!!document.getElementById('gamechoice')")
                            await shot(b, out, "skat-hand.png")
                            await b.click("#handgame")
                            await b.wait_for("!document.getElementById('gamechoice')")
                    else:
                        if "declare" not in taken:
                            await shot(b, out, "skat-declare.png")
                            taken.add("declare")
                        declared_deal = s["deal"]
                    await b.click("#declare")
                elif "discard" in kinds:
                    picked = await b.js("document.querySelectorAll('.seat.me .card.picked').length")
                    if picked < 2:
                        card = await b.js(
                            "[...document.querySelectorAll('.seat.me .card.legal:not(.picked)')].pop().dataset.card"
                        )
                        await b.click(f'.seat.me .card[data-card="{card}"]')
                        await b.wait_for(f"!!document.querySelector('.seat.me .card.picked[data-card=\"{card}\"]')")
                        if picked == 1 and "discard" not in taken:
                            await shot(b, out, "skat-discard.png")
                            taken.add("discard")
                        continue
                    await b.click("#discard")
                elif playing:
                    # The play picture: a trick under way where suit must be followed, if any.
                    if s["deal"] == declared_deal and (
                        "play" not in taken or (s["unplayable"] and "follow" not in taken)
                    ):
                        if s["trick"]:
                            await shot(b, out, "skat-play.png")
                            taken.add("play")
                            if s["unplayable"]:
                                taken.add("follow")
                                await b.send("Emulation.setDeviceMetricsOverride", _metrics(800, size[1]))
                                await shot(b, out, "skat-narrow.png")
                                await b.send("Emulation.setDeviceMetricsOverride", _metrics(*size))
                    await b.click(f'.seat.me .card.legal[data-card="{s["legal"][0]}"]')
                    if declared_deal and s["hand"] == 1 and "end" not in taken:  # the deal's last card
                        await b.wait_for(
                            f"document.getElementById('resultbox').dataset.deal === '{declared_deal}'", timeout=60
                        )
                        await shot(b, out, "skat-end.png")
                        taken.add("end")
                        # The lobby while the table is open, a deal played: in a second browser,
                        # so that the seat's page keeps what it saw of the deal.
                        async with Browser(*size) as other:
                            await other.goto(lobby)
                            await other.wait_for("document.querySelector('#tables li[data-table] .progress')")
                            await shot(other, out, "lobby.png")
                        taken.add("lobby")
                        continue
                else:
                    await b.click("#buttons button.main")
                await b.wait_for(
                    f"document.body.dataset.yourTurn !== '1' || Number(document.body.dataset.prompt) > {s['prompt']}"
                )
            if "end" not in taken and declared_deal:
                await shot(b, out, "skat-end.png")
            await shot(b, out, "skat-closed.png")
            if "follow" not in taken:  # no trick to follow suit in: the closed table, narrow
                await b.send("Emulation.setDeviceMetricsOverride", _metrics(800, size[1]))
                await shot(b, out, "skat-narrow.png")
                await b.send("Emulation.setDeviceMetricsOverride", _metrics(*size))
            if "lobby" not in taken:
                await b.goto(lobby)
                await shot(b, out, "lobby.png")
            missing = {"bidding", "pickup", "declare", "play", "end"} - taken
            if missing:
                print(f"take.py: not shown in these deals: {', '.join(sorted(missing))} (run it again)")
                return False
            return True
    finally:
        play.stop()


def _metrics(width: int, height: int) -> dict[str, Any]:
    """The DevTools window size for ``width`` x ``height`` (a desktop, not a phone)."""
    return {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}


async def thirty_one(out: Path, size: tuple[int, int], runs: Path) -> None:
    """A Thirty-one seat a few turns in (so that the deal has a history to show)."""
    play = Play("--game", "thirty-one", "--name", "ann", "--vs", "heuristic,heuristic", out=runs)
    try:
        seat, _ = await play.start()
        async with Browser(*size) as b:
            await b.goto(seat)
            for turn in range(3):  # a few turns in, so that the deal has a history
                await b.wait_for("document.body.dataset.yourTurn === '1'", timeout=60)
                prompt = await b.js("document.body.dataset.prompt")
                if turn == 2:
                    await shot(b, out, "thirty-one.png")
                    break
                if await b.js("!!document.querySelector('#t31-buttons button.main')"):
                    await b.click("#t31-buttons button.main")
                elif await b.js("!!document.querySelector('#t31-main .card.legal')"):
                    await b.click("#t31-main .card.legal")
                else:
                    await b.click("#t31-buttons button")
                await b.wait_for(
                    f"document.body.dataset.yourTurn !== '1' || document.body.dataset.prompt !== '{prompt}'"
                )
    finally:
        play.stop()


async def main(out: Path, size: tuple[int, int]) -> int:
    """Both games' pictures; the saved runs go to a temporary directory, not the repository's runs/."""
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="skat-shots-") as runs:
        print("Skat:")
        complete = await skat(out, size, Path(runs))
        print("Thirty-one:")
        await thirty_one(out, size, Path(runs))
    return 0 if complete else 1


def run() -> int:
    """The command line; SIGTERM is turned into Ctrl-C so that both stop every process started."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parent, help="where the PNGs go")
    p.add_argument("--width", type=int, default=1280)
    p.add_argument("--height", type=int, default=800)
    args = p.parse_args()
    if chromium() is None:
        print("take.py: chromium not found (apt-get install -y chromium)", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        return asyncio.run(main(args.out, (args.width, args.height)))
    except KeyboardInterrupt:
        print("take.py: interrupted; every process it started is stopped", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(run())
