// skat web: a Thirty-one table, watched or played. web.js routes every message whose `game` is
// "thirty-one" here. A spectator's message is the public view (coins, kitty, the discard pile,
// the stock's size, whose turn, the knock, shown hands, places) and the score sheet; a seat's
// message is the seat's own update (its hand, its legal actions). Nothing here can show a card
// the messages do not carry, and they carry only what the reader may see.
"use strict";
const T31 = { spec: null, seat: null, answered: -1, pending: false, player: null, ticking: false };
const T31_RANKS = "23456789TJQKA";
const T31_VALUES = [2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10, 11];
const T31_SUITS = "CSHD";
const T31_ENDS = {
  thirty_one: "31!", showdown: "showdown", throw_down: "thrown down: showdown",
  void: "void: the stock ran out, no lives lost", turn_limit: "void: the turn limit was reached",
};

// --- hand values (rules T2, T9, T10), in half points as protocol.thirty_one.cards counts them ---

function t31Value(c) { return T31_VALUES[T31_RANKS.indexOf(c[1])]; }
function t31Three(a, b, c, rules) {
  const [va, vb, vc] = [t31Value(a), t31Value(b), t31Value(c)];
  if (a[0] === b[0] && b[0] === c[0]) {
    let best = 2 * (va + vb + vc);
    if (rules && rules.straight_flush && best < 62) {
      const r = [a, b, c].map(x => T31_RANKS.indexOf(x[1])).sort((x, y) => x - y);
      if (r[1] === r[0] + 1 && r[2] === r[1] + 1) best = r[0] === 10 ? 62 : 60;
    }
    return best;
  }
  let best;
  if (a[0] === b[0]) best = 2 * Math.max(va + vb, vc);
  else if (a[0] === c[0]) best = 2 * Math.max(va + vc, vb);
  else if (b[0] === c[0]) best = 2 * Math.max(vb + vc, va);
  else {
    best = 2 * Math.max(va, vb, vc);
    const kind = rules ? String(rules.three_of_a_kind || "off") : "off";
    if (kind !== "off" && a[1] === b[1] && b[1] === c[1]) best = kind === "30.5" ? 61 : 60;
  }
  return best;
}
function t31HandValue(cards, rules) {
  if (cards.length === 3) return t31Three(cards[0], cards[1], cards[2], rules);
  if (cards.length > 3) {
    let best = 0;
    for (let i = 0; i < cards.length; i++) for (let j = i + 1; j < cards.length; j++)
      for (let k = j + 1; k < cards.length; k++) best = Math.max(best, t31Three(cards[i], cards[j], cards[k], rules));
    return best;
  }
  const totals = {};
  for (const c of cards) totals[c[0]] = (totals[c[0]] || 0) + t31Value(c);
  return 2 * Math.max(0, ...Object.values(totals));
}
function t31Points(half) { return half % 2 ? (half / 2).toFixed(1) : String(half / 2); }
function t31Sorted(cards) {
  // by suit (clubs, spades, hearts, diamonds), then rank, highest first
  const key = c => T31_SUITS.indexOf(c[0]) * 20 + (12 - T31_RANKS.indexOf(c[1]));
  return cards.slice().sort((x, y) => key(x) - key(y));
}
function t31Face(code) { return (code[1] === "T" ? "10" : code[1]) + SUITS[code[0]]; }

// --- messages ------------------------------------------------------------------------------

function t31Message(m, playing) {
  document.getElementById("skat-main").classList.add("hidden");
  document.getElementById("t31-main").classList.remove("hidden");
  if (m.kind === "seat") {
    // The next table (a tournament's next series) counts its log positions from 0 again.
    if (T31.seat && T31.seat.table !== m.table) Object.assign(T31, { answered: -1, pending: false });
    T31.seat = m;
    if (m.update.index > T31.answered) T31.pending = false;
    if (T31.spec && T31.spec.view && T31.spec.view.table !== m.table) T31.spec = null;
  } else if (m.kind === "table") {
    if (T31.seat && m.view && m.view.table !== T31.seat.table) return;
    T31.spec = m;
  }
  if (playing && !T31.ticking) { T31.ticking = true; setInterval(t31Countdown, 250); }
  t31Render();
}

function t31Public() {
  // The newer of the two pictures for what is public: the seat's own view or the spectator's.
  const spec = T31.spec && T31.spec.view ? T31.spec : null;
  const seat = T31.seat;
  if (seat && (!spec || seat.update.index >= spec.index)) return { v: seat.update.view, index: seat.update.index };
  if (spec) return { v: spec.view, index: spec.index };
  return null;
}

