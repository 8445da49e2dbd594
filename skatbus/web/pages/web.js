// skat web: the live pages. Everything shown comes from the server's event stream, which
// sends only what the page's reader may see (a spectator's view, or the seat's own updates);
// this script draws it and, on a seat, sends the player's choice among the legal actions.
"use strict";
const SUITS = { C: "\u2663", S: "\u2660", H: "\u2665", D: "\u2666" };
const RANKS = { T: "10" };
const GAMES = { C: "Clubs", S: "Spades", H: "Hearts", D: "Diamonds", G: "Grand", N: "Null" };

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const kid of kids) e.append(kid);
  return e;
}
function cardEl(code, extra) {
  const red = code[0] === "H" || code[0] === "D";
  const rank = RANKS[code[1]] || code[1];
  return el("div", { class: "card" + (red ? " red" : "") + (extra ? " " + extra : ""), "data-card": code, title: code },
    el("span", { class: "r" }, rank), el("span", { class: "s" }, SUITS[code[0]]));
}
function backEl() { return el("div", { class: "card back" }); }
function fill(id, ...kids) { const e = document.getElementById(id); e.replaceChildren(...kids); return e; }
function name(e) { return e.type.split("/")[0]; }
function gameText(g) {
  if (!g) return "";
  const words = [GAMES[g.game] || g.game];
  if (g.hand) words.push("hand");
  if (g.schneider) words.push("schneider announced");
  if (g.schwarz) words.push("schwarz announced");
  if (g.ouvert) words.push("ouvert");
  return words.join(" ");
}
function actionText(a) {
  switch (a.type) {
    case "bid": return "bid " + a.value;
    case "hold": return "hold";
    case "pass": return "pass";
    case "pickup": return "pick up the skat";
    case "declare": return gameText(Object.assign({ hand: false }, a));
    case "kontra": return "Kontra";
    case "re": return "Re";
    case "show": return "show my cards";
    case "resign": return "resign";
    case "discard": return "discard " + a.cards.join(" ");
    case "play": return "play " + a.card;
  }
  return a.type;
}
function status(text) { const s = document.getElementById("status"); if (s) s.textContent = text; }
function stream(url, onMessage) {
  const source = new EventSource(url);
  source.onopen = () => status("live");
  source.onmessage = e => onMessage(JSON.parse(e.data));
  source.onerror = () => status("reconnecting…");
  return source;
}

// --- the lobby -------------------------------------------------------------------------------

function lobby() {
  stream("/events/lobby", m => {
    // A table whose feed is withheld (its series' tables play the same deals) is not offered:
    // its name and why, no link (the server refuses it to everyone until the series has ended).
    fill("tables", ...(m.tables.length ? m.tables.map(t => el("li",
      Object.assign({ "data-table": t.table, "data-game": t.game || "skat" }, t.withheld ? { "data-withheld": "1" } : {}),
      t.withheld ? el("span", { class: "withheld" }, t.table) : el("a", { href: "/table/" + encodeURIComponent(t.table) }, t.table),
      " \u2014 ", el("span", { class: "game" }, t.title || "Skat"), ": " + t.players.join(", "),
      ...(t.withheld ? [" ", el("span", { class: "hint reason" }, "(" + t.withheld + ")")] : [])))
      : [el("li", { class: "hint" }, "no open tables")]));
    fill("tournaments", ...(m.tournaments.length ? m.tournaments.map(t => el("li", { "data-tournament": t.id, "data-game": t.game || "skat" },
      el("a", { href: "/tournament/" + encodeURIComponent(t.id) }, t.id),
      " \u2014 ", ...(t.game && t.game !== "skat" ? [el("span", { class: "game" }, t.title), ": "] : []),
      t.entrants.join(", ") + (t.series ? " (" + t.series + " series)" : "") + ": " + t.finished + "/" + t.tables +
      " tables finished" + (t.done ? " (done)" : "")))
      : [el("li", { class: "hint" }, "no tournaments")]));
    document.getElementById("seatsbox").classList.toggle("hidden", !m.seats.length);
    fill("seats", ...m.seats.map(p => el("li", {}, el("a", { href: "/play/" + encodeURIComponent(p) }, "play as " + p))));
  });
}

