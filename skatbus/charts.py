"""Inline SVG charts, drawn by hand: a line chart and confidence-interval bars.

A report must open offline and stay readable for years, so it carries no charting library:
the few shapes it needs are computed here in page coordinates and written as SVG elements.
The markup has no namespace URL (inline SVG in HTML needs none) and every mark has a
``<title>``, so a reader can hover for the exact number.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape


@dataclass(frozen=True)
class Series:
    label: str
    colour: str
    values: Sequence[float]
    """One value per x = 0, 1, 2, ..."""


@dataclass(frozen=True)
class Marker:
    """A vertical line at ``x`` with a label (a table starting, in the running-score chart)."""

    x: float
    label: str
    href: str | None = None


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round values covering [lo, hi], about ``count`` of them (1, 2 or 5 times a power of 10)."""
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / max(count, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.floor(lo / step) * step
    ticks = []
    value = first
    while value <= hi + step * 1e-9:
        ticks.append(round(value, 10))
        value += step
    if ticks[-1] < hi:
        ticks.append(round(value, 10))
    return ticks


def _num(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


def line_chart(
    series: Sequence[Series],
    markers: Sequence[Marker] = (),
    width: int = 960,
    height: int = 340,
    x_label: str = "",
    y_label: str = "",
    chart_id: str = "chart",
) -> str:
    """Lines over a shared x axis, with a zero line, y gridlines, vertical markers and the
    last value of each line written at its end."""
    left, right, top, bottom = 78, 130, 24, 40
    n = max((len(s.values) for s in series), default=1)
    values = [v for s in series for v in s.values] or [0.0]
    ticks = nice_ticks(min(min(values), 0.0), max(max(values), 0.0))
    lo, hi = ticks[0], ticks[-1]
    plot_w, plot_h = width - left - right, height - top - bottom

    def px(x: float) -> float:
        return left + (plot_w * x / max(n - 1, 1))

    def py(y: float) -> float:
        return top + plot_h * (hi - y) / (hi - lo)

    parts = [
        f'<svg id="{escape(chart_id)}" class="chart" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{escape(y_label)} over {escape(x_label)}" preserveAspectRatio="xMidYMid meet">'
    ]
    for t in ticks:
        y = py(t)
        cls = "zero" if t == 0 else "grid"
        parts.append(f'<line class="{cls}" x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}"/>')
        parts.append(f'<text class="tick" x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{_num(t)}</text>')
    for m in markers:
        x = px(m.x)
        label = f'<text class="marker" x="{x + 3:.1f}" y="{top + 10}">{escape(m.label)}</text>'
        if m.href:
            label = f'<a href="{escape(m.href)}">{label}</a>'
        parts.append(f'<line class="marker" x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{top + plot_h}"/>{label}')
    ends: list[tuple[float, Series]] = []
    for s in series:
        if not s.values:
            continue
        points = " ".join(f"{px(i):.1f},{py(v):.1f}" for i, v in enumerate(s.values))
        parts.append(
            f'<polyline class="series" data-label="{escape(s.label)}" points="{points}" stroke="{s.colour}">'
            f"<title>{escape(s.label)}: {_num(s.values[-1])}</title></polyline>"
        )
        ends.append((py(s.values[-1]), s))
    # End labels, nudged apart so close finishers stay readable.
    placed: list[float] = []
    for y, s in sorted(ends, key=lambda e: e[0]):
        y = max(y, placed[-1] + 14) if placed else y
        placed.append(y)
        parts.append(
            f'<text class="endlabel" x="{left + plot_w + 6}" y="{y + 4:.1f}" fill="{s.colour}">'
            f"{escape(s.label)} {_num(s.values[-1])}</text>"
        )
    parts.append(
        f'<text class="axis" x="{left + plot_w / 2:.1f}" y="{height - 8}" text-anchor="middle">{escape(x_label)}</text>'
    )
    parts.append(
        f'<text class="axis" transform="translate(14 {top + plot_h / 2:.1f}) rotate(-90)" '
        f'text-anchor="middle">{escape(y_label)}</text>'
    )
    parts.append("</svg>")
    return "".join(parts)


@dataclass(frozen=True)
class Interval:
    mean: float
    half_width: float | None
    """None: not enough data for an interval (one deal)."""


def interval_scale(intervals: Sequence[Interval]) -> tuple[float, float]:
    """One range for every row's bar, zero included, so bars compare across rows."""
    lows = [i.mean - (i.half_width or 0.0) for i in intervals] + [0.0]
    highs = [i.mean + (i.half_width or 0.0) for i in intervals] + [0.0]
    lo, hi = min(lows), max(highs)
    pad = (hi - lo) * 0.05 or 1.0
    return lo - pad, hi + pad


def interval_bar(interval: Interval, scale: tuple[float, float], colour: str, width: int = 260) -> str:
    """One row of a forest plot: the interval as a bar, the mean as a dot, zero as a line."""
    lo, hi = scale
    height = 20

    def px(v: float) -> float:
        return 4 + (width - 8) * (v - lo) / (hi - lo)

    mid = height / 2
    parts = [f'<svg class="interval" viewBox="0 0 {width} {height}" width="{width}" height="{height}">']
    parts.append(f'<line class="zero" x1="{px(0):.1f}" x2="{px(0):.1f}" y1="1" y2="{height - 1}"/>')
    title = f"{_num(interval.mean)} per deal"
    if interval.half_width is not None:
        a, b = interval.mean - interval.half_width, interval.mean + interval.half_width
        title += f", 95 % interval {_num(a)} to {_num(b)}"
        parts.append(
            f'<rect class="ci" x="{px(a):.1f}" y="{mid - 4}" width="{max(px(b) - px(a), 1):.1f}" height="8" '
            f'fill="{colour}" rx="3"/>'
        )
    parts.append(f'<circle cx="{px(interval.mean):.1f}" cy="{mid}" r="4.5" fill="{colour}" stroke="#fff"/>')
    parts.append(f"<title>{escape(title)}</title></svg>")
    return "".join(parts)