function t31MyHand(pub) {
  // The seat's hand as its newest update says, with its own moves since (on the public view).
  if (!T31.seat) return null;
  const u = T31.seat.update;
  const mine = u.view;
  if ((mine.deal || 0) !== (pub.v.deal || 0)) return null;
  let hand = (mine.hand || []).slice();
  if (pub.v !== mine && hand.length) {
    const events = pub.v.history || [];
    const first = pub.index - events.length;
    events.forEach((e, i) => {
      if (first + i < u.index || e.seat !== mine.seat) return;
      if (name(e) === "t31_discarded") hand = hand.filter(c => c !== e.card);
      else if (name(e) === "t31_took" && e.card && !hand.includes(e.card)) hand.push(e.card);
    });
  }
  return hand;
}

function t31Me() { return T31.seat ? T31.seat.update.view.seat : -1; }
function t31Who(v, seat) {
  // A seat in a sentence or a list: the person's own is "You" (so "You knock" reads as it should).
  return seat === t31Me() ? "You" : v.players[seat];
}
function t31Says(seat, third, plain) { return seat === t31Me() ? plain : third; }
function t31SeatName(v, seat) {
  const p = v.players[seat];
  return seat === t31Me() ? (p.toLowerCase() === "you" ? "You" : "You (" + p + ")") : p;
}

function t31Render() {
  const pub = t31Public();
  if (!pub) return;
  const v = pub.v;
  const spec = T31.spec;
  const phase = v.phase || "between_deals";
  const closed = phase === "closed" || (spec && spec.closed);
  const me = T31.seat ? T31.seat.update.view.seat : -1;
  document.body.dataset.index = Math.max(spec && spec.view ? spec.index : 0, T31.seat ? T31.seat.update.index : 0);
  document.body.dataset.game = "thirty-one";
  document.body.dataset.phase = closed ? "closed" : phase;
  document.title = "skatbus: " + v.table + " (Thirty-one)";
  fill("title", "Thirty-one: table " + v.table +
    (T31.player ? (T31.player.toLowerCase() === "you" ? " \u2014 your seat" : " \u2014 playing as " + T31.player) : ""));
  const deal = v.deal || 0;
  fill("where", closed ? "table closed" : deal ? "deal " + deal + " \u2014 " + t31PhaseText(v, phase) : "waiting for the deal");
  const hand = t31MyHand(pub);
  const dealt = (v.history || []).find(e => name(e) === "t31_dealt");
  const inDeal = dealt ? dealt.order : (v.active || []);
  const shown = v.shown || [];
  const over = phase === "between_deals" || closed;
  const eliminated = v.eliminated || [];
  const places = v.places || [];
  fill("t31-seats", ...v.players.map((p, seat) => {
    let cards = [];
    let value = "";
    if (shown[seat] && shown[seat].length) {
      cards = t31Sorted(shown[seat]).map(c => cardEl(c));
      value = t31Points(t31HandValue(shown[seat], v.rules));
    } else if (seat === me && hand) {
      const legal = t31Legal();
      const discarding = legal.some(a => a.type === "discard");
      cards = t31Sorted(hand).map(c => cardEl(c, !discarding ? "" : legal.some(a => a.type === "discard" && a.card === c) ? "legal" : "unplayable"));
      if (!hand.length && inDeal.includes(seat) && !over) cards = [backEl(), backEl(), backEl()];
      const own = T31.seat.update.view;  // its value when the hand is the update's, else counted here
      const same = JSON.stringify(hand.slice().sort()) === JSON.stringify((own.hand || []).slice().sort());
      if (hand.length) value = same ? String(own.hand_value || 0) : t31Points(t31HandValue(hand, v.rules));
    } else if (inDeal.includes(seat) && !over) {
      const n = v.to_move === seat && phase === "discard" ? 4 : 3;
      cards = Array.from({ length: n }, backEl);
    }
    const tags = [];
    const coins = (v.coins || [])[seat] || 0;
    tags.push(el("span", { class: "tag coins", "data-coins": coins },
      eliminated.includes(seat) ? "out" : coins ? coins + (coins === 1 ? " coin" : " coins") : "on the county"));
    if (v.dealer === seat && !closed) tags.push(el("span", { class: "tag" }, "dealer"));
    if (v.knocker === seat && !over) tags.push(el("span", { class: "decl knock" }, "knocked"));
    if ((v.last_turns || []).includes(seat) && !over) tags.push(el("span", { class: "tag" }, "last turn to come"));
    if (eliminated.includes(seat)) tags.push(el("span", { class: "tag" }, "eliminated"));
    if ((v.withdrawn || []).includes(seat)) tags.push(el("span", { class: "tag" }, "withdrawn"));
    if (places.length) tags.push(el("span", { class: "decl" }, "place " + places[seat]));
    if (value) tags.push(el("span", { class: "tag value", "data-value": value }, "value " + value));
    if (seat === me && hand && !hand.length && inDeal.includes(seat) && !over) tags.push(el("span", { class: "tag" }, "not looked at yet"));
    return el("div", { class: "seat" + (v.to_move === seat && !over ? " to-move" : "") + (seat === me ? " me" : "") +
        (eliminated.includes(seat) ? " out" : ""), "data-seat": seat },
      el("div", { class: "who" }, t31SeatName(v, seat), ...tags), el("div", { class: "cards", "data-hand": seat }, ...cards));
  }));
  const pile = v.pile || [];
  fill("t31-stock", deal && !over ? backEl() : el("div", { class: "empty" }, ""), el("div", { id: "t31-stocksize", "data-stock": v.stock || 0 }, "stock: " + (v.stock || 0)));
  fill("t31-pile", pile.length ? cardEl(pile[pile.length - 1]) : el("div", { class: "empty" }, "no discard pile"),
       el("div", {}, "discard pile: " + pile.length));
  fill("t31-kitty", el("div", { class: "kitty", id: "t31-kittysize", "data-kitty": v.kitty || 0 }, String(v.kitty || 0)), el("div", {}, "kitty"));
  fill("t31-pilecards", ...pile.map(c => cardEl(c)));
  t31State(v, phase, closed);
  fill("t31-history", ...(v.history || []).map(e => t31Line(e, v)).filter(x => x).map(kids => el("li", {}, ...kids)));
  t31Last(v, spec);
  t31Sheet(v, spec);
  t31Places(v, spec, closed);
  t31Actions(v, phase, closed);
}