// --- a tournament ----------------------------------------------------------------------------

const num = text => el("td", { class: "num" }, text);
const head = (...names) => el("tr", {}, ...names.map(n => n.startsWith("#") && n.length > 1
  ? el("th", { class: "num" }, n.slice(1)) : el("th", {}, n)));

function tournament() {
  const tid = decodeURIComponent(location.pathname.split("/")[2]);
  document.getElementById("title").textContent = "Tournament " + tid;
  stream("/events/tournament/" + encodeURIComponent(tid), m => {
    showFairness(m.fairness);
    if (m.many) { seriesTournament(m); return; }
    if (m.ranking === "places") { placeTournament(m); return; }
    fill("where", m.deals + "/" + m.of + " deals" + (m.done ? " \u2014 finished" : ""));
    document.body.dataset.deals = m.deals;
    fill("standings", el("tr", {}, el("th", {}, "#"), el("th", {}, "player"), el("th", { class: "num" }, "Seeger-Fabian"),
      el("th", { class: "num" }, "per deal"), el("th", { class: "num" }, "deals"), el("th", { class: "num" }, "games won")),
      ...m.standings.map((s, i) => el("tr", { "data-player": s.player }, el("td", {}, String(i + 1)), el("td", {}, s.player),
        el("td", { class: "num" }, String(s.seeger_fabian)), el("td", { class: "num" }, s.per_deal.toFixed(1)),
        el("td", { class: "num" }, String(s.deals)), el("td", { class: "num" }, String(s.won)))));
    fill("ttables", el("tr", {}, el("th", {}, "table"), el("th", {}, "seats"), el("th", { class: "num" }, "deals"), el("th", {}, "")),
      ...m.tables.map(t => el("tr", { "data-table": t.table },
        el("td", {}, el("a", { href: "/table/" + encodeURIComponent(t.table) }, t.table)), el("td", {}, t.players.join(", ")),
        el("td", { class: "num" }, t.deals + "/" + t.of),
        el("td", {}, t.closed ? el("a", { href: "/replay/" + encodeURIComponent(t.table), class: "replay" }, "replay") : "playing"))));
  });
}

function showFairness(f) {
  // The fair scheme's public part: the commitment (the server seed itself stays secret until the
  // results reveal it, and no message carries it) and how many remote entrants gave a nonce.
  const box = document.getElementById("fairbox");
  box.classList.toggle("hidden", !f);
  if (!f) return;
  Object.assign(box.dataset, { commitment: f.commitment, nonces: f.nonces, remote: f.remote, closed: f.closed ? "1" : "0" });
  const given = f.nonces + " of " + f.remote + " remote entrant" + (f.remote === 1 ? "" : "s") + " gave one";
  fill("fairness", "Every card follows from a secret server seed and the entrants' nonces. The seed's commitment, " +
    "published before the first deal (the results reveal the seed, and skat verify checks it against this):",
    el("code", { id: "commitment" }, f.commitment),
    el("span", { id: "nonces" }, "Nonces: " + given + (f.closed ? "; closed, so every deal is fixed" +
      (f.digest ? " (digest " + f.digest.slice(0, 16) + "\u2026)" : "") : "; still open") + "."));
}

function tableLink(t) {
  // A withheld table (its series still playing the same deals) cannot be watched: no link.
  return t.withheld ? el("span", { class: "withheld" }, t.table) : el("a", { href: "/table/" + encodeURIComponent(t.table) }, t.table);
}
function tableState(t) {
  // A table not opened yet waits; "opened" is only known for a tournament of many entrants.
  // A withheld one that closed is replayed once its series has ended.
  return t.closed ? (t.withheld ? "finished" : el("a", { href: "/replay/" + encodeURIComponent(t.table), class: "replay" }, "replay"))
    : t.opened === false ? "waiting" : "playing";
}

