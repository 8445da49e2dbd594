"""``skat replay --html`` of a Thirty-one table: one self-contained page, deal by deal.

The page is written as HTML that reads without any script: per deal the dealer, every hand as
dealt with its value, the discard pile's first card and the stock's order, every event in order
(the lines of the terminal replay), how the deal ended and what it cost; then the places. The
inline script adds what the Skat page has: the table drawn at each step from per-step snapshots
(``replay_thirty_one.snapshot``, made by the fold), the same buttons and keys, and the same
address ``#deal=D&step=N`` (step 0 is the deal's ``t31_dealt``), so the report's links and a
headless browser open it the same way.
"""

from __future__ import annotations

import html
import json
from typing import Any

from protocol.events import TableOpenedV2
from protocol.lifecycle import LogError
from protocol.thirty_one.events import T31DealScored, T31Dealt
from protocol.thirty_one.state import ThirtyOneState

from .html_style import BASE_CSS, TABLE_CSS, style
from .replay import TableLog
from .replay_thirty_one import TITLE, places_text, rules_text, snapshot, sorted_hand, steps, value_text

T31_CSS = """
  body:not(.js) .js-only { display: none; }
  body:not(.js) main.t31 { display: block; }
  main.t31 .deal { margin-bottom: 1em; }
  body.js section.deal:not(.current) { display: none; }
  .steps li { margin: .05em 0; }
  .steps li.current { background: #fff8e1; font-weight: 600; }
  .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, monospace; }
  .red { color: var(--red); }
  .middle .slot { text-align: center; }
  .seat.out { opacity: .45; }
  .seat .who .decl.knock { background: #80cbc4; }
"""
"""What only the Thirty-one page needs on top of the shared frame and card table."""


_DRAWN = frozenset({"text", "seats", "pile", "stock", "stock_top", "owed", "kitty"})
"""What the page's script draws of each step's snapshot (the rest would only make it larger)."""


def deal_steps(log: TableLog, only: int | None = None) -> tuple[list[dict[str, Any]], LogError | None]:
    """Per deal, the snapshots from its dealing to its score, each with the event's position,
    and the deal as dealt (stops at a bad event, keeping what came before it)."""
    deals, error, _ = _walk(log, only)
    return deals, error


def _walk(log: TableLog, only: int | None) -> tuple[list[dict[str, Any]], LogError | None, ThirtyOneState | None]:
    """``deal_steps`` and the table as far as the log folds."""
    deals: list[dict[str, Any]] = []
    error: LogError | None = None
    state: ThirtyOneState | None = None
    try:
        for step in steps(log):
            state, event = step.state, step.event
            if isinstance(event, T31Dealt):
                if only is not None and event.deal != only:
                    continue
                deals.append({"deal": event.deal, "dealer": state.players[event.dealer], "steps": [], "dealt": []})
                deals[-1]["dealt"] = _dealt(event, state)
            elif (
                not deals
                or state.deal_no != deals[-1]["deal"]
                or (state.scored and not isinstance(event, T31DealScored))
            ):
                continue  # between deals (or another deal than the one asked for)
            snap = {k: v for k, v in snapshot(state, event).items() if k in _DRAWN}
            snap["position"] = step.position
            deals[-1]["steps"].append(snap)
    except LogError as exc:
        error = exc
    return deals, error, state


def _dealt(event: T31Dealt, state: ThirtyOneState) -> list[dict[str, Any]]:
    m = len(event.order)
    rows = []
    for j, seat in enumerate(event.order):
        hand = [str(event.deck[i * m + j]) for i in range(3)]
        rows.append(
            {
                "seat": seat,
                "name": state.players[seat],
                "hand": sorted_hand(hand),
                "value": value_text(hand, state.rules),
                "coins": state.coins[seat],
            }
        )
    return [*rows, {"pile": str(event.deck[3 * m]), "stock": [str(c) for c in event.deck[3 * m + 1 :]]}]


def _card(code: str) -> str:
    red = " red" if code[:1] in "HD" else ""
    return f'<span class="mono{red}" title="{html.escape(code)}">{html.escape(code)}</span>'


def _cards(codes: list[str]) -> str:
    return " ".join(_card(c) for c in codes)


def _deal_section(deal: dict[str, Any]) -> str:
    """One deal as plain HTML: the deal as dealt, every step, the end and the score."""
    *hands, rest = deal["dealt"]
    rows = "".join(
        f"<tr><td>{h['seat']}</td><td>{html.escape(h['name'])}</td><td>{_cards(h['hand'])}</td>"
        f"<td class='num'>{h['value']}</td><td class='num'>{h['coins']}</td></tr>"
        for h in hands
    )
    items = "".join(
        f'<li data-step="{i}" data-position="{s["position"]}">{html.escape(s["text"])}</li>'
        for i, s in enumerate(deal["steps"])
    )
    number = deal["deal"]
    return (
        f'<section class="panel deal" id="deal-{number}" data-deal="{number}">'
        f"<h2>Deal {number} \u2014 dealt by {html.escape(deal['dealer'])}</h2>"
        '<table class="won dealt"><tr><th>seat</th><th>player</th><th>hand as dealt</th>'
        f"<th class='num'>value</th><th class='num'>coins</th></tr>{rows}</table>"
        f"<p>discard pile: {_card(rest['pile'])}; stock, {len(rest['stock'])} cards (top first): "
        f"{_cards(rest['stock'])}</p>"
        f'<ol class="steps" start="0">{items}</ol></section>'
    )