function t31PhaseText(v, phase) {
  if (v.paused) return "paused";
  if (phase === "between_deals") return "the deal is over";
  if (v.to_move == null) return "";
  if (v.to_move === t31Me()) return "your turn" + (phase === "discard" ? " to discard" : "");
  return t31Who(v, v.to_move) + (phase === "discard" ? " to discard" : " to take a card" + (v.knocker == null ? " or knock" : ""));
}

function t31State(v, phase, closed) {
  const r = v.rules || {};
  const options = [];
  if (r.min_knock) options.push("knock with " + r.min_knock + " or more");
  if (r.knock_in_first_round === false) options.push("no knock in the first round");
  if (r.throw_down) options.push("throw-down");
  if (r.three_of_a_kind && r.three_of_a_kind !== "off") options.push("three of a kind " + r.three_of_a_kind);
  if (r.straight_flush) options.push("straight flush");
  if (r.county === false) options.push("no county");
  if (r.stock_out === "void") options.push("an empty stock voids the deal");
  const lines = [
    (r.coins || 3) + ((r.coins || 3) === 1 ? " coin" : " coins") + " each" + (options.length ? "; " + options.join(", ") : ""),
    "kitty: " + (v.kitty || 0) + (v.kitty === 1 ? " coin" : " coins"),
  ];
  if (v.deal) lines.push("deal " + v.deal + ", dealt by " + (v.dealer === t31Me() ? "you" : v.players[v.dealer]));
  if (v.knocker != null && phase !== "between_deals" && !closed) {
    lines.push(t31Who(v, v.knocker) + " knocked");
    const left = v.last_turns || [];
    lines.push("last turns left: " + (left.length ? left.map(s => t31Who(v, s)).join(", ") : "none"));
  }
  const out = v.eliminated || [];
  if (out.length) lines.push("eliminated: " + out.map(s => t31Who(v, s)).join(", "));
  if (closed) lines.push("the game is over");
  fill("t31-state", ...lines.map(t => el("li", {}, t)));
}

