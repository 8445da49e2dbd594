"""The tournament report as one self-contained HTML page (``skat report``).

Everything is drawn on the server side: the tables as HTML, the charts as inline SVG
(``charts``), the look from ``html_style`` (the replay page's frame). The page runs no script,
so it reads the same in any browser, printed, or in a mail client; its only links are the
relative ones to the tables' replay pages beside it.

A run with Thirty-one tables gets their sections too (``report_thirty_one_html``), laid out as
the Skat ones: standings, a running chart, the players' statistics, the tables; the time-outs
are one section for every game. A run of Skat tables only is drawn exactly as before.
"""

from __future__ import annotations

from html import escape
from typing import Any

from .charts import Interval, Marker, Series, interval_bar, interval_scale, line_chart
from .html_style import BASE_CSS, PLAYER_COLOURS, style
from .report import CATEGORIES, Report, TableReport, Tally
from .report_thirty_one import T31TableReport

DISAGREEMENTS_SHOWN = 8
"""Fields of results.json that disagree with the archive listed before the rest are counted."""

REPORT_CSS = """
  main.report { max-width: 1180px; margin: 0 auto; padding: 1em; }
  header .sub { font-size: .9em; opacity: .8; }
  a { color: #1565c0; }
  .swatch { display: inline-block; width: .8em; height: .8em; border-radius: 2px; margin-right: .4em; vertical-align: -1px; }
  .lead { margin: .3em 0 .6em; }
  svg.chart { width: 100%; height: auto; display: block; font-size: 12px; }
  svg.chart polyline.series { fill: none; stroke-width: 2.2; stroke-linejoin: round; }
  svg.chart line.grid { stroke: #eceff1; }
  svg.chart line.zero, svg.interval line.zero { stroke: #90a4ae; stroke-width: 1.2; }
  svg.chart line.marker { stroke: #b0bec5; stroke-dasharray: 4 3; }
  svg.chart text { fill: var(--muted); }
  svg.chart text.endlabel { font-weight: 600; }
  svg.interval { vertical-align: middle; }
  svg.interval rect.ci { opacity: .35; }
  .rate { display: inline-block; width: 46px; height: 7px; background: #eceff1; border-radius: 4px; margin-right: .4em; overflow: hidden; vertical-align: 1px; }
  .rate span { display: block; height: 100%; background: var(--felt); }
  .pts { color: var(--muted); font-size: .85em; margin-left: .3em; }
  .badge { display: inline-block; font-size: .75em; padding: 0 .4em; border-radius: 3px; margin-right: .25em; background: #fff3e0; color: #e65100; border: 1px solid #ffcc80; }
  .badge.bock { background: #ede7f6; color: #4527a0; border-color: #b39ddb; }
  .neg { color: var(--red); }
  details { margin: .3em 0; }
  details summary { cursor: pointer; color: var(--muted); }
  .ok { color: var(--felt); }
  footer { color: var(--muted); font-size: .8em; text-align: center; padding: 0 1em 1.5em; }
"""
"""What only the report needs on top of the shared frame."""


def _signed(v: float, digits: int = 0) -> str:
    text = f"{v:+.{digits}f}"
    return f'<span class="neg">{text}</span>' if v < 0 else text


def _swatch(colour: str) -> str:
    return f'<span class="swatch" style="background:{colour}"></span>'


def _rules_line(config: dict[str, Any]) -> str:
    rules = config.get("rules") or {}
    parts = [
        {"isko": "ISkO"}.get(str(rules.get("profile", "")), str(rules.get("profile", "")) or "rules ?"),
        f"{rules.get('players', 3)} players",
        f"{rules.get('rounds', '?')} rounds per table",
    ]
    parts += [name for key, name in (("kontra", "Kontra/Re"), ("bock", "Bock"), ("ramsch", "Ramsch")) if rules.get(key)]
    parts.append("ranked by Seeger-Fabian" if rules.get("seeger_fabian", True) else "ranked by the list")
    if "groups" in config:
        parts.append(f"{config['groups']} group{'s' if config['groups'] != 1 else ''}")
    if config.get("duplicate"):
        parts.append("duplicate (every seat rotation of the same cards)")
    return ", ".join(parts)


def _replay_href(table: TableReport | T31TableReport, deal: int | None = None, step: int = 0) -> str | None:
    if table.replay is None:
        return None
    return table.replay + (f"#deal={deal}&step={step}" if deal is not None else "")


def _link(text: str, href: str | None) -> str:
    return f'<a href="{escape(href)}">{text}</a>' if href else text


