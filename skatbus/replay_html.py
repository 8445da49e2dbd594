"""``skat replay --html``: one self-contained page that steps through a table's deals.

The page must open anywhere, offline and years later, so everything is inline: the CSS, the
script, and the deals as JSON (the snapshots ``services.replay.snapshot`` makes, one per
event). The page computes nothing about Skat itself; what it shows was derived by the fold.
``#deal=D&step=N`` in the URL opens deal D at step N, which makes the page testable from a
headless browser's command line. A table of another game gets its game's page (``GAME_PAGES``).
"""

from __future__ import annotations

import html
import importlib
import json
from pathlib import Path
from typing import Any, Final

from protocol.events import DealDealt, DealScored
from protocol.skat.table import LogError

from .html_style import BASE_CSS, TABLE_CSS, style
from .replay import TableLog, log_game, replay, snapshot

GAME_PAGES: Final[dict[str, str]] = {"thirty-one": "skatbus.replay_html_thirty_one"}
"""The page module of each game other than Skat (its ``render_html`` has this one's signature)."""


def deal_steps(log: TableLog, only: int | None = None) -> tuple[list[dict[str, Any]], LogError | None]:
    """Per deal, the snapshots from its dealing to its score (stops at a bad event, keeping
    what came before it, so a broken log still renders up to the break)."""
    deals: list[dict[str, Any]] = []
    error: LogError | None = None
    try:
        for step in replay(log):
            state, event = step.state, step.event
            if isinstance(event, DealDealt):
                if only is not None and event.deal != only:
                    continue
                deals.append({"deal": event.deal, "steps": []})
            elif (
                not deals or state.deal_no != deals[-1]["deal"] or (state.scored and not isinstance(event, DealScored))
            ):
                continue  # between deals (or another deal than the one asked for)
            snap = snapshot(state, event)
            snap["position"] = step.position
            deals[-1]["steps"].append(snap)
    except LogError as exc:
        error = exc
    return deals, error


def render_html(log: TableLog, only: int | None = None) -> tuple[str, int]:
    """The page, and how many deals it holds (a table of another game: its game's page)."""
    if log_game(log) in GAME_PAGES:
        drawn: tuple[str, int] = importlib.import_module(GAME_PAGES[log_game(log)]).render_html(log, only)
        return drawn
    deals, error = deal_steps(log, only)
    players: list[str] = []
    if log.events and hasattr(log.events[0], "players"):
        players = list(log.events[0].players)
    data = {
        "table": log.table,
        "players": players,
        "deals": deals,
        "error": None if error is None else {"position": error.position, "reason": error.reason},
    }
    # Inside <script> only "</" can end the element early; JSON allows "<\/" for it.
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
    page = _TEMPLATE.replace("__STYLE__", style(BASE_CSS, TABLE_CSS))
    page = page.replace("__TITLE__", html.escape(f"skat replay: {log.table}")).replace("__DATA__", payload)
    return page, len(deals)


def write_html(log: TableLog, out: Path, only: int | None = None) -> tuple[int, str]:
    """Write the page; (exit code, message)."""
    page, count = render_html(log, only)
    if count == 0:
        return 2, f"no deal {only} in table {log.table}" if only is not None else f"no deals in table {log.table}"
    out.write_text(page, encoding="utf-8")
    return 0, f"wrote {out} ({count} deal{'s' if count != 1 else ''} of table {log.table})"


_TEMPLATE = r"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>__TITLE__</title>
__STYLE__
</head>
<body>
<header>
  <h1 id="title"></h1>
  <button id="prevDeal" title="previous deal">&laquo; deal</button>
  <button id="prev" title="back (Left arrow)">&#x25C0; back</button>
  <span id="where"></span>
  <button id="next" title="forward (Right arrow)">forward &#x25B6;</button>
  <button id="nextDeal" title="next deal">deal &raquo;</button>
  <span class="hint">arrow keys: step; PageUp/PageDown: deal</span>
</header>
<main>
  <section class="felt">
    <div id="seats"></div>
    <div class="trickarea" id="trick"></div>
    <div class="seat" id="skatbox"><div class="who" id="skatlabel">skat</div><div class="cards" id="skat"></div></div>
  </section>
  <section>
    <div class="panel hidden" id="error"></div>
    <div class="panel"><h2>Event</h2><div id="event"></div><div class="hint" id="pos"></div></div>
    <div class="panel"><h2>Game</h2><div id="declaration"></div></div>
    <div class="panel"><h2>Bidding</h2><ol id="bidding"></ol></div>
    <div class="panel"><h2>Tricks won</h2><table class="won" id="won"></table></div>
    <div class="panel hidden" id="scorebox"><h2>Score</h2><ul id="score"></ul></div>
    <div class="panel"><h2>Totals</h2><table class="won" id="totals"></table></div>
  </section>