function t31Line(e, v) {
  const who = e.seat != null ? t31Who(v, e.seat) : "";
  const s = (third, plain) => t31Says(e.seat, third, plain);
  switch (name(e)) {
    case "t31_dealt": {
      const m = e.order.length;
      return [t31Who(v, e.dealer) + " " + t31Says(e.dealer, "deals", "deal") + "; the discard pile starts with ", cardEl(e.deck[3 * m])];
    }
    case "t31_took":
      if (e.source === "discard") return [who + " " + s("takes", "take") + " ", cardEl(e.card), " from the discard pile"];
      return e.card ? [who + " " + s("takes", "take") + " ", cardEl(e.card), " from the stock"]
        : [who + " " + s("takes", "take") + " a card from the stock"];
    case "t31_discarded": return [who + " " + s("discards", "discard") + " ", cardEl(e.card)];
    case "t31_knocked": return [who + " " + s("knocks", "knock")];
    case "t31_looked": return [who + " " + s("looks at the hand", "look at your hand")];
    case "t31_threw": return [who + " " + s("throws", "throw") + " down unseen"];
    case "t31_restocked": return ["the stock is empty: " + e.stock.length + " cards of the discard pile make a new stock"];
    case "t31_deal_ended": return ["the deal ends: " + (T31_ENDS[e.end] || e.end)];
    case "timed_out": return [who + " ran out of time"];
    case "seat_withdrawn": return [who + " " + s("is", "are") + " withdrawn"];
    case "table_paused": return ["the table is paused" + (e.reason ? ": " + e.reason : "")];
    case "table_resumed": return ["the table resumes"];
  }
  return null;
}

function t31Last(v, spec) {
  // The last scored deal: the hands it showed, the lives lost, the coins after.
  const rows = spec ? spec.sheet || [] : [];
  const row = rows[rows.length - 1];
  document.getElementById("t31-lastbox").classList.toggle("hidden", !row);
  if (!row) return;
  fill("t31-lasttitle", "Deal " + row.deal + ": " + (T31_ENDS[row.end] || row.end));
  const shown = row.shown || [];
  fill("t31-last", el("p", { class: "why" }, t31Why(row, v)), ...v.players.map((p, seat) => {
    const hand = shown[seat] || [];
    const lives = (row.lives || [])[seat] || 0;
    const out = (row.eliminated || []).includes(seat);
    return el("div", { class: "lastseat", "data-seat": seat },
      el("span", { class: "who" }, t31Who(v, seat)), " ",
      ...t31Sorted(hand).map(c => cardEl(c)),
      hand.length ? " " + t31Points(t31HandValue(hand, v.rules)) : "",
      el("span", { class: "lives", "data-lives": lives }, lives ? " " + t31Says(seat, "loses", "lose") + " " + lives + (lives === 1 ? " life" : " lives") : ""),
      out ? " \u2014 eliminated" : "");
  }));
}

function t31Why(row, v) {
  // Why the deal ended as it did, in one sentence: who lost lives and for what.
  const lives = row.lives || [];
  const losers = v.players.map((_, s) => s).filter(s => lives[s] > 0);
  const shown = row.shown || [];
  const names = seats => seats.map(s => t31Who(v, s)).join(", ").replace(/, ([^,]*)$/, " and $1");
  const lose = seats => seats.length === 1 && seats[0] !== t31Me() ? "loses" : "lose";
  if (!losers.length) return "Nobody loses a life" + (T31_ENDS[row.end] ? " (" + T31_ENDS[row.end] + ")." : ".");
  if (row.end === "thirty_one") {
    const holders = v.players.map((_, s) => s).filter(s => (shown[s] || []).length);
    return names(holders) + " " + (holders.length === 1 && holders[0] !== t31Me() ? "has" : "have") + " 31: " +
      names(losers) + " " + lose(losers) + " a life.";
  }
  const values = losers.map(s => (shown[s] || []).length ? t31Points(t31HandValue(shown[s], v.rules)) : null).filter(x => x != null);
  const twice = losers.filter(s => lives[s] > 1);
  return "The lowest hand" + (values.length ? " (" + values[0] + ")" : "") + " loses: " + names(losers) + " " + lose(losers) + " " +
    (twice.length ? "" : "a life") + (twice.length ? lives[twice[0]] + " lives (the knocker had the lowest hand and pays double)" : "") + ".";
}

function t31Sheet(v, spec) {
  const rows = spec ? spec.sheet || [] : [];
  const head = el("tr", {}, el("th", {}, "deal"), el("th", {}, "end"),
    ...v.players.map((p, seat) => el("th", { class: "num" }, seat === t31Me() ? "You" : p)), el("th", { class: "num" }, "kitty"));
  const body = rows.map(r => el("tr", { "data-deal": r.deal }, el("td", {}, String(r.deal)), el("td", {}, T31_ENDS[r.end] || r.end),
    ...r.coins.map((c, seat) => el("td", { class: "num" }, (r.lives[seat] ? "\u2212" + r.lives[seat] + " \u2192 " : "") +
      ((r.eliminated || []).includes(seat) ? "out" : String(c)))),
    el("td", { class: "num" }, String(r.kitty))));
  fill("t31-sheet", head, ...body);
}

