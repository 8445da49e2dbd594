"""The Thirty-one sections of the tournament report (``skat report``), drawn like the Skat ones.

``report_html`` draws the page and calls this for a run with Thirty-one tables: the standings
(wins and places instead of points), a running chart of the lives lost, the players' statistics
of the game (knocks, 31s, throw-downs, showdown hands, lives, eliminations) and the tables with
every deal, each linked to its replay page. Server-side HTML only, as the rest of the report.
"""

from __future__ import annotations

from html import escape
from typing import Any

from .charts import Interval, Marker, Series, interval_bar, interval_scale, line_chart
from .report_html import _link, _replay_href, _signed, _swatch
from .report_thirty_one import T31DealLine, T31Report, T31Stats, T31TableReport


def _num(v: float | None, digits: int = 2) -> str:
    """A count as itself, a fraction with ``digits`` decimals, nothing as a dash."""
    if v is None:
        return "-"
    return str(int(v)) if float(v).is_integer() else f"{v:.{digits}f}"


def _rate(part: int, whole: int) -> str:
    """``part/whole`` with a bar, as the Skat report's won/played cells."""
    if not whole:
        return "<span class='hint'>-</span>"
    rate = 100 * part / whole
    return f'<span class="rate" title="{rate:.0f} %"><span style="width:{rate:.0f}%"></span></span>{part}/{whole}'


def _places(places: dict[str, int]) -> str:
    """``{"1": 2, "3": 1}`` as ``1st ×2, 3rd``."""

    def nth(place: int) -> str:
        suffix = "th" if 10 <= place % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(place % 10, "th")
        return f"{place}{suffix}"

    ranked = sorted(places.items(), key=lambda kv: int(kv[0]))
    return ", ".join(nth(int(p)) + (f" ×{n}" if n > 1 else "") for p, n in ranked)