function pointStandings(rows) {
  // Skat's standings as results.json gives them (Seeger-Fabian points, per deal with its 95 %
  // interval, as skat tournament prints them); an entrant that forfeited ranks below the others.
  return [head("#", "player", "#Seeger-Fabian", "#per deal", "#\u00b1\u00a095\u00a0%", "#deals", "#declared", "#won", "#time-outs"),
    ...(rows.length ? rows.map((s, i) => el("tr", { "data-player": s.player }, el("td", {}, String(i + 1)),
      el("td", {}, s.player + (s.forfeit ? " (forfeit)" : "")), num(String(s.seeger_fabian)), num(s.per_deal.toFixed(1)),
      num(s.ci95 == null ? "" : s.ci95.toFixed(1)), num(String(s.deals)), num(String(s.declared)), num(String(s.won)),
      num(String(s.timeouts))))
      : [el("tr", {}, el("td", { colspan: "9", class: "hint" }, "no deal scored yet"))])];
}

function pointTableRows(tables) {
  return [head("table", "seats", "#deals", ""), ...tables.map(t => el("tr",
    Object.assign({ "data-table": t.table, "data-deals": t.deals, "data-players": t.players.join(",") },
      t.withheld ? { "data-withheld": "1" } : {}),
    el("td", {}, tableLink(t)), el("td", {}, t.players.join(", ")), num(t.deals + "/" + t.of), el("td", {}, tableState(t))))];
}

function ordinal(p) {
  const tens = p % 100, ones = p % 10;
  return p + (tens >= 10 && tens <= 20 ? "th" : ({ 1: "st", 2: "nd", 3: "rd" })[ones] || "th");
}

function placeStandings(rows) {
  return [head("#", "player", "#place pts/table", "#\u00b1\u00a095\u00a0%", "#tables", "#wins", "#mean coins", "#deals",
    "#time-outs", "places"),
    ...(rows.length ? rows.map((s, i) => el("tr", { "data-player": s.player }, el("td", {}, String(i + 1)),
      el("td", {}, s.player + (s.forfeit ? " (forfeit)" : "")), num(s.per_table.toFixed(2)),
      num(s.ci95 == null ? "" : s.ci95.toFixed(2)), num(String(s.tables)), num(String(s.wins)), num(s.mean_coins.toFixed(2)),
      num(String(s.deals)), num(String(s.timeouts)),
      el("td", {}, Object.entries(s.places).map(([p, n]) => ordinal(Number(p)) + " " + n).join(", "))))
      : [el("tr", {}, el("td", { colspan: "10", class: "hint" }, "no table has finished yet"))])];
}

function placeTableRows(tables) {
  return [head("table", "seats", "#deals", "#done", "places", ""), ...tables.map(t => {
    const seats = t.players.map((p, seat) => ({ p, seat }));
    const places = t.withheld ? "shown once the series has ended"
      : t.places ? seats.slice().sort((a, b) => t.places[a.seat] - t.places[b.seat] || a.seat - b.seat)
      .map(({ p, seat }) => ordinal(t.places[seat]) + " " + p + " (" + t.coins[seat] + ")").join(", ")
      : t.broken ? "log does not fold: " + t.broken
      : "lives lost: " + seats.map(({ p, seat }) => p + " " + (t.lost[seat] || 0)).join(", ");
    return el("tr", Object.assign({ "data-table": t.table, "data-progress": t.progress, "data-players": t.players.join(",") },
      t.places ? { "data-places": t.places.join(",") } : {}, t.withheld ? { "data-withheld": "1" } : {}),
      el("td", {}, tableLink(t)), el("td", {}, t.players.join(", ")),
      num(String(t.deals)), num(Math.floor(100 * t.progress) + "\u00a0%"), el("td", {}, places), el("td", {}, tableState(t)));
  })];
}