class _Page:
    """The report's sections, each a method, over one report and its player colours."""

    def __init__(self, report: Report) -> None:
        self.r = report
        t31 = report.thirty_one
        self.everyone = report.players + [p for p in (t31.players if t31 else []) if p not in report.players]
        """Every player of the run: the Skat tables' first (their colours do not depend on
        whether the run has other games), then those who played only Thirty-one."""
        self.colour = {p: PLAYER_COLOURS[i % len(PLAYER_COLOURS)] for i, p in enumerate(self.everyone)}
        self.all_tables: list[TableReport | T31TableReport] = [*report.tables, *(t31.tables if t31 else [])]

    def who(self, player: str) -> str:
        return _swatch(self.colour.get(player, "#999")) + escape(player)

    def standings(self) -> str:
        rows = self.r.standings
        intervals = [Interval(float(s["per_deal"]), s.get("ci95")) for s in rows]
        scale = interval_scale(intervals)
        head = (
            "<tr><th>#</th><th>player</th><th class='num'>Seeger-Fabian</th><th class='num'>per deal</th>"
            "<th>95 % interval of the mean per deal</th><th class='num'>deals</th><th class='num'>list</th>"
            "<th class='num'>declared</th><th class='num'>won</th><th class='num'>time-outs</th></tr>"
        )
        body = []
        for rank, (s, interval) in enumerate(zip(rows, intervals), 1):
            player = str(s["player"])
            ci = "" if s.get("ci95") is None else f" ± {float(s['ci95']):.1f}"
            forfeit = ' <em title="withdrawn: ranked below every entrant that finished">(forfeit)</em>'
            body.append(
                f'<tr data-player="{escape(player)}"><td>{rank}</td>'
                f"<td>{self.who(player)}{forfeit if s.get('forfeit') else ''}</td>"
                f"<td class='num'>{_signed(s['seeger_fabian'])}</td>"
                f"<td class='num'>{_signed(float(s['per_deal']), 1)}{ci}</td>"
                f"<td>{interval_bar(interval, scale, self.colour.get(player, '#999'))}</td>"
                f"<td class='num'>{s['deals']}</td><td class='num'>{_signed(s.get('list_points', 0))}</td>"
                f"<td class='num'>{s.get('declared', '')}</td><td class='num'>{s.get('won', '')}</td>"
                f"<td class='num'>{self.r.time_outs.get(player, 0)}</td></tr>"
            )
        return (
            '<section class="panel" id="standings"><h2>Standings</h2>'
            f'<p class="lead">{self._verdict()}</p>'
            f'<table class="won">{head}{"".join(body)}</table>'
            '<p class="hint">The interval is the mean ± 1.96 standard errors over the deals a player took part in; '
            "the line in each bar is zero.</p></section>"
        )

    def _verdict(self) -> str:
        """The first two places in words: do the deals tell them apart?"""
        rows = self.r.standings
        if len(rows) < 2:
            return "One player only."
        a, b = rows[0], rows[1]
        if a.get("ci95") is None or b.get("ci95") is None:
            return f"{escape(a['player'])} leads; too few deals for intervals."
        if float(a["per_deal"]) - float(a["ci95"]) > float(b["per_deal"]) + float(b["ci95"]):
            return (
                f"<strong>{escape(a['player'])}</strong> wins: its 95 % interval lies above "
                f"{escape(b['player'])}'s, so the lead is more than the luck of these deals."
            )
        return (
            f"<strong>{escape(a['player'])}</strong> leads {escape(b['player'])}, but their 95 % intervals overlap: "
            "these deals do not separate them with confidence (a longer run would)."
        )

    def running(self) -> str:
        series = [Series(p, self.colour[p], self.r.running.get(p, [])) for p in self.r.players]
        markers = [
            Marker(x, t.removeprefix(self.r.tournament + "-"), _replay_href(self._table(t))) for x, t in self.r.starts
        ]
        chart = line_chart(
            series, markers, x_label="deals played (tables in order)", y_label="Seeger-Fabian", chart_id="running"
        )
        return (
            '<section class="panel" id="running-score"><h2>Running score</h2>'
            f"{chart}<p class='hint'>Seeger-Fabian points after each deal; a dashed line is a table starting "
            "(its label opens the table's replay).</p></section>"
        )

    def _table(self, name: str) -> TableReport:
        return next(t for t in self.r.tables if t.table == name)

    def games(self) -> str:
        used = [c for c in CATEGORIES if any(c in g for g in self.r.by_game.values())]
        head = "<tr><th>player</th>" + "".join(f"<th>{c}</th>" for c in used) + "</tr>"
        body = []
        for p in self.r.players:
            cells = []
            for c in used:
                t = self.r.by_game.get(p, {}).get(c)
                cells.append(f"<td>{self._tally(t)}</td>" if t else "<td class='hint'>-</td>")
            body.append(f"<tr>{'<td>' + self.who(p) + '</td>'}{''.join(cells)}</tr>")
        return (
            '<section class="panel" id="games"><h2>Results by game type</h2>'
            f'<table class="won">{head}{"".join(body)}</table>'
            "<p class='hint'>won/played and the list points they brought; the games a player declared, "
            "the Ramsch deals it sat through (won: not a loser) and the games it defended (won: the declarer lost).</p>"
            "</section>"
        )

    @staticmethod
    def _tally(t: Tally) -> str:
        rate = 100 * t.won / t.played if t.played else 0
        return (
            f'<span class="rate" title="{rate:.0f} % won"><span style="width:{rate:.0f}%"></span></span>'
            f"{t.won}/{t.played}<span class='pts'>{_signed(t.points)}</span>"
        )

    def disagreements(self) -> str:
        """results.json edited (or wrong): said first, field by field; the page shows the archive's."""
        found = self.r.disagreements
        if not found:
            return ""
        shown = found[:DISAGREEMENTS_SHOWN] + (
            [f"... and {len(found) - DISAGREEMENTS_SHOWN} more"] if len(found) > DISAGREEMENTS_SHOWN else []
        )
        items = "".join(f"<li>{escape(w)}</li>" for w in shown)
        return (
            '<section class="panel" id="disagrees"><h2>results.json disagrees with the archive</h2>'
            f"<p>The archive is the record of what was played: this page shows what it says.</p><ul>{items}</ul></section>"
        )

    def warnings(self) -> str:
        if not self.r.warnings:
            return ""
        items = "".join(f"<li>{escape(w)}</li>" for w in self.r.warnings)
        return f'<section class="panel" id="error"><h2>Warnings</h2><ul>{items}</ul></section>'

    def think_times(self) -> str:
        """Each player's think times per move (seconds), from the archive's stored times."""
        rows = {p: t for p, t in self.r.think_times.items() if t.get("moves") or t.get("unmeasured")}
        if not any(t.get("moves") for t in rows.values()):
            return ""  # an archive without stored times: nothing to show

        def sec(v: Any) -> str:
            return f"{v:.3f}" if isinstance(v, (int, float)) else "&ndash;"

        body = "".join(
            f"<tr><td>{self.who(p)}</td><td class='num'>{t.get('moves', 0)}</td><td class='num'>{sec(t.get('median'))}</td>"
            f"<td class='num'>{sec(t.get('p95'))}</td><td class='num'>{sec(t.get('longest'))}</td>"
            f"<td class='num'>{t.get('unmeasured', 0)}</td><td class='num'>{t.get('budget_out', 0)}</td></tr>"
            for p, t in rows.items()
        )
        control = (self.r.config.get("rules") or {}).get("time_control")
        clock = (
            f" under a time control of {control.get('budget', 0):g}+{control.get('increment', 0):g}"
            if isinstance(control, dict)
            else ""
        )
        return (
            '<section class="panel" id="think-times"><h2>Think times</h2>'
            f"<p>Seconds per move{escape(clock)}, from the time the move was stored back to the event that "
            "gave the player the turn. Unmeasured: moves the log cannot time (no stored time, or made after "
            "the services were away). Budget out: time-outs where the budget ran out.</p>"
            "<table><tr><th>player</th><th class='num'>moves</th><th class='num'>median</th>"
            "<th class='num'>p95</th><th class='num'>longest</th><th class='num'>unmeasured</th>"
            f"<th class='num'>budget out</th></tr>{body}</table></section>"
        )

    def time_outs(self) -> str:
        source = "as results.json records them" if self.r.time_outs_recorded else "counted in the tables' logs"
        total = sum(self.r.time_outs.values())
        seconds = (self.r.config.get("rules") or {}).get("turn_seconds")
        refused = (
            f"<p>Commands the services refused: {', '.join(f'{escape(p)} {n}' for p, n in self.r.refused.items())}.</p>"
            if self.r.refused
            else ""
        )
        if total == 0:
            limit = f" within its {seconds:g} s" if isinstance(seconds, (int, float)) else " in time"
            return (
                '<section class="panel" id="time-outs"><h2>Time-outs</h2>'
                f'<p class="ok">None: every player acted{limit} ({source}).</p>{refused}</section>'
            )
        answered = bool(self.r.answered)
        head = "<tr><th>player</th><th class='num'>time-outs</th>" + (
            "<th class='num'>turns answered</th><th class='num'>timed out</th></tr>" if answered else "</tr>"
        )
        rows = []
        for p in self.everyone:
            n = self.r.time_outs.get(p, 0)
            extra = ""
            if answered:
                turns = n + self.r.answered.get(p, 0)
                extra = f"<td class='num'>{self.r.answered.get(p, 0)}</td><td class='num'>{100 * n / max(turns, 1):.1f} %</td>"
            rows.append(f"<tr><td>{self.who(p)}</td><td class='num'>{n}</td>{extra}</tr>")
        where = "".join(
            f"<li>{_link(f'{escape(o.table)} deal {o.deal}', _replay_href(t, o.deal, o.step))}: {escape(o.player)}</li>"
            for t in self.all_tables
            for o in t.time_outs
        )
        limit = f" (turn time {seconds:g} s)" if isinstance(seconds, (int, float)) else ""
        return (
            '<section class="panel" id="time-outs"><h2>Time-outs</h2>'
            f'<p class="lead">{total} time-out{"s" if total != 1 else ""}{limit}, {source}; each was followed by '
            "the default action.</p>"
            f'<table class="won">{head}{"".join(rows)}</table>{refused}'
            + (
                f"<details><summary>where (opens the replay at the time-out)</summary><ul>{where}</ul></details>"
                if where
                else ""
            )
            + "</section>"
        )

    def tables(self) -> str:
        blocks = []
        for t in self.r.tables:
            seats = ", ".join(
                f"{self.who(p)} {_signed(sf)}" for p, sf in zip(t.players, t.seeger_fabian or [0] * len(t.players))
            )
            error = f'<div class="panel" id="error">{escape(t.error)}</div>' if t.error else ""
            deals = "".join(self._deal_row(t, d) for d in t.deals)
            head = "<tr><th>deal</th><th>declarer</th><th>game</th><th>result</th><th></th>" + "".join(
                f"<th class='num'>{escape(p)}</th>" for p in t.players
            )
            blocks.append(
                f'<div class="table-block" data-table="{escape(t.table)}">'
                f"<h3>{escape(t.table)} <span class='hint'>{len(t.deals)} deals</span> "
                f"{_link('replay &#x25B6;', _replay_href(t))}</h3>"
                f"<div>{seats}</div>{error}"
                f'<details><summary>every deal</summary><table class="won">{head}</tr>{deals}</table></details></div>'
            )
        return '<section class="panel" id="tables"><h2>Tables</h2>' + "".join(blocks) + "</section>"

    def _deal_row(self, t: TableReport, d: Any) -> str:
        badges = "".join(f'<span class="badge {w.lower()}">{w}</span>' for w in d.doubled.split())
        scores = "".join(f"<td class='num'>{_signed(v)}</td>" for v in d.scores)
        return (
            f"<tr><td>{_link(str(d.deal), _replay_href(t, d.deal))}</td><td>{escape(d.declarer)}</td>"
            f"<td>{escape(d.game)}</td><td>{escape(d.outcome)}</td><td>{badges}</td>{scores}</tr>"
        )


