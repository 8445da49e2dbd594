"""Bidding and declaring: bids, holds and passes, the skat, the declaration, Kontra and Re.

It also answers commands nobody can read, so that exactly one service replies to them."""

from __future__ import annotations

from .runtime import Service


class Bidding(Service):
    name = "bidding"
    triggers = ("deal_scored", "deal_dealt", "table_paused", "table_resumed")
    skips_deals = True
    """What others write that bidding must act on: a new deal (its deadline; the dealer sends
    its first prompt). Every other event of a bidding phase is bidding's own. The score before
    it lets bidding jump over the deal's play while the dealer deals, instead of reading the
    score back when the new deal comes, with the new deal's first bid on its way."""
    prompts = True
    answers_malformed = True
    enforces_turns = True
    """Its commands and the turns it enforces are the ones each game gives the bidding role
    (``protocol.game``): Skat's bids, holds, passes, the skat, the declaration, Kontra and Re."""