function showScoring(m) {
  let scoring = document.getElementById("scoring");
  if (!scoring) { scoring = el("p", { class: "hint", id: "scoring" }); document.getElementById("standings").after(scoring); }
  scoring.textContent = m.scoring ? "(" + m.scoring + ")" : "";
}

function placeTournament(m) {
  // A game ranked by places (Thirty-one): tables done as the runner's progress line counts them,
  // standings by place points per finished table (the numbers skat tournament prints), and
  // each table's progress by lives lost, or once it finished its places and a replay link.
  document.getElementById("title").textContent = m.title + " tournament " + m.id;
  fill("where", m.progress.toFixed(1) + "/" + m.of + " tables (" + m.deals + " deals)" + (m.done ? " \u2014 finished" : ""));
  Object.assign(document.body.dataset, { game: m.game, deals: m.deals, finished: m.finished, done: m.done ? "1" : "0" });
  fill("standings", ...placeStandings(m.standings));
  showScoring(m);
  fill("ttables", ...placeTableRows(m.tables));
}

const SERIES_NOTES = {
  "to be drawn": s => "Drawn by the standings once series " + (s.series - 1) + " has finished (Swiss).",
  "waiting": () => "Drawn; no table has opened yet.",
  "playing": () => "",
  "done": () => "",
};

function seriesTournament(m) {
  // A tournament of many entrants: the standings over every series, then each series with its
  // state, its tables and players, and its own standings; the crosstable of the finished tables.
  const places = m.ranking === "places";
  const playing = m.series.filter(s => s.status === "playing").map(s => s.series);
  document.getElementById("title").textContent = (m.game && m.game !== "skat" ? m.title + " tournament " : "Tournament ") + m.id;
  fill("where", m.entrants.length + " entrants, " + m.series_count + " series (" + m.pairing + ") \u2014 " +
    (places ? m.progress.toFixed(1) + "/" + m.of + " tables (" + m.deals + " deals)" : m.deals + "/" + m.of + " deals") +
    (m.series.some(s => s.status === "to be drawn") ? " of the series drawn so far" : "") +
    (m.done ? " \u2014 finished" : playing.length ? " \u2014 series " + playing.join(", ") + " playing" : ""));
  Object.assign(document.body.dataset, { game: m.game, many: "1", deals: m.deals, done: m.done ? "1" : "0",
    series: m.series.map(s => s.status).join(",") });
  document.getElementById("tablesbox").classList.add("hidden");
  fill("standings", ...(places ? placeStandings(m.standings) : pointStandings(m.standings)));
  showScoring(m);
  fill("series", ...m.series.map(s => {
    const panel = el("div", { class: "panel series " + s.status.replaceAll(" ", "-"), "data-series": s.series, "data-status": s.status },
      el("h2", {}, "Series " + s.series + " of " + m.series_count + " \u2014 " + s.status));
    const note = s.reason ? s.reason + "." : SERIES_NOTES[s.status](s);
    if (note) panel.append(el("p", { class: "hint reason" }, note));
    if (s.withheld) {
      panel.dataset.withheld = "1";
      panel.append(el("p", { class: "hint withheld" }, "Its tables play the same deals: their results, this series' " +
        "standings and its replays are shown once every table of it has finished (until then a player could learn " +
        "from them what a deal holds)."));
    }
    if (s.tables.length) {
      panel.append(el("table", { class: "won series-tables" }, ...(places ? placeTableRows(s.tables) : pointTableRows(s.tables))));
    }
    if (s.standings.length) {
      panel.append(el("h3", {}, "Standings of series " + s.series), el("div", { class: "scroll" },
        el("table", { class: "won series-standings" }, ...(places ? placeStandings(s.standings) : pointStandings(s.standings)))));
    }
    return panel;
  }));
  showCrosstable(m);
}

