"""``skat web``: watch live tables and tournaments in a browser, and let a person take a seat.

A small server of ours stands between NATS and the page (``server``), so the page needs no
NATS client and no credentials, and what it receives is decided here, in Python, in one place:

- ``feed``: spectators. A watched table's log is folded here with the game its first event
  names, and the page is sent only that game's view for ``SPECTATOR`` (the same redaction as
  the public feed: no hand, no skat, ouvert and shown cards open; at Thirty-one no hand and no
  stock card, ``thirty_one``) and the score sheet. Tournaments: their standings, recomputed
  as deals are scored.
- ``seat``: a human player. A connection *as that player* (its own credentials under
  ``skat auth``), subscribed to its own view subject only, answering prompts with ``at`` and
  saying hello like any bot: the broker holds it to the same permissions as a remote bot.
- ``pages/``: the static pages, scripts and stylesheet (ours, no build step); the look is the
  HTML replay's (``skatbus.html_style``). A table's page draws Skat (``web.js``) or
  Thirty-one (``t31.js``), whichever game the messages name.
- ``play``: ``skat play`` (``play_options``: its command line), a table of one person and
  built-in bots of either game on a local stack.
"""