function t31Places(v, spec, closed) {
  const places = v.places && v.places.length ? v.places : (spec && spec.places) || [];
  document.getElementById("t31-placesbox").classList.toggle("hidden", !closed || !places.length);
  if (!closed || !places.length) return;
  const order = v.players.map((p, seat) => seat).sort((a, b) => places[a] - places[b] || a - b);
  fill("t31-places", el("tr", {}, el("th", {}, "place"), el("th", {}, "player"), el("th", { class: "num" }, "coins")),
    ...order.map(seat => el("tr", { "data-seat": seat, "data-place": places[seat] }, el("td", {}, String(places[seat])),
      el("td", {}, t31Who(v, seat)), el("td", { class: "num" }, String((v.coins || [])[seat] || 0)))));
}

// --- the seat's move -----------------------------------------------------------------------

function t31Prompt() {
  // The newest update, while it lists something to do that has not been answered.
  if (!T31.seat || T31.pending) return null;
  const u = T31.seat.update;
  return (u.view.legal || []).length && u.index > Math.max(T31.answered, T31.seat.answered) ? u : null;
}

function t31Legal() { const u = t31Prompt(); return u ? u.view.legal || [] : []; }

function t31ActionText(a, v) {
  switch (a.type) {
    case "take": {
      if (a.source === "stock") return "take a card from the stock";
      const pile = v.pile || [];
      return "take " + (pile.length ? t31Face(pile[pile.length - 1]) : "the top card") + " from the discard pile";
    }
    case "knock": return "knock";
    case "look": return "look at your hand";
    case "throw": return "throw down unseen";
    case "discard": return "discard " + t31Face(a.card);
  }
  return a.type;
}

function t31Actions(v, phase, closed) {
  const box = document.getElementById("t31-actions");
  box.classList.toggle("hidden", !T31.seat);
  if (!T31.seat) return;
  const u = t31Prompt();
  document.body.dataset.yourTurn = u ? "1" : "0";
  document.body.dataset.prompt = u ? u.index : -1;
  if (!u) {
    const waiting = closed ? "the game is over" : v.to_move != null ? "waiting for " + t31Who(v, v.to_move) + "\u2026" : "waiting for the table\u2026";
    fill("t31-prompt", T31.pending ? "sent; waiting for the table\u2026" : waiting);
    fill("t31-buttons");
    fill("t31-countdown");
    return;
  }
  const legal = u.view.legal || [];
  const buttons = legal.filter(a => a.type !== "discard").map(a => {
    const b = el("button", { class: a.type === "take" ? "main" : "", "data-action": JSON.stringify(a) }, t31ActionText(a, u.view));
    b.onclick = () => t31Send(a);
    return b;
  });
  const discarding = legal.some(a => a.type === "discard");
  fill("t31-prompt", discarding ? "Discard a card: click one of the highlighted cards." : u.your_turn
    ? "Your turn: take a card" + (legal.some(a => a.type === "knock") ? ", or knock." : ".") : "You may look at your hand now.");
  fill("t31-buttons", ...buttons);
  for (const c of document.querySelectorAll('[data-hand="' + u.view.seat + '"] .card.legal')) c.onclick = () => t31Send({ type: "discard", card: c.dataset.card });
  t31Countdown();
}

async function t31Send(action) {
  const u = t31Prompt();
  if (!u) return;
  T31.pending = true;
  T31.answered = u.index;
  t31Render();
  let reply;
  try {
    const r = await fetch("/play/" + encodeURIComponent(T31.player) + "/" + encodeURIComponent(T31.seat.table), {
      method: "POST", headers: { "Content-Type": "application/json", "X-Skat": "1" }, body: JSON.stringify(action),
      credentials: "same-origin",
    });
    reply = await r.json();
  } catch (err) {
    reply = { ok: false, reason: String(err) };
  }
  T31.pending = false;
  if (!reply.ok) T31.answered = -1;
  fill("t31-reply", reply.ok ? "" : "refused: " + (reply.reason || reply.code));
  t31Render();
}

function t31Countdown() {
  const u = t31Prompt();
  const c = document.getElementById("t31-countdown");
  if (!c) return;
  if (!u || !u.deadline) { c.textContent = ""; return; }
  const left = Math.max(0, u.deadline - Date.now() / 1000);
  c.textContent = left.toFixed(0) + " s left";
  c.classList.toggle("late", left < 5);
}