function signed(x) {
  const text = Number.isInteger(x) ? String(x) : x.toFixed(1);
  return x > 0 ? "+" + text : text;
}

function showCrosstable(m) {
  // Each pair's record at the tables they shared (results.json's crosstable): the row's entrant
  // finished ahead of the column's, behind it, level; the margin in Seeger-Fabian points (Skat)
  // or place points. Columns are numbered by the rows, in the order of the standings.
  const cross = m.crosstable || {};
  const box = document.getElementById("crossbox");
  box.classList.toggle("hidden", !Object.keys(cross).length);
  if (!Object.keys(cross).length) return;
  const order = m.standings.map(s => s.player);
  for (const p of m.entrants) if (!order.includes(p)) order.push(p);
  const finished = m.series.reduce((n, s) => n + s.tables.filter(t => t.closed && !t.withheld).length, 0);
  fill("crosshint", "Row against column: tables finished ahead\u2013behind (=\u00a0level), and the margin in " +
    (m.ranking === "places" ? "place points" : "Seeger-Fabian points") + ", over the " + finished + " finished tables" +
    (m.done ? "." : " so far."));
  fill("crosstable", el("tr", {}, el("th", {}, "#"), el("th", {}, "entrant"), ...order.map((p, i) => el("th", { class: "num", title: p }, String(i + 1)))),
    ...order.map((a, i) => el("tr", { "data-player": a }, el("td", {}, String(i + 1)), el("td", {}, a), ...order.map(b => {
      if (a === b) return el("td", { class: "num self" }, "\u00d7");
      const r = (cross[a] || {})[b];
      if (!r) return el("td", { class: "num" }, "");
      return el("td", { class: "num", "data-against": b, "data-tables": r.tables, "data-ahead": r.ahead, "data-behind": r.behind,
        "data-level": r.level, "data-margin": r.margin,
        title: a + " against " + b + ": " + r.tables + " table" + (r.tables === 1 ? "" : "s") + ", ahead " + r.ahead + ", behind " +
          r.behind + ", level " + r.level + ", margin " + signed(r.margin) },
        r.ahead + "\u2013" + r.behind + (r.level ? " =" + r.level : ""), el("br"), el("span", { class: "margin" }, signed(r.margin)));
    }))));
}

// --- a table, watched or played --------------------------------------------------------------

const T = { spec: null, seat: null, answered: -1, picked: [], pending: false, firstSeen: new Map() };

function table() {
  const parts = location.pathname.split("/");
  const playing = parts[1] === "play";
  const who = decodeURIComponent(parts[2]);
  if (playing) {
    T.player = who;
    document.body.dataset.mode = "seat";
    T31.player = who;
    stream("/events/play/" + encodeURIComponent(who), m => {
      if (m.game === "thirty-one") { t31Message(m, true); return; }
      showSkat(m);
      if (m.kind === "seat") {
        if (T.seat && T.seat.table !== m.table) {
          // The next table (a tournament's next series): its log positions start again from 0,
          // so what was answered, picked or shown at the last table says nothing here.
          Object.assign(T, { answered: -1, picked: [], pending: false, spec: null });
        }
        T.seat = m;
        if (m.update.index > T.answered) T.pending = false;
      } else if (m.kind === "table" && (!T.seat || !m.view || m.view.table === T.seat.table)) T.spec = m;
      render();
    });
    setInterval(tickCountdown, 250);
  } else {
    document.body.dataset.mode = "spectator";
    const source = stream("/events/table/" + encodeURIComponent(who), m => {
      if (m.kind === "withheld") { source.close(); status(m.reason); document.body.dataset.withheld = "1"; return; }
      if (m.game === "thirty-one") { t31Message(m, false); return; }
      showSkat(m);
      T.spec = m;
      render();
    });
  }
}