class T31Page:
    """The Thirty-one sections over one report's Thirty-one part and the page's colours."""

    def __init__(self, report: T31Report, colour: dict[str, str], time_outs: dict[str, int]) -> None:
        self.r = report
        self.colour = colour
        self.time_outs = time_outs

    def who(self, player: str) -> str:
        return _swatch(self.colour.get(player, "#999")) + escape(player)

    def rules_line(self, config: dict[str, Any]) -> str:
        """The header's words for the Thirty-one tables: how many, under which rules, and (a
        Thirty-one tournament's results.json) how they were scheduled."""
        rules = sorted({t.rules for t in self.r.tables if t.rules})
        n = len(self.r.tables)
        parts = [f"Thirty-one: {n} table{'s' if n != 1 else ''}" + (f", {' / '.join(rules)}" if rules else "")]
        if config.get("game") == "thirty-one":
            if "groups" in config:
                parts.append(f"{config['groups']} group{'s' if config['groups'] != 1 else ''}")
            if config.get("duplicate"):
                parts.append("duplicate (every seat rotation of the same cards)")
        return ", ".join(parts)

    def standings(self) -> str:
        rows = self.r.standings
        intervals = [Interval(float(s.get("per_table", 0.0)), s.get("ci95")) for s in rows]
        scale = interval_scale(intervals)
        head = (
            "<tr><th>#</th><th>player</th><th class='num'>place points</th><th class='num'>per table</th>"
            "<th>95 % interval of the mean per table</th><th class='num'>tables</th><th class='num'>wins</th>"
            "<th class='num'>mean place</th><th>places</th><th class='num'>mean coins</th>"
            "<th class='num'>deals</th><th class='num'>time-outs</th></tr>"
        )
        body = []
        for rank, (s, interval) in enumerate(zip(rows, intervals, strict=True), 1):
            player = str(s["player"])
            ci = "" if s.get("ci95") is None else f" ± {float(s['ci95']):.2f}"
            forfeit = ' <em title="withdrawn: ranked below every entrant that finished">(forfeit)</em>'
            body.append(
                f'<tr data-player="{escape(player)}"><td>{rank}</td>'
                f"<td>{self.who(player)}{forfeit if s.get('forfeit') else ''}</td>"
                f"<td class='num'>{s.get('place_points', 0)}</td>"
                f"<td class='num'>{float(s.get('per_table', 0.0)):.2f}{ci}</td>"
                f"<td>{interval_bar(interval, scale, self.colour.get(player, '#999'))}</td>"
                f"<td class='num'>{s.get('tables', 0)}</td><td class='num'>{s.get('wins', 0)}</td>"
                f"<td class='num'>{float(s.get('mean_place', 0.0)):.2f}</td><td>{_places(s.get('places') or {})}</td>"
                f"<td class='num'>{float(s.get('mean_coins', 0.0)):.2f}</td><td class='num'>{s.get('deals', 0)}</td>"
                f"<td class='num'>{self.time_outs.get(player, 0)}</td></tr>"
            )
        source = "as results.json records them" if self.r.standings_recorded else "computed from the tables' logs"
        return (
            '<section class="panel" id="t31-standings"><h2>Thirty-one standings</h2>'
            f'<p class="lead">{self._verdict()}</p>'
            f'<table class="won">{head}{"".join(body)}</table>'
            f"<p class='hint'>Ranked by {escape(self.r.scoring)} ({source}); then by wins and mean coins. A table's "
            "places: its last survivor first, then the others in the reverse order of their elimination (players "
            "knocked out by one deal share their place). The interval is the mean ± 1.96 standard errors over the "
            "tables.</p></section>"
        )

    def _verdict(self) -> str:
        """The first two places in words: do the tables tell them apart?"""
        rows = self.r.standings
        if len(rows) < 2:
            return "One player only." if rows else "No finished table."
        a, b = rows[0], rows[1]
        if a.get("ci95") is None or b.get("ci95") is None:
            return f"<strong>{escape(str(a['player']))}</strong> leads; too few tables for intervals."
        if float(a["per_table"]) - float(a["ci95"]) > float(b["per_table"]) + float(b["ci95"]):
            return (
                f"<strong>{escape(str(a['player']))}</strong> wins: its 95 % interval lies above "
                f"{escape(str(b['player']))}'s."
            )
        return (
            f"<strong>{escape(str(a['player']))}</strong> leads {escape(str(b['player']))}, but their 95 % "
            "intervals overlap: these tables do not separate them with confidence."
        )

    def running(self) -> str:
        series = [Series(p, self.colour.get(p, "#999"), self.r.running.get(p, [])) for p in self.r.players]
        markers = [Marker(x, t, _replay_href(self._table(t))) for x, t in self.r.starts]
        chart = line_chart(
            series, markers, x_label="deals played (tables in order)", y_label="lives lost", chart_id="t31-running"
        )
        return (
            '<section class="panel" id="t31-lives"><h2>Lives lost, running</h2>'
            f"{chart}<p class='hint'>The lives each player lost so far, after each Thirty-one deal; a dashed line "
            "is a table starting (its label opens the table's replay).</p></section>"
        )

    def _table(self, name: str) -> T31TableReport:
        return next(t for t in self.r.tables if t.table == name)

    def statistics(self) -> str:
        head = (
            "<tr><th>player</th><th class='num'>deals</th><th>knocks: the knocker lost</th><th class='num'>31s</th>"
            "<th>throw-downs: the thrower lost</th><th class='num'>hands shown</th>"
            "<th class='num'>mean hand shown</th><th class='num'>lives lost per deal</th>"
            "<th class='num'>eliminated</th></tr>"
        )
        body = "".join(self._stats_row(p, self.r.stats[p]) for p in self.r.players)
        return (
            '<section class="panel" id="t31-stats"><h2>Thirty-one: how they played</h2>'
            f'<table class="won">{head}{body}</table>'
            "<p class='hint'>Deals: the deals a player was dealt in. A knocker lost when the deal cost him a life "
            "(alone lowest at the showdown: two; a 31 after his knock: one); so did a thrower. Hands shown: at "
            "showdowns and throw-downs, where every hand is shown and valued; the mean is their value.</p>"
            "</section>"
        )

    def _stats_row(self, player: str, s: T31Stats) -> str:
        return (
            f'<tr data-player="{escape(player)}"><td>{self.who(player)}</td><td class="num">{s.deals}</td>'
            f"<td>{_rate(s.knocks_lost, s.knocks)}</td><td class='num'>{s.thirty_ones}</td>"
            f"<td>{_rate(s.throw_downs_lost, s.throw_downs)}</td><td class='num'>{s.showdowns}</td>"
            f"<td class='num'>{_num(s.mean_showdown, 1)}</td><td class='num'>{_num(s.lives_per_deal)}</td>"
            f"<td class='num'>{s.eliminated}</td></tr>"
        )

    def tables(self) -> str:
        blocks = []
        for t in self.r.tables:
            ranked = sorted(range(len(t.players)), key=lambda s: (t.places[s], s)) if t.places else []
            places = ", ".join(f"{t.places[s]} {self.who(t.players[s])} ({t.coins[s]} coins)" for s in ranked)
            state = "" if t.closed else " <em>(not closed: places so far)</em>"
            error = f'<div class="panel" id="error">{escape(t.error)}</div>' if t.error else ""
            head = "<tr><th>deal</th><th>dealer</th><th>end</th>" + "".join(
                f"<th class='num'>{escape(p)}</th>" for p in t.players
            )
            deals = "".join(self._deal_row(t, d) for d in t.deals)
            blocks.append(
                f'<div class="table-block" data-table="{escape(t.table)}">'
                f"<h3>{escape(t.table)} <span class='hint'>Thirty-one, {len(t.deals)} deals</span> "
                f"{_link('replay &#x25B6;', _replay_href(t))}</h3>"
                f"<div>places: {places}{state}</div>{error}"
                "<details><summary>every deal (coins after it; in red the lives it cost)</summary>"
                f'<table class="won">{head}<th class="num">kitty</th><th>eliminated</th></tr>{deals}</table>'
                "</details></div>"
            )
        return '<section class="panel" id="t31-tables"><h2>Thirty-one tables</h2>' + "".join(blocks) + "</section>"

    @staticmethod
    def _deal_row(t: T31TableReport, d: T31DealLine) -> str:
        cells = []
        for seat in range(len(t.players)):
            if seat not in d.seats:
                cells.append("<td class='num hint'>-</td>")
                continue
            lost = d.lives[seat] if seat < len(d.lives) else 0
            coins = d.coins[seat] if seat < len(d.coins) else 0
            mark = f"{_signed(-lost)} " if lost else ""
            cells.append(f"<td class='num' data-lives='{lost}'>{mark}{coins}</td>")
        return (
            f"<tr><td>{_link(str(d.deal), _replay_href(t, d.deal))}</td><td>{escape(d.dealer)}</td>"
            f"<td>{escape(d.end)}</td>{''.join(cells)}<td class='num'>{d.kitty}</td>"
            f"<td>{escape(', '.join(d.eliminated))}</td></tr>"
        )
