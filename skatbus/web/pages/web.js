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
const SUIT_NAMES = { C: "clubs", S: "spades", H: "hearts", D: "diamonds" };
const RANK_NAMES = { A: "ace", K: "king", Q: "queen", J: "jack", T: "ten", 9: "nine", 8: "eight", 7: "seven" };
function cardName(code) { return (RANK_NAMES[code[1]] || code[1]) + " of " + SUIT_NAMES[code[0]]; }
function cardEl(code, extra) {
  // A card, named for a screen reader; one the seat may play now is a button, one it may not
  // is dimmed and says so.
  const red = code[0] === "H" || code[0] === "D";
  const rank = RANKS[code[1]] || code[1];
  const classes = (extra || "").split(" ");
  const label = cardName(code) + (classes.includes("legal") ? ", playable" : classes.includes("unplayable") ? ", not playable now" : "");
  const attrs = { class: "card" + (red ? " red" : "") + (extra ? " " + extra : ""), "data-card": code, title: label, "aria-label": label };
  if (classes.includes("legal")) Object.assign(attrs, { role: "button", tabindex: "0" });
  if (classes.includes("unplayable")) attrs["aria-disabled"] = "true";
  return el("div", attrs, el("span", { class: "r", "aria-hidden": "true" }, rank), el("span", { class: "s", "aria-hidden": "true" }, SUITS[code[0]]));
}
function backEl() { return el("div", { class: "card back" }); }
function fill(id, ...kids) { const e = document.getElementById(id); e.replaceChildren(...kids); return e; }
function name(e) { return e.type.split("/")[0]; }
function gameText(g) {
  if (!g) return "";
  // "Clubs hand schneider announced", "Grand ouvert hand" (ouvert announces schneider and
  // schwarz: not said again), "Null ouvert".
  const words = [GAMES[g.game] || g.game];
  if (g.ouvert) words.push("ouvert");
  if (g.hand) words.push("hand");
  if (!g.ouvert || g.game === "N") {
    if (g.schwarz) words.push("schwarz announced");
    else if (g.schneider) words.push("schneider announced");
  }
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
      ...(t.deals != null && !t.withheld ? [" \u2014 ", el("span", { class: "progress" }, (t.of ? t.deals + "/" + t.of : String(t.deals)) +
        " deal" + ((t.of || t.deals) === 1 ? "" : "s") + " played")] : []),
      ...(t.withheld ? [" ", el("span", { class: "hint reason" }, "(" + t.withheld + ")")] : [])))
      : [el("li", { class: "hint" }, "no open tables")]));
    // The runs still playing first, with their progress as it happens (deals scored, tables
    // finished); the finished ones apart, newest first, so an earlier run is never taken for
    // the one under way.
    const running = m.tournaments.filter(t => !t.done);
    const earlier = m.tournaments.filter(t => t.done).reverse();
    fill("tournaments", ...(running.length ? running.map(t => tournamentLine(t))
      : [el("li", { class: "hint" }, m.tournaments.length ? "none running now" : "no tournaments")]));
    document.getElementById("earlierbox").classList.toggle("hidden", !earlier.length);
    fill("earlier", ...earlier.map(t => tournamentLine(t)));
    document.getElementById("seatsbox").classList.toggle("hidden", !m.seats.length);
    fill("seats", ...m.seats.map(p => el("li", {}, el("a", { href: "/play/" + encodeURIComponent(p) }, "play as " + p),
      ...m.tables.filter(t => t.players.includes(p)).slice(0, 1).map(t => " (at " + t.table + ")"))));
  });
}