function showSkat(m) {
  // A Skat table's page (a seat may move on from another game's table): its own layout.
  if (!(m.view || m.update)) return;
  document.getElementById("t31-main").classList.add("hidden");
  document.getElementById("skat-main").classList.remove("hidden");
}

function dealEvents(v) { return (v && v.history) || []; }

function mySeat() {
  return T.seat ? T.seat.update.view.seat : -1;
}

function myHand(v) {
  // The seat's own cards as its newest update says, less what it played since (on the public view).
  if (!T.seat) return [];
  const u = T.seat.update.view;
  let hand = u.hand || [];
  if (v && v.deal === u.deal) {
    const played = new Set(dealEvents(v).filter(e => name(e) === "card_played").map(e => e.card));
    hand = hand.filter(c => !played.has(c));
  }
  return hand;
}

function render() {
  const spec = T.spec;
  const v = spec && spec.view ? spec.view : (T.seat ? T.seat.update.view : null);
  if (!v) return;
  document.body.dataset.index = spec ? spec.index : 0;
  document.title = "skatbus: " + v.table;
  document.getElementById("title").textContent = "Table " + v.table + (T.player ? " \u2014 you are " + T.player : "");
  fill("where", "deal " + v.deal + (spec && spec.deals ? " of " + spec.deals : "") + " \u2014 " +
       (spec && spec.closed ? "table closed" : v.phase.replace("_", " ")));
  const events = dealEvents(v);
  const dealt = events.find(e => name(e) === "deal_dealt");
  const inDeal = dealt ? dealt.seats : v.players.map((_, i) => i);
  const me = mySeat();
  const played = new Map();
  for (const e of events) if (name(e) === "card_played") played.set(e.seat, (played.get(e.seat) || 0) + 1);
  const over = ["between_deals", "closed"].includes(v.phase);
  fill("seats", ...v.players.map((p, seat) => {
    let cards;
    const open = (v.open_cards || {})[String(seat)];
    if (seat === me) cards = myHand(v).map(c => cardEl(c, handClass(c)));
    else if (open) cards = open.map(c => cardEl(c));
    else if (!inDeal.includes(seat) || over) cards = [];
    else {
      const n = 10 - (played.get(seat) || 0) + (v.declarer === seat && events.some(e => name(e) === "skat_taken") &&
                !events.some(e => name(e) === "discarded") ? 2 : 0);
      cards = Array.from({ length: Math.max(0, n) }, backEl);
    }
    const tags = [];
    if (dealt && dealt.dealer === seat) tags.push(el("span", { class: "tag" }, "dealer"));
    if (!inDeal.includes(seat)) tags.push(el("span", { class: "tag" }, "sits out"));
    if (v.declarer === seat) tags.push(el("span", { class: "decl" }, "declarer"));
    return el("div", { class: "seat" + (v.to_move === seat && !over ? " to-move" : "") + (seat === me ? " me" : ""), "data-seat": seat },
      el("div", { class: "who" }, p + (seat === me ? " (you)" : ""), ...tags), el("div", { class: "cards", "data-hand": seat }, ...cards));
  }));
  // The skat: the declarer's own after the pickup; face down otherwise while the deal is on.
  const ownSkat = T.seat && T.seat.update.view.deal === v.deal ? (T.seat.update.view.skat || []) : [];
  const discarded = T.seat && T.seat.update.view.deal === v.deal ? (T.seat.update.view.discarded || []) : [];
  fill("skatlabel", discarded.length ? "you put away" : (ownSkat.length ? "the skat you took" : "skat"));
  fill("skat", ...(discarded.length ? discarded.map(c => cardEl(c)) : ownSkat.length ? ownSkat.map(c => cardEl(c))
       : (dealt && !events.some(e => name(e) === "skat_taken") && !over ? [backEl(), backEl()] : [])));
  // The trick on the table, with who played each card.
  let current = [];
  for (const e of events) {
    if (name(e) === "trick_taken" || name(e) === "deal_dealt") current = [];
    else if (name(e) === "card_played") current.push(e);
  }
  fill("trick", ...(current.length ? current.map(e => el("div", { class: "slot" }, cardEl(e.card), el("div", {}, v.players[e.seat])))
       : [el("div", { class: "empty" }, v.phase === "playing" ? "no card yet" : "no trick on the table")]));
  fill("declaration", v.game ? gameText(v.game) + " \u2014 " + v.players[v.declarer] + ", bid " + v.bid +
       (v.kontra ? ", Kontra" : "") + (v.re ? ", Re" : "") : (v.declarer != null ? v.players[v.declarer] + " won the bidding at " + v.bid : "not declared yet"));
  fill("bidding", ...events.map(e => biddingLine(e, v)).filter(x => x).map(t => el("li", {}, t)));
  const now = Date.now();
  fill("tricks", ...events.filter(e => name(e) === "trick_taken").map(e => {
    const key = v.deal + ":" + e.trick;
    if (!T.firstSeen.has(key)) T.firstSeen.set(key, now);
    return el("li", { "data-deal": v.deal, "data-trick": e.trick, "data-shown-at": T.firstSeen.get(key) },
      ...e.cards.map(c => cardEl(c)), " " + v.players[e.seat] + " takes " + e.points);
  }));
  renderSheet(spec, v);
  renderActions(v);
}

