"""The look of skatbus's HTML pages, in one place.

The replay page (``replay_html``) and the tournament report (``report_html``) are read side
by side and link into each other, so they share one frame: colours, the dark header bar, the
white panels and the tables in them. Each page inlines the stylesheet (the pages must open
offline, years later), so "shared" means built from the same strings here, not a file both
load at run time.
"""

from __future__ import annotations

BASE_CSS = """
  :root { --felt: #1f6b45; --felt-dark: #17553a; --ink: #1b1b1b; --red: #c62828; --muted: #546e7a; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 15px/1.35 system-ui, -apple-system, "Segoe UI", sans-serif; background: #eef1ee; color: var(--ink); }
  header { display: flex; flex-wrap: wrap; gap: .6em; align-items: center; padding: .6em 1em; background: #263238; color: #fff; }
  header h1 { font-size: 1.1em; margin: 0 1em 0 0; }
  header button { font: inherit; padding: .25em .8em; border-radius: 4px; border: 1px solid #90a4ae; background: #37474f; color: #fff; cursor: pointer; }
  header button:disabled { opacity: .4; cursor: default; }
  .panel { background: #fff; border-radius: 10px; padding: .7em .9em; margin-bottom: 1em; box-shadow: 0 1px 3px rgba(0,0,0,.12); }
  .panel h2 { font-size: .95em; margin: 0 0 .4em; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
  ol, ul { margin: 0; padding-left: 1.3em; }
  table.won { border-collapse: collapse; width: 100%; }
  table.won td, table.won th { text-align: left; padding: .15em .4em; border-bottom: 1px solid #eceff1; }
  table.won td.num, table.won th.num { text-align: right; font-variant-numeric: tabular-nums; }
  #error, #disagrees { background: #ffebee; color: #b71c1c; border: 1px solid #ef9a9a; }
  .hidden { display: none; }
  .hint { font-size: .8em; opacity: .75; }
"""
"""The frame every page shares."""

TABLE_CSS = """
  #where { font-variant-numeric: tabular-nums; min-width: 12em; }
  main { display: grid; grid-template-columns: minmax(420px, 1.25fr) minmax(280px, 1fr); gap: 1em; padding: 1em; }
  .felt { background: radial-gradient(circle at 50% 40%, var(--felt), var(--felt-dark)); border-radius: 12px; padding: .8em; color: #fff; }
  .seat { padding: .4em .5em; margin-bottom: .4em; border-radius: 8px; border: 2px solid transparent; }
  .seat.to-move { border-color: #ffd54f; }
  .seat .who { font-weight: 600; margin-bottom: .25em; }
  .seat .who .tag { font-weight: 400; font-size: .85em; opacity: .85; margin-left: .5em; }
  .seat .who .decl { background: #ffd54f; color: #000; border-radius: 3px; padding: 0 .35em; font-size: .8em; margin-left: .4em; }
  .cards { display: flex; flex-wrap: wrap; gap: 4px; min-height: 64px; }
  .card { width: 44px; height: 62px; border-radius: 6px; background: #fff; color: #111; border: 1px solid #999;
          box-shadow: 0 1px 2px rgba(0,0,0,.35); display: flex; flex-direction: column; align-items: center;
          justify-content: center; font-weight: 700; position: relative; }
  .card .r { font-size: 17px; }
  .card .s { font-size: 20px; line-height: 1; }
  .card.red { color: var(--red); }
  .card.win { outline: 3px solid #ffd54f; }
  .trickarea { display: flex; gap: 1.2em; align-items: flex-end; justify-content: center; min-height: 110px;
               margin: .6em 0; padding: .5em; border-radius: 8px; background: rgba(0,0,0,.15); }
  .trickarea .slot { text-align: center; font-size: .85em; }
  .trickarea .empty { opacity: .7; align-self: center; }
  #event { font-size: 1.05em; font-weight: 600; }
  #bidding li, #score li { margin: .1em 0; }
"""
"""The card table of the replay page: the felt, the seats, the cards."""

PLAYER_COLOURS = ("#1e88e5", "#e53935", "#43a047", "#8e24aa", "#fb8c00", "#00897b", "#6d4c41", "#3949ab")
"""One colour per player, the same in every chart of a page (colour-blind safe enough for
the three or four lines a tournament has; the legend names them too)."""


def style(*parts: str) -> str:
    """A ``<style>`` element of the given parts."""
    return "<style>" + "".join(parts) + "</style>"