function tournamentLine(t) {
  const progress = t.done ? "finished: " + t.tables + " table" + (t.tables === 1 ? "" : "s")
    : "playing: " + (t.of ? t.deals + "/" + t.of + " deals" : t.deals + " deal" + (t.deals === 1 ? "" : "s")) + ", " +
      t.finished + "/" + t.tables + " tables finished";
  return el("li", { "data-tournament": t.id, "data-game": t.game || "skat", "data-done": t.done ? "1" : "0",
    "data-deals": t.deals, class: t.done ? "done" : "running" },
    el("a", { href: "/tournament/" + encodeURIComponent(t.id) }, t.id),
    " \u2014 ", ...(t.game && t.game !== "skat" ? [el("span", { class: "game" }, t.title), ": "] : []),
    t.entrants.join(", ") + (t.series ? " (" + t.series + " series)" : "") + " \u2014 ", el("span", { class: "progress" }, progress));
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

const T = {
  spec: null, seat: null, answered: -1, picked: [], pending: false, firstSeen: new Map(),
  form: null, dealEvents: new Map(), skats: new Map(),
};

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

// The order a Skat player sorts a hand in for the game being played: trumps first (the jacks
// clubs, spades, hearts, diamonds, then the trump suit A 10 K Q 9 8 7), then the other suits;
// at null every suit A K Q J 10 9 8 7. Before a game is declared (and at Ramsch): grand's order.
const SUIT_ORDER = "CSHD";
const TRUMP_RANKS = "ATKQ987";
const NULL_RANKS = "AKQJT987";
function cardKey(code, game) {
  const suit = SUIT_ORDER.indexOf(code[0]);
  if (game === "N") return suit * 10 + NULL_RANKS.indexOf(code[1]);
  if (code[1] === "J") return suit;
  if (code[0] === game) return 10 + TRUMP_RANKS.indexOf(code[1]);
  const others = SUIT_ORDER.replace(game && SUIT_ORDER.includes(game) ? game : "", "");
  return 20 + others.indexOf(code[0]) * 10 + TRUMP_RANKS.indexOf(code[1]);
}
const POSITIONS = ["forehand", "middlehand", "rearhand"];
const PHASE_TEXT = { skat: "pick up the skat or play hand", discard: "putting two cards away", declare: "declaring the game",
  doubling: "Kontra and Re", ended: "deal over", between_deals: "between deals" };
function sortCards(cards, game) { return cards.slice().sort((a, b) => cardKey(a, game) - cardKey(b, game)); }
function sortGame(v) {
  // The game the hand is sorted for: the declared one; while the declarer chooses, the one
  // chosen in the form; otherwise grand's order.
  if (v.game) return v.game.game;
  const u = prompt();
  if (u && T.form && T.form.game && T.form.prompt === u.index &&
      (T.form.hand || !(u.view.legal || []).some(a => a.type === "pickup"))) return T.form.game;
  return "G";
}

function dealEvents(v) { return (v && v.history) || []; }

function mySeat() {
  return T.seat ? T.seat.update.view.seat : -1;
}
function isMe(seat) { return seat != null && seat === mySeat(); }
function who(v, seat, start) {
  // A seat in a sentence: the person's own seat is "You" (so that "You bid 18" reads naturally).
  if (isMe(seat)) return start === false ? "you" : "You";
  return v.players[seat];
}
function says(seat, third, plain) { return isMe(seat) ? plain : third; }
function seatName(v, seat) {
  // The seat's label: the person's own is "You" (with their name, unless the name is "you").
  const p = v.players[seat];
  return isMe(seat) ? (p.toLowerCase() === "you" ? "You" : "You (" + p + ")") : p;
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
  document.getElementById("title").textContent = "Table " + v.table +
    (T.player ? (T.player.toLowerCase() === "you" ? " \u2014 your seat" : " \u2014 playing as " + T.player) : "");
  const closed = v.phase === "closed" || (spec && spec.closed);
  fill("where", "deal " + v.deal + (spec && spec.deals ? " of " + spec.deals : "") + " \u2014 " +
       (closed ? "table closed" : PHASE_TEXT[v.phase] || v.phase.replace("_", " ")));
  const events = dealEvents(v);
  if (v.deal) T.dealEvents.set(v.deal, events);
  const dealt = events.find(e => name(e) === "deal_dealt");
  const inDeal = dealt ? dealt.seats : v.players.map((_, i) => i);
  const me = mySeat();
  const played = new Map();
  for (const e of events) if (name(e) === "card_played") played.set(e.seat, (played.get(e.seat) || 0) + 1);
  const over = ["between_deals", "closed"].includes(v.phase);
  const game = sortGame(v);
  document.body.dataset.sortedFor = game;
  // Putting two cards away: every card may go, so none is marked until it is picked.
  const discarding = !!prompt() && (prompt().view.legal || []).some(a => a.type === "discard");
  // The seat to move: the person's own while its prompt is up (the table's view may lag behind it).
  const toMove = prompt() ? me : v.to_move;
  fill("seats", ...v.players.map((p, seat) => {
    let cards;
    let note = "";
    const open = (v.open_cards || {})[String(seat)];
    if (seat === me) cards = sortCards(myHand(v), game).map(c => cardEl(c, handClass(c)));
    else if (open) cards = sortCards(open, game).map(c => cardEl(c));
    else if (!inDeal.includes(seat) || !dealt) cards = [];
    else {
      // Face down: how many cards the seat still holds. A deal that ended early leaves them
      // unplayed; nobody was shown them, so they stay face down (the replay opens every card).
      const n = 10 - (played.get(seat) || 0) + (v.declarer === seat && events.some(e => name(e) === "skat_taken") &&
                !events.some(e => name(e) === "discarded") ? 2 : 0);
      cards = Array.from({ length: Math.max(0, n) }, backEl);
      if (over && n > 0) note = n + " card" + (n === 1 ? "" : "s") + " not played";
    }
    const tags = [];
    // Forehand leads the first trick and is bid to first: a club player wants to see it.
    const position = dealt ? dealt.seats.indexOf(seat) : -1;
    if (position >= 0) tags.push(el("span", { class: "tag position" }, POSITIONS[position]));
    if (dealt && dealt.dealer === seat) tags.push(el("span", { class: "tag" }, "dealer"));
    if (!inDeal.includes(seat)) tags.push(el("span", { class: "tag" }, "sits out"));
    if (v.declarer === seat) tags.push(el("span", { class: "decl" }, "declarer"));
    if (note) tags.push(el("span", { class: "hint unplayed" }, note));
    return el("div", { class: "seat" + ((prompt() ? seat === me : toMove === seat && !over) ? " to-move" : "") + (seat === me ? " me" : ""), "data-seat": seat },
      el("div", { class: "who" }, seatName(v, seat), ...tags),
      el("div", { class: "cards" + (seat === me && discarding ? " discarding" : ""), "data-hand": seat }, ...cards));
  }));
  // The skat: the declarer's own after the pickup; face down otherwise while the deal is on.
  const ownSkat = T.seat && T.seat.update.view.deal === v.deal ? (T.seat.update.view.skat || []) : [];
  const discarded = T.seat && T.seat.update.view.deal === v.deal ? (T.seat.update.view.discarded || []) : [];
  if (ownSkat.length) T.skats.set(v.deal, { skat: ownSkat, discarded });
  fill("skatlabel", discarded.length ? "you put away" : (ownSkat.length ? "the skat you took" : "skat"));
  fill("skat", ...(discarded.length ? discarded.map(c => cardEl(c)) : ownSkat.length ? ownSkat.map(c => cardEl(c))
       : (dealt && !events.some(e => name(e) === "skat_taken") && !over ? [backEl(), backEl()] : [])));
  // The trick on the table, with who played each card; between tricks (a new one to be led)
  // and once the deal is over, the last trick, with who played what and who took it.
  const { current, taken } = tricksOf(events);
  const last = taken.length ? taken[taken.length - 1] : null;
  if (current.length) {
    fill("trick", ...current.map(e => el("div", { class: "slot" }, cardEl(e.card), el("div", {}, seatName(v, e.seat)))));
  } else if (last) {
    fill("trick", el("div", { class: "lasttrick" }, el("div", { class: "hint" }, "last trick (" + last.taken.trick + "), taken by " +
      who(v, last.taken.seat, false) + " (" + last.taken.points + " points)" + (over ? "" : "; " + who(v, v.to_move, false) + " to lead")),
      el("div", { class: "cards" }, ...last.plays.map(e => el("div", { class: "slot" }, cardEl(e.card), el("div", {}, seatName(v, e.seat)))))));
  } else {
    fill("trick", el("div", { class: "empty" }, v.phase === "playing" ? who(v, v.to_move) + " " + says(v.to_move, "leads", "lead") +
      " the first trick" : "no trick on the table"));
  }
  fill("declaration", v.game ? gameText(v.game) + ", declared by " + who(v, v.declarer, false) + " (bid " + v.bid + ")" +
       (v.kontra ? ", Kontra" : "") + (v.re ? ", Re" : "") : (v.declarer != null ? who(v, v.declarer) + " won the bidding at " + v.bid
       : events.some(e => name(e) === "all_passed") ? "nobody plays: everybody passed" : "not declared yet"));
  // A long bidding (18, 20, 22, ... 48 held each time) in columns: the page stays one screen high.
  const bidding = events.map(e => biddingLine(e, v)).filter(x => x);
  const list = fill("bidding", ...bidding.map(t => el("li", {}, t)));
  list.classList.toggle("long", bidding.length > 10);
  list.classList.toggle("longer", bidding.length > 24);
  const now = Date.now();
  fill("tricks", ...taken.map(({ taken: e, plays }) => {
    const key = v.deal + ":" + e.trick;
    if (!T.firstSeen.has(key)) T.firstSeen.set(key, now);
    // Who led and who took it; each card's player in its title (the cards are in play order).
    const lead = plays.length ? who(v, plays[0].seat) + " led, " : "";
    return el("li", { "data-deal": v.deal, "data-trick": e.trick, "data-shown-at": T.firstSeen.get(key) },
      ...e.cards.map((c, i) => { const card = cardEl(c); if (plays[i]) card.title = who(v, plays[i].seat) + ": " + cardName(c); return card; }),
      " " + lead + who(v, e.seat, !lead) + " " + says(e.seat, "takes", "take") + " " + e.points);
  }));
  renderSheet(spec, v);
  renderResult(spec, v, closed);
  renderActions(v);
}

function tricksOf(events) {
  // The deal's tricks: each taken one with the plays that made it (seat and card, in play
  // order), and the cards of the trick under way.
  let current = [];
  const taken = [];
  for (const e of events) {
    if (name(e) === "trick_taken") { taken.push({ taken: e, plays: current }); current = []; }
    else if (name(e) === "deal_dealt") current = [];
    else if (name(e) === "card_played") current.push(e);
  }
  return { current, taken };
}

const ENDED = {
  played_out: "all ten tricks were played",
  passed_in: "everybody passed",
  declarer_took_trick: "the null declarer took a trick",
  defenders_took_trick: "schwarz was announced and the defenders took a trick",
  defenders_resigned: "the defenders gave up",
  declarer_resigned: "the declarer gave up",
};

function biddingLine(e, v) {
  const p = who(v, e.seat);
  const s = (third, plain) => says(e.seat, third, plain);
  switch (name(e)) {
    case "bid": return p + " " + s("bids", "bid") + " " + e.value;
    case "hold": return p + " " + s("holds", "hold") + " " + e.value;
    case "pass": return p + " " + s("passes", "pass");
    case "bidding_won": return p + " " + s("wins", "win") + " the bidding at " + e.value;
    case "all_passed": return "Everybody passed" + (e.ramsch ? ": Ramsch" : "");
    case "skat_taken": return p + " " + s("picks", "pick") + " up the skat";
    case "discarded": {
      // The seat's own put-away cards: from its own view (the public one shows them to nobody).
      const own = isMe(e.seat) && T.seat && T.seat.update.view.deal === v.deal ? T.seat.update.view.discarded || [] : [];
      return p + " " + s("puts", "put") + " two cards away" + (own.length ? ": " + own.map(faceText).join(" ") : "");
    }
    case "game_declared": return p + " " + s("declares", "declare") + " " + gameText(e.game);
    case "kontra": return p + " " + s("says", "say") + " Kontra";
    case "re": return p + " " + s("says", "say") + " Re";
    case "cards_shown": return p + " " + s("shows", "show") + " " + (isMe(e.seat) ? "your" : "the") + " cards";
    case "resigned": return p + " " + s("gives", "give") + " up";
    case "timed_out": return p + " ran out of time";
    case "deal_ended": return e.reason === "passed_in" ? null : "The deal ends: " + (ENDED[e.reason] || e.reason.replaceAll("_", " "));
  }
  return null;
}

function renderSheet(spec, v) {
  const rows = spec ? spec.sheet : [];
  const head = el("tr", {}, el("th", {}, "deal"), el("th", {}, "game"), ...v.players.map((p, seat) => el("th", { class: "num" }, isMe(seat) ? "You" : p)));
  const body = rows.map(r => {
    const res = fullResult(r.result);
    const what = res.kind === "game" ? who(v, res.declarer) + ": " + gameText(res.game) + (res.won ? ", won " : ", lost ") + signedText(res.game_score)
      : res.kind === "ramsch" ? "Ramsch" : "passed in";
    return el("tr", { "data-deal": r.deal }, el("td", {}, String(r.deal)), el("td", {}, what),
      ...r.totals.map(t => el("td", { class: "num" }, minusText(t))));
  });
  const sf = el("tr", { class: "sf" }, el("td", {}, ""), el("td", {}, "Seeger-Fabian points"),
    ...(v.seeger_fabian || []).map(t => el("td", { class: "num" }, minusText(t))));
  fill("sheet", head, ...body, ...(rows.length ? [sf] : []));
}

// --- the end of a deal: its card points and its value, explained ------------------------------

const minusText = x => (x < 0 ? "\u2212" : "") + Math.abs(x);
const signedText = x => (x > 0 ? "+" : x < 0 ? "\u2212" : "") + Math.abs(x);

function seatsText(v, seats) {
  const names = seats.map(s => who(v, s, false));
  return names.length > 1 ? names.slice(0, -1).join(", ") + " and " + names[names.length - 1] : names.join("");
}

function valueParts(r) {
  // The multiplier's steps (RULES: matadors, game, hand, schneider, schwarz, their
  // announcements, ouvert), as scoring counted them; ouvert is what is left of the multiplier.
  const g = r.game;
  const m = Math.abs(r.matadors);
  const parts = [[(r.matadors > 0 ? "with " : "without ") + m + " matador" + (m === 1 ? "" : "s"), m], ["game", 1]];
  if (g.hand) parts.push(["hand", 1]);
  if (r.schneider || g.schneider) parts.push(["schneider", 1]);
  if (g.schneider) parts.push(["schneider announced", 1]);
  if (r.schwarz || g.schwarz) parts.push(["schwarz", 1]);
  if (g.schwarz) parts.push(["schwarz announced", 1]);
  const rest = r.multiplier - parts.reduce((n, p) => n + p[1], 0);
  if (rest > 0) parts.push(["ouvert", rest]);
  return parts;
}

const RESULT_DEFAULTS = {
  bock: false, bid: 0, matadors: 0, multiplier: 0, base: 0, value: 0, overbid: false, won: false, declarer_points: 0,
  declarer_tricks: 0, schneider: false, schwarz: false, kontra: false, re: false, game_score: 0,
};
function fullResult(r) {
  // A scored result as sent leaves its default fields out (0, false): put them back.
  return Object.assign({}, RESULT_DEFAULTS, r);
}

function resultLines(row, v) {
  // What the deal's scored result (the public score sheet) says, in a player's words.
  const r = fullResult(row.result);
  const lines = [];
  if (r.kind === "passed") return ["Everybody passed: the deal is not played and scores nothing."];
  const events = T.dealEvents.get(row.deal) || [];
  const tricks = events.filter(e => name(e) === "trick_taken");
  if (r.kind === "ramsch") {
    const ram = r.ramsch;
    const seats = v.players.map((_, s) => s).filter(s => ram.points[s] != null && (ram.points[s] > 0 || r.scores[s] !== 0 ||
      tricks.some(t => t.seat === s) || (events.find(e => name(e) === "deal_dealt") || { seats: [0, 1, 2] }).seats.includes(s)));
    lines.push("Ramsch, card points: " + seats.map(s => who(v, s) + " " + ram.points[s]).join(", ") + " (the skat goes to the last trick).");
    if (ram.durchmarsch != null) lines.push(who(v, ram.durchmarsch) + " took every trick (Durchmarsch): +120.");
    else {
      const top = Math.max(...ram.losers.map(s => ram.points[s]));
      lines.push(seatsText(v, ram.losers) + " took the most points and " + (ram.losers.length === 1 && !isMe(ram.losers[0]) ? "loses " : "lose ") +
        top + (ram.jungfrau ? " \u00d7 " + (2 ** ram.jungfrau) + " (" + ram.jungfrau + " player" + (ram.jungfrau === 1 ? "" : "s") +
        " without a trick)" : "") + (r.bock ? " \u00d7 2 (Bock)" : "") + ".");
    }
    return lines;
  }
  const d = r.declarer;
  const g = r.game;
  const defenders = v.players.map((_, s) => s).filter(s => s !== d && r.scores[s] !== undefined &&
    (events.length ? (events.find(e => name(e) === "deal_dealt") || { seats: [] }).seats.includes(s) : true));
  const byTricks = tricks.length ? tricks.filter(t => t.seat !== d).reduce((n, t) => n + t.points, 0) : null;
  const theirs = byTricks == null || r.ended === "played_out" ? 120 - r.declarer_points : byTricks;
  const declarerWords = who(v, d) + (isMe(d) ? " (declarer)" : " (declarer)");
  lines.push("Card points: " + declarerWords + " " + r.declarer_points + " in " + r.declarer_tricks + " trick" +
    (r.declarer_tricks === 1 ? "" : "s") + " with the skat, " + seatsText(v, defenders) + " " + theirs +
    (g.game === "N" ? " (at null only the tricks count)." : "."));
  const score = r.scores[d];
  const lostValue = r.overbid ? Math.ceil(r.bid / r.base) * r.base : r.value;
  const factor = r.won || !lostValue ? 1 : Math.round(-r.game_score / lostValue);
  let value;
  if (g.game === "N") value = gameText(g) + " is worth " + r.value + ".";
  else {
    value = "Value: " + GAMES[g.game] + " " + r.base + " \u00d7 " + r.multiplier + " (" +
      valueParts(r).map(([w, n]) => w.startsWith("with") ? w : w + " " + n).join(", ") + ") = " + r.value + ".";
  }
  lines.push(value);
  const needed = g.schneider ? 90 : 61;
  let why;
  if (r.won) {
    why = "Won: " + (g.game === "N" ? who(v, d) + " took no trick" : r.ended === "defenders_resigned" ? "the defenders gave up"
      : r.declarer_points + " card points" + (g.schwarz ? " and every trick" : "") + " (" + needed + " needed)") + ": " + signedText(r.game_score) + ".";
  } else if (r.overbid) {
    why = "Overbid: the game is worth " + r.value + ", less than the bid of " + r.bid + ". It is lost at the least multiple of " +
      r.base + " that reaches the bid, " + lostValue + (factor > 1 ? ", counted " + (factor === 2 ? "twice" : factor + " times") : "") + ": " + signedText(r.game_score) + ".";
  } else {
    const reason = r.ended === "declarer_resigned" ? who(v, d) + " gave up"
      : g.game === "N" ? who(v, d) + " took a trick"
      : r.ended === "defenders_took_trick" ? "schwarz was announced and the defenders took a trick"
      : g.schwarz && r.declarer_tricks < 10 ? "schwarz was announced and the defenders took a trick"
      : g.schneider && r.declarer_points >= 61 ? "schneider was announced, but " + r.declarer_points + " card points are fewer than 90"
      : r.declarer_points + " card points are fewer than 61" + (r.schneider ? ", and 30 or fewer: schneider" : "");
    why = "Lost: " + reason + (factor > 1 ? "; a lost game counts " + (factor === 2 ? "twice" : factor + " times") + " its value" : "") +
      ": " + signedText(r.game_score) + ".";
  }
  lines.push(why);
  const doubled = [r.kontra ? "Kontra" : "", r.re ? "Re" : "", r.bock ? "Bock" : ""].filter(x => x);
  lines.push("Score: " + who(v, d) + " " + signedText(score) + (doubled.length ? " (" + signedText(r.game_score) + " \u00d7 " +
    (2 ** doubled.length) + " for " + doubled.join(", ") + ")" : "") + "." + (r.seeger_fabian && r.seeger_fabian.length
      ? " Seeger-Fabian points: " + v.players.map((_, s) => s).filter(s => r.seeger_fabian[s] != null)
        .map(s => who(v, s) + " " + signedText(r.seeger_fabian[s])).join(", ") + " (" + (r.won ? "+50 for a won game"
        : "\u221250 for a lost game, +" + (defenders.length > 2 || v.players.length === 4 ? 30 : 40) + " to each defender") + ")."
      : ""));
  return lines;
}

function renderResult(spec, v, closed) {
  // The newest scored deal stays on show (the next deal may be dealt at once), marked as the
  // deal just ended while the table waits between deals or is closed.
  const box = document.getElementById("resultbox");
  const rows = spec ? spec.sheet || [] : [];
  const row = rows.length ? rows[rows.length - 1] : null;
  box.classList.toggle("hidden", !row);
  if (!row) return;
  const r = fullResult(row.result);
  const head = r.kind === "game" ? who(v, r.declarer) + " played " + gameText(r.game) + " and " + (r.won ? "won" : "lost") +
      " (" + signedText(r.game_score) + ")"
    : r.kind === "ramsch" ? "Ramsch" : "everybody passed";
  // Just over: between deals, at the closed table, and through the next deal's bidding (the
  // dealer deals the next one at once), until its first card is played.
  const started = dealEvents(v).some(e => name(e) === "card_played");
  const fresh = row.deal === v.deal ? v.phase === "between_deals" || closed : row.deal === v.deal - 1 && !started;
  box.dataset.deal = row.deal;
  box.classList.toggle("fresh", fresh);
  fill("resulttitle", "Deal " + row.deal + (fresh ? " is over \u2014 " : " \u2014 ") + head);
  fill("result", ...resultLines(row, v).map(t => el("p", {}, t)), ...dealCards(row, v),
    ...(closed ? [el("p", { class: "final" }, finalText(v, rows))] : []),
    ...(closed && spec && spec.view ? [el("p", {}, el("a", { href: "/replay/" + encodeURIComponent(v.table), class: "replay" },
      "replay the table (every card open)"))] : []));
}

function dealCards(row, v) {
  // The deal's last trick (who played what), and the skat where this page was shown it: the
  // person's own, as declarer (the services show the skat to nobody else).
  const out = [];
  const { taken } = tricksOf(T.dealEvents.get(row.deal) || []);
  const last = taken[taken.length - 1];
  if (last) {
    out.push(el("p", { class: "dealcards" }, "Last trick (" + last.taken.trick + "): ", ...last.plays.map((e, i) =>
      el("span", { class: "played" }, who(v, e.seat, i === 0) + " ", cardEl(e.card)))," \u2014 taken by " + who(v, last.taken.seat, false) + "."));
  }
  const own = T.skats.get(row.deal);
  if (own && own.skat.length) {
    out.push(el("p", { class: "dealcards" }, "The skat was ", ...own.skat.map(c => cardEl(c)),
      ...(own.discarded.length ? ["; you put away ", ...own.discarded.map(c => cardEl(c))] : []), "."));
  }
  return out;
}

function finalText(v, rows) {
  // The table's end: every seat's Seeger-Fabian total, best first (the game points after them).
  const last = rows[rows.length - 1];
  const order = v.players.map((_, s) => s).sort((a, b) => (v.seeger_fabian[b] || 0) - (v.seeger_fabian[a] || 0));
  return "The table is closed after " + rows.length + " deal" + (rows.length === 1 ? "" : "s") + ". Final Seeger-Fabian totals: " +
    order.map((s, i) => (i + 1) + ". " + seatName(v, s) + " " + signedText(v.seeger_fabian[s] || 0) +
      (last ? " (game points " + signedText(last.totals[s]) + ")" : "")).join(", ") + ".";
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
  if (legal.some(a => a.type === "play")) return legal.some(a => a.type === "play" && a.card === c) ? "legal" : "unplayable";
  if (legal.some(a => a.type === "discard")) return "legal" + (T.picked.includes(c) ? " picked" : "");
  return "";
}

function formFor(u) {
  // The declaration form's choices, kept across redraws of the same prompt.
  if (!T.form || T.form.prompt !== u.index) {
    const hand = myHand(null);
    const count = s => hand.filter(c => c[0] === s && c[1] !== "J").length + hand.filter(c => c[1] === "J").length / 10;
    const games = [...new Set((u.view.legal || []).filter(a => a.type === "declare").map(a => a.game))];
    // The longest suit, preferring one whose least value reaches the bid (not an overbid).
    const before = (u.view.legal || []).some(a => a.type === "pickup");
    const reaches = g => worth({ game: g, hand: before }, u.view).value >= (u.view.bid || 0) ? 1 : 0;
    const suits = games.filter(g => SUIT_ORDER.includes(g)).sort((a, b) => reaches(b) - reaches(a) || count(b) - count(a));
    T.form = { prompt: u.index, hand: false, game: suits[0] || games[0] || "G", announce: "none" };
  }
  return T.form;
}

function announceKey(a) { return a.ouvert ? "ouvert" : a.schwarz ? "schwarz" : a.schneider ? "schneider" : "none"; }
const ANNOUNCE = {
  none: () => "no announcement",
  schneider: () => "schneider announced",
  schwarz: () => "schwarz announced (and schneider)",
  ouvert: g => g === "N" ? "ouvert (your cards open)" : "ouvert (cards open; schneider and schwarz announced)",
};

const GAME_ORDER = ["G", "C", "S", "H", "D", "N"];
const BASE = { D: 9, H: 10, S: 11, C: 12, G: 24 };
const JACKS = ["CJ", "SJ", "HJ", "DJ"];
function worth(g, view) {
  // What the declaration in the form is worth at least, from the cards this seat knows (its
  // hand and, after the pickup, what it put away; in a hand game the skat counts too, unseen):
  // the matadors, game, hand, the announcements, ouvert, times the base value; null's fixed values.
  if (g.game === "N") {
    const value = g.ouvert ? (g.hand ? 59 : 46) : g.hand ? 35 : 23;
    return { value, text: gameText(g) + " is worth " + value };
  }
  const cards = new Set([...(view.hand || []), ...(view.discarded || [])]);
  const order = JACKS.concat(g.game === "G" ? [] : TRUMP_RANKS.split("").map(r => g.game + r));
  const have = cards.has(order[0]);
  let n = 0;
  while (n < order.length && cards.has(order[n]) === have) n++;
  const steps = [(have ? "with " : "without ") + n + " matador" + (n === 1 ? "" : "s"), "game 1"];
  if (g.hand) steps.push("hand 1");
  if (g.schneider || g.schwarz || g.ouvert) steps.push("schneider 1", "schneider announced 1");
  if (g.schwarz || g.ouvert) steps.push("schwarz 1", "schwarz announced 1");
  if (g.ouvert) steps.push("ouvert 1");
  const m = n + steps.length - 1;
  const value = BASE[g.game] * m;
  return { value, text: gameText(g) + " is worth at least " + BASE[g.game] + " \u00d7 " + m + " (" + steps.join(", ") + ") = " + value +
    (g.hand ? " (the skat's jacks may change the matadors)" : "") };
}

function declareForm(u, before) {
  // One small form, not a button per combination: the game, hand or not, the announcements
  // the rules allow; what it submits is exactly one of the prompt's legal commands.
  const legal = u.view.legal || [];
  const declares = legal.filter(a => a.type === "declare");
  const f = formFor(u);
  const hand = before ? f.hand : false;
  const games = GAME_ORDER.filter(g => declares.some(a => a.game === g));
  if (!games.includes(f.game)) f.game = games[0];
  const options = declares.filter(a => a.game === f.game);
  if (!options.some(a => announceKey(a) === f.announce)) f.announce = announceKey(options[0] || { });
  const chosen = options.find(a => announceKey(a) === f.announce);
  const parts = [];
  if (before) {
    const box = el("input", { type: "checkbox", id: "handgame" });
    box.checked = hand;
    box.onchange = () => { f.hand = box.checked; render(); };
    parts.push(el("label", { class: "formrow" }, box, " Hand game: play without picking up the skat"));
  }
  if (!before || hand) {
    const select = el("select", { id: "gamechoice", "aria-label": "game" },
      ...games.map(g => { const o = el("option", { value: g }, GAMES[g] + (SUITS[g] ? " " + SUITS[g] : "")); if (g === f.game) o.selected = true; return o; }));
    select.onchange = () => { f.game = select.value; render(); };
    parts.push(el("label", { class: "formrow" }, "Game: ", select));
    const keys = [...new Set(options.map(announceKey))];
    if (keys.length > 1) {
      parts.push(el("div", { class: "formrow", role: "radiogroup", "aria-label": "announcements" }, "Announce: ", ...keys.map(k => {
        const r = el("input", { type: "radio", name: "announce", value: k, id: "announce-" + k });
        r.checked = k === f.announce;
        r.onchange = () => { f.announce = k; render(); };
        return el("label", { class: "choice" }, r, " " + ANNOUNCE[k](f.game));
      })));
    }
  } else {
    parts.push(el("div", { class: "hint formrow" }, "You choose the game after picking up the skat."));
  }
  if ((!before || hand) && chosen) {
    const w = worth(Object.assign({ hand: before }, chosen), u.view);
    if (w) parts.push(el("div", { class: "formrow worth" + (w.value < u.view.bid ? " short" : ""), id: "worth" }, w.text +
      (w.value < u.view.bid ? ": less than your bid of " + u.view.bid +
      (chosen.game === "N" ? " (overbid: choose another game)" : " (overbid, unless you make schneider or schwarz)") : "")));
  }
  const action = before && !hand ? { type: "pickup" } : chosen;
  const label = action.type === "pickup" ? "Pick up the skat" : "Declare " + gameText(Object.assign({ hand: before }, action));
  const submit = actionButton(action, "main", label);
  submit.id = "declare";
  return [el("div", { class: "declareform" }, ...parts, el("div", { class: "buttons" }, submit))];
}

function biddingControls(u, v) {
  // The next bid on a button of its own, every higher legal bid in a list, and pass.
  const legal = u.view.legal || [];
  const bids = legal.filter(a => a.type === "bid");
  const out = [actionButton(bids[0], "main", "bid " + bids[0].value)];
  if (bids.length > 1) {
    const f = T.form && T.form.prompt === u.index ? T.form : (T.form = { prompt: u.index, bid: bids[1].value });
    if (!bids.some(b => b.value === f.bid)) f.bid = bids[1].value;
    const select = el("select", { id: "bidvalue", "aria-label": "bid value" },
      ...bids.slice(1).map(b => { const o = el("option", { value: b.value }, String(b.value)); if (b.value === f.bid) o.selected = true; return o; }));
    const jump = actionButton({ type: "bid", value: f.bid }, "", "bid " + f.bid);
    jump.id = "bidchosen";
    select.onchange = () => { f.bid = Number(select.value); render(); };
    out.push(el("span", { class: "or" }, "or"), select, jump);
  }
  out.push(actionButton({ type: "pass" }, "", "pass"));
  return out;
}

function lastBidder(u) {
  const bid = (u.view.history || []).filter(e => name(e) === "bid").pop();
  return bid ? bid.seat : null;
}

function renderActions(v) {
  const box = document.getElementById("actions");
  const u = prompt();
  box.classList.toggle("hidden", !T.seat);
  if (!T.seat) return;
  document.body.dataset.yourTurn = u ? "1" : "0";
  document.body.dataset.prompt = u ? u.index : -1;
  const heading = box.querySelector("h2").firstChild;
  heading.textContent = u ? "Your move " : v.phase === "closed" ? "The table " : "Waiting ";
  if (!u) {
    const waiting = v.to_move != null && !isMe(v.to_move) && v.players[v.to_move] ? v.players[v.to_move] + " is to move\u2026"
      : "waiting for the others\u2026";
    fill("prompt", T.pending ? "sent; waiting for the table\u2026" : (v.phase === "closed" ? "This table is over: the final totals are in the last deal's panel and the score sheet." : waiting));
    fill("buttons");
    fill("countdown");
    return;
  }
  const legal = u.view.legal || [];
  const types = new Set(legal.map(a => a.type));
  const uv = u.view;
  let text = "your turn";
  let buttons = [];
  if (types.has("hold")) {
    const from = lastBidder(u);
    text = (from != null ? uv.players[from] + " bids " : "The bid is ") + uv.bid + ": hold it, or pass?";
    buttons = [actionButton({ type: "hold" }, "main", "hold " + uv.bid), actionButton({ type: "pass" }, "", "pass")];
  } else if (types.has("bid")) {
    // Who passed before you, by name; forehand after two passes decides alone whether anyone plays.
    const passed = (uv.history || []).filter(e => name(e) === "pass" && e.seat !== uv.seat).map(e => uv.players[e.seat]);
    const ramsch = uv.rules && uv.rules.ramsch;
    text = uv.bid ? "The bid stands at " + uv.bid + ": bid higher, or pass."
      : passed.length >= 2 ? passed.join(" and ") + " passed: bid and play, or pass (" + (ramsch ? "then Ramsch" : "then nobody plays this deal") + ")."
      : passed.length ? passed[0] + " passed; nobody has bid yet: open with a bid, or pass."
      : "Nobody has bid yet: open with a bid, or pass.";
    buttons = biddingControls(u, v);
  } else if (types.has("pickup") || types.has("declare")) {
    text = types.has("pickup") ? "You won the bidding at " + uv.bid + ": pick up the skat, or play a hand game."
      : "Declare your game (the bid is " + uv.bid + ").";
    buttons = declareForm(u, types.has("pickup"));
  } else if (types.has("discard")) {
    text = "Pick two cards to put away (click them).";
    const ok = T.picked.length === 2 && legal.some(a => a.type === "discard" && a.cards.every(c => T.picked.includes(c)));
    const b = el("button", { class: "main", id: "discard", "data-action": JSON.stringify({ type: "discard", cards: T.picked }) },
      "put away " + (T.picked.length ? T.picked.map(faceText).join(" ") : "(pick two cards)"));
    b.disabled = !ok;
    b.onclick = () => send({ type: "discard", cards: T.picked.slice() });
    buttons = [b];
  } else if (types.has("kontra") || types.has("re")) {
    const word = types.has("kontra") ? "Kontra" : "Re";
    text = types.has("kontra") ? uv.players[uv.declarer] + " plays " + gameText(uv.game) + ": say Kontra?" : "Kontra was said: say Re?";
    buttons = legal.map(a => actionButton(a, a.type === "pass" ? "" : "main", a.type === "pass" ? "no " + word : word));
  } else if (types.has("play")) {
    const playable = legal.filter(a => a.type === "play").length;
    text = "Your turn: play one of the highlighted cards" + (playable < myHand(v).length ? " (you must follow suit)." : ".");
    if (uv.declarer === uv.seat && !(uv.open_cards || {})[String(uv.seat)]) buttons.push(actionButton({ type: "show" }, "", "lay my cards open (claim the rest)"));
    buttons.push(actionButton({ type: "resign" }, "", "give up"));
  } else {
    buttons = legal.map(a => actionButton(a, a.type === "pass" ? "" : "main"));
  }
  fill("prompt", text);
  fill("buttons", ...buttons);
  for (const c of document.querySelectorAll('[data-hand="' + u.view.seat + '"] .card.legal')) {
    c.onclick = () => clickCard(c.dataset.card);
    c.onkeydown = e => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); clickCard(c.dataset.card); } };
  }
  tickCountdown();
}

function faceText(code) { return (RANKS[code[1]] || code[1]) + SUITS[code[0]]; }

function actionButton(a, cls, label) {
  const b = el("button", { class: cls, "data-action": JSON.stringify(a) }, label || actionText(a));
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