function biddingLine(e, v) {
  const p = v.players[e.seat];
  switch (name(e)) {
    case "bid": return p + " bids " + e.value;
    case "hold": return p + " holds " + e.value;
    case "pass": return p + " passes";
    case "bidding_won": return p + " wins the bidding at " + e.value;
    case "all_passed": return "everybody passed" + (e.ramsch ? ": Ramsch" : "");
    case "skat_taken": return p + " picks up the skat";
    case "discarded": return p + " puts two cards away";
    case "game_declared": return p + " declares " + gameText(e.game);
    case "kontra": return p + ": Kontra";
    case "re": return p + ": Re";
    case "cards_shown": return p + " shows the cards";
    case "resigned": return p + " resigns";
    case "timed_out": return p + " ran out of time";
    case "deal_ended": return "the deal ends (" + e.reason.replaceAll("_", " ") + ")";
  }
  return null;
}

function renderSheet(spec, v) {
  const rows = spec ? spec.sheet : [];
  const head = el("tr", {}, el("th", {}, "deal"), el("th", {}, "game"), ...v.players.map(p => el("th", { class: "num" }, p)));
  const body = rows.map(r => {
    const res = r.result;
    const what = res.kind === "game" ? v.players[res.declarer] + " " + gameText(res.game) + (res.won ? " won " : " lost ") + res.game_score
      : res.kind === "ramsch" ? "Ramsch" : "passed in";
    return el("tr", { "data-deal": r.deal }, el("td", {}, String(r.deal)), el("td", {}, what),
      ...r.totals.map(t => el("td", { class: "num" }, String(t))));
  });
  const sf = el("tr", {}, el("td", {}, ""), el("td", {}, "Seeger-Fabian"), ...(v.seeger_fabian || []).map(t => el("td", { class: "num" }, String(t))));
  fill("sheet", head, ...body, ...(rows.length ? [sf] : []));
}

// --- the seat's move -------------------------------------------------------------------------

function prompt() {
  if (!T.seat || T.pending) return null;
  const u = T.seat.update;
  return u.your_turn && u.index > Math.max(T.answered, T.seat.answered) ? u : null;
}

function handClass(c) {
  const u = prompt();
  if (!u) return "";
  const legal = u.view.legal || [];
  if (legal.some(a => a.type === "play" && a.card === c)) return "legal";
  if (legal.some(a => a.type === "discard")) return "legal" + (T.picked.includes(c) ? " picked" : "");
  return "";
}