def render_report(report: Report) -> str:
    page = _Page(report)
    t31 = None
    if report.thirty_one is not None:  # imported here: its sections draw with this module's helpers
        from .report_thirty_one_html import T31Page

        t31 = T31Page(report.thirty_one, page.colour, report.time_outs)
    skat = bool(report.tables) or t31 is None
    bots = ", ".join(f"{escape(p)}: {escape(str(b))}" for p, b in (report.config.get("bots") or {}).items())
    subtitle = [_rules_line(report.config)] if skat else []
    source = "the archive (results.json disagrees)" if report.disagreements else "results.json"
    if t31 is not None:
        subtitle.append(t31.rules_line(report.config))
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(f'skat report: {report.tournament}')}</title>\n"
        f"{style(BASE_CSS, REPORT_CSS)}\n</head>\n<body>\n"
        f"<header><h1>Tournament {escape(report.tournament)}</h1>"
        f'<span class="sub">{escape("; ".join(subtitle))}</span></header>\n'
        '<main class="report">\n'
        + page.disagreements()
        + page.warnings()
        + (page.standings() + page.running() + page.games() if skat else "")
        + (t31.standings() + t31.running() + t31.statistics() if t31 is not None else "")
        + page.time_outs()
        + page.think_times()
        + (page.tables() if skat else "")
        + (t31.tables() if t31 is not None else "")
        + "\n</main>\n"
        + f"<footer>{_footer(report, skat)}{'; bots ' + bots if bots else ''}. "
        + (
            f"Standings from {source}; everything else re-derived by folding each table's log "
            if t31 is None
            else (f"Skat standings from {source}; " if skat else "")
            + "Thirty-one standings from the places its tables' logs fold to; everything else re-derived by "
            "folding each table's log "
        )
        + "(<code>skat replay --verify</code>).</footer>\n</body>\n</html>\n"
    )


def _footer(report: Report, skat: bool) -> str:
    if report.thirty_one is None:
        return f"{len(report.tables)} tables"
    t31 = len(report.thirty_one.tables)
    games = f"{len(report.tables)} Skat, {t31} Thirty-one" if skat else f"{t31} Thirty-one"
    return f"{len(report.tables) + t31} tables ({games})"