</main>
<script id="replay-data" type="application/json">__DATA__</script>
<script>
"use strict";
const DATA = JSON.parse(document.getElementById("replay-data").textContent);
const SUITS = { C: "\u2663", S: "\u2660", H: "\u2665", D: "\u2666" };
const RANKS = { T: "10" };
let dealIx = 0, stepIx = 0;

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const kid of kids) e.append(kid);
  return e;
}
function cardEl(code, extra) {
  const red = code[0] === "H" || code[0] === "D";
  const rank = RANKS[code[1]] || code[1];
  return el("div", { class: "card" + (red ? " red" : "") + (extra ? " " + extra : ""), "data-card": code,
                     title: code }, el("span", { class: "r" }, rank), el("span", { class: "s" }, SUITS[code[0]]));
}
function fill(id, ...kids) { const e = document.getElementById(id); e.replaceChildren(...kids); return e; }

function render() {
  const deal = DATA.deals[dealIx];
  const s = deal.steps[stepIx];
  document.getElementById("title").textContent = "Table " + DATA.table + " \u2014 deal " + deal.deal;
  fill("where", "deal " + (dealIx + 1) + "/" + DATA.deals.length + ", step " + stepIx + "/" + (deal.steps.length - 1));
  document.getElementById("prev").disabled = stepIx === 0;
  document.getElementById("next").disabled = stepIx === deal.steps.length - 1;
  document.getElementById("prevDeal").disabled = dealIx === 0;
  document.getElementById("nextDeal").disabled = dealIx === DATA.deals.length - 1;
  fill("seats", ...s.seats.map(p => el("div", { class: "seat" + (p.to_move ? " to-move" : ""), "data-seat": p.seat },
      el("div", { class: "who" }, p.name, el("span", { class: "tag" }, p.position),
         ...(p.declarer ? [el("span", { class: "decl" }, "declarer")] : [])),
      el("div", { class: "cards" }, ...p.hand.map(c => cardEl(c))))));
  fill("skatlabel", s.skat.label);
  fill("skat", ...s.skat.cards.map(c => cardEl(c)));
  const t = s.trick;
  fill("trick", ...(t.cards.length ? t.cards.map(c => el("div", { class: "slot" },
      cardEl(c.card, t.winner === c.name ? "win" : ""), el("div", {}, c.name))) :
      [el("div", { class: "empty" }, s.phase === "playing" ? "trick " + s.trick_no + ": no card yet" : "no trick on the table")]));
  fill("event", s.text);
  fill("pos", "event " + s.position + " of the table's log");
  fill("declaration", s.declaration ? s.declaration + (s.declarer ? " \u2014 " + s.declarer + ", bid " + s.bid : "")
       + (s.kontra ? ", Kontra" : "") + (s.re ? ", Re" : "") : "not declared yet");
  fill("bidding", ...s.bidding.map(b => el("li", {}, b)));
  fill("won", el("tr", {}, el("th", {}, "player"), el("th", {}, "tricks"), el("th", {}, "card points")),
       ...s.seats.map(p => el("tr", {}, el("td", {}, p.name), el("td", {}, String(p.tricks)), el("td", {}, String(p.points)))));
  const box = document.getElementById("scorebox");
  box.classList.toggle("hidden", !s.score);
  fill("score", ...(s.score || []).map(l => el("li", {}, l)));
  fill("totals", el("tr", {}, el("th", {}, "player"), el("th", {}, "list"), el("th", {}, "Seeger-Fabian")),
       ...s.players.map((n, i) => el("tr", {}, el("td", {}, n), el("td", {}, String(s.totals[i])),
                                     el("td", {}, String(s.seeger_fabian[i])))));
  document.body.dataset.deal = deal.deal;
  document.body.dataset.step = stepIx;
  const hash = "#deal=" + deal.deal + "&step=" + stepIx;
  if (location.hash !== hash) history.replaceState(null, "", hash);
}

function go(d, st) {
  if (!DATA.deals.length) return;
  dealIx = Math.max(0, Math.min(DATA.deals.length - 1, d));
  stepIx = Math.max(0, Math.min(DATA.deals[dealIx].steps.length - 1, st));
  render();
}
function fromHash() {
  const params = new URLSearchParams(location.hash.slice(1));
  const d = params.has("deal") ? DATA.deals.findIndex(x => x.deal === Number(params.get("deal"))) : 0;
  go(d < 0 ? 0 : d, Number(params.get("step") || 0));
}
document.getElementById("prev").onclick = () => go(dealIx, stepIx - 1);
document.getElementById("next").onclick = () => go(dealIx, stepIx + 1);
document.getElementById("prevDeal").onclick = () => go(dealIx - 1, 0);
document.getElementById("nextDeal").onclick = () => go(dealIx + 1, 0);
document.addEventListener("keydown", e => {
  if (e.key === "ArrowRight") go(dealIx, stepIx + 1);
  else if (e.key === "ArrowLeft") go(dealIx, stepIx - 1);
  else if (e.key === "PageDown") go(dealIx + 1, 0);
  else if (e.key === "PageUp") go(dealIx - 1, 0);
  else return;
  e.preventDefault();
});
window.addEventListener("hashchange", fromHash);
if (DATA.error) {
  const box = document.getElementById("error");
  box.textContent = "The log breaks the rules at event " + DATA.error.position + ": " + DATA.error.reason
    + " (shown up to there)";
  box.classList.remove("hidden");
}
if (DATA.deals.length) fromHash();
else fill("event", "no deals in this log");
</script>
</body>
</html>
"""