function renderActions(v) {
  const box = document.getElementById("actions");
  const u = prompt();
  box.classList.toggle("hidden", !T.seat);
  if (!T.seat) return;
  document.body.dataset.yourTurn = u ? "1" : "0";
  document.body.dataset.prompt = u ? u.index : -1;
  if (!u) {
    fill("prompt", T.pending ? "sent; waiting for the table…" : (v.phase === "closed" ? "the table is closed" : "waiting for the others…"));
    fill("buttons");
    fill("countdown");
    return;
  }
  const legal = u.view.legal || [];
  const buttons = [];
  const bids = legal.filter(a => a.type === "bid").slice(0, 8);
  for (const a of legal) {
    if (a.type === "play" || a.type === "discard" || (a.type === "bid" && !bids.includes(a))) continue;
    buttons.push(actionButton(a, a.type === "pass" ? "" : "main"));
  }
  if (legal.some(a => a.type === "discard")) {
    const ok = T.picked.length === 2 && legal.some(a => a.type === "discard" && a.cards.every(c => T.picked.includes(c)));
    const b = el("button", { class: "main", id: "discard", "data-action": JSON.stringify({ type: "discard", cards: T.picked }) },
      "put away " + (T.picked.length ? T.picked.join(" ") : "(pick two cards)"));
    b.disabled = !ok;
    b.onclick = () => send({ type: "discard", cards: T.picked.slice() });
    buttons.push(b);
  }
  if (u.view.phase === "playing") {
    if (u.view.declarer === u.view.seat && !(u.view.open_cards || {})[String(u.view.seat)]) buttons.push(actionButton({ type: "show" }, ""));
    buttons.push(actionButton({ type: "resign" }, ""));
  }
  fill("prompt", legal.some(a => a.type === "play") ? "your turn: click a card" :
       legal.some(a => a.type === "discard") ? "pick two cards to put away" : "your turn");
  fill("buttons", ...buttons);
  for (const c of document.querySelectorAll('[data-hand="' + u.view.seat + '"] .card.legal')) c.onclick = () => clickCard(c.dataset.card);
  tickCountdown();
}

function actionButton(a, cls) {
  const b = el("button", { class: cls, "data-action": JSON.stringify(a) }, actionText(a));
  b.onclick = () => send(a);
  return b;
}

function clickCard(c) {
  const u = prompt();
  if (!u) return;
  const legal = u.view.legal || [];
  if (legal.some(a => a.type === "play" && a.card === c)) { send({ type: "play", card: c }); return; }
  if (legal.some(a => a.type === "discard")) {
    T.picked = T.picked.includes(c) ? T.picked.filter(x => x !== c) : T.picked.concat([c]).slice(-2);
    render();
  }
}

async function send(action) {
  const u = prompt();
  if (!u) return;
  T.pending = true;
  T.answered = u.index;
  T.picked = [];
  render();
  let reply;
  try {
    const r = await fetch("/play/" + encodeURIComponent(T.player) + "/" + encodeURIComponent(T.seat.table), {
      method: "POST", headers: { "Content-Type": "application/json", "X-Skat": "1" }, body: JSON.stringify(action),
      credentials: "same-origin",
    });
    reply = await r.json();
  } catch (err) {
    reply = { ok: false, reason: String(err) };
  }
  if (!reply.ok) { T.pending = false; T.answered = -1; }
  fill("reply", reply.ok ? "" : "refused: " + (reply.reason || reply.code));
  render();
}

function tickCountdown() {
  const u = prompt();
  const c = document.getElementById("countdown");
  if (!c) return;
  if (!u || !u.deadline) { c.textContent = ""; return; }
  const left = Math.max(0, u.deadline - Date.now() / 1000);
  c.textContent = left.toFixed(0) + " s left";
  c.classList.toggle("late", left < 5);
}

const PAGES = { lobby, tournament, table };
PAGES[document.body.dataset.page]();