def render_html(log: TableLog, only: int | None = None) -> tuple[str, int]:
    """The page, and how many deals it holds."""
    deals, error, last = _walk(log, only)
    opened = log.events[0] if log.events and isinstance(log.events[0], TableOpenedV2) else None
    players = list(opened.players) if opened is not None else []
    data = {
        "table": log.table,
        "players": players,
        "deals": [{"deal": d["deal"], "steps": d["steps"]} for d in deals],
        "error": None if error is None else {"position": error.position, "reason": error.reason},
    }
    # Inside <script> only "</" can end the element early; JSON allows "<\/" for it.
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
    page = _TEMPLATE.replace("__STYLE__", style(BASE_CSS, TABLE_CSS, T31_CSS))
    page = page.replace("__TITLE__", html.escape(f"skat replay: {log.table}"))
    page = page.replace("__HEADING__", html.escape(f"Table {log.table} \u2014 {TITLE}"))
    page = page.replace("__ABOUT__", _about(log, error, last))
    page = page.replace("__DEALS__", "".join(_deal_section(d) for d in deals))
    return page.replace("__DATA__", payload), len(deals)


def _about(log: TableLog, error: LogError | None, last: ThirtyOneState | None) -> str:
    """The table panel: players, rules and the places (as far as the log folds)."""
    parts = []
    if error is not None:
        parts.append(
            f'<div class="panel" id="error">The log breaks the rules at event {error.position}: '
            f"{html.escape(error.reason)} (shown up to there)</div>"
        )
    if last is not None and last.opened:
        parts.append(
            '<div class="panel" id="about"><h2>Table</h2>'
            f"<p>{html.escape(', '.join(last.players))}; {html.escape(rules_text(last.rules))}</p>"
            f'<p id="places">{html.escape(places_text(last))}</p></div>'
        )
    return "".join(parts)


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
  <h1 id="title">__HEADING__</h1>
  <button class="js-only" id="prevDeal" title="previous deal">&laquo; deal</button>
  <button class="js-only" id="prev" title="back (Left arrow)">&#x25C0; back</button>
  <span class="js-only" id="where"></span>
  <button class="js-only" id="next" title="forward (Right arrow)">forward &#x25B6;</button>
  <button class="js-only" id="nextDeal" title="next deal">deal &raquo;</button>
  <span class="hint js-only">arrow keys: step; PageUp/PageDown: deal</span>
</header>
<main class="t31">
  <section class="felt js-only">
    <div id="seats"></div>
    <div class="trickarea middle" id="middle"></div>
  </section>
  <section>
    __ABOUT__
    <div class="panel js-only"><h2>Event</h2><div id="event"></div><div class="hint" id="pos"></div></div>
    __DEALS__
  </section>
</main>
<script id="replay-data" type="application/json">__DATA__</script>
<script>
"use strict";
document.body.classList.add("js");
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
  document.getElementById("title").textContent = "Table " + DATA.table + " \u2014 Thirty-one, deal " + deal.deal;
  fill("where", "deal " + (dealIx + 1) + "/" + DATA.deals.length + ", step " + stepIx + "/" + (deal.steps.length - 1));
  document.getElementById("prev").disabled = stepIx === 0;
  document.getElementById("next").disabled = stepIx === deal.steps.length - 1;
  document.getElementById("prevDeal").disabled = dealIx === 0;
  document.getElementById("nextDeal").disabled = dealIx === DATA.deals.length - 1;
  fill("seats", ...s.seats.map(p => el("div", { class: "seat" + (p.to_move ? " to-move" : "") + (p.in ? "" : " out"),
                                                "data-seat": p.seat },
      el("div", { class: "who" }, p.seat + " " + p.name,
         el("span", { class: "tag" }, p.in ? (p.value === null ? "" : "value " + p.value) + ", coins " + p.coins : "out"),
         ...(p.dealer ? [el("span", { class: "tag" }, "dealer")] : []),
         ...(p.knocker ? [el("span", { class: "decl knock" }, "knocked")] : []),
         ...(p.thrower ? [el("span", { class: "decl knock" }, "threw down")] : [])),
      el("div", { class: "cards" }, ...p.hand.map(c => cardEl(c))))));
  const top = s.pile.length ? [cardEl(s.pile[s.pile.length - 1])] : [];
  fill("middle",
       el("div", { class: "slot" }, ...top, el("div", {}, "discard pile, " + s.pile.length + " card" + (s.pile.length === 1 ? "" : "s"))),
       el("div", { class: "slot" }, ...(s.stock_top ? [cardEl(s.stock_top)] : []),
          el("div", {}, "stock, " + s.stock + " card" + (s.stock === 1 ? "" : "s") + (s.stock_top ? " (top)" : ""))),
       el("div", { class: "slot" }, el("div", {}, "kitty " + s.kitty),
          ...(s.owed.length ? [el("div", {}, "last turns: " + s.owed.join(", "))] : [])));
  fill("event", s.text);
  fill("pos", "event " + s.position + " of the table's log");
  for (const sec of document.querySelectorAll("section.deal")) {
    const current = Number(sec.dataset.deal) === deal.deal;
    sec.classList.toggle("current", current);
    for (const li of sec.querySelectorAll("li[data-step]")) li.classList.toggle("current", current && Number(li.dataset.step) === stepIx);
  }
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
if (DATA.deals.length) fromHash();
else fill("event", "no deals in this log");
</script>
</body>
</html>
"""
