"""The rummy's actions and their record texts (RECORDS.md, "Actions"): ``take N``,
``meld C C C``, ``layoff M C``, ``swap M C``, ``claim C C C``, ``discard C``.

Actions are small frozen msgspec Structs in one tagged union, as Thirty-one's commands are, so
the wiring can send them as JSON or msgpack. Cards are held as tokens (``HQ``, ``HQ'``,
``X1=HQ``, ``X1=Q``); ``str(action)`` prints the record text and ``parse_action`` reads it back
(a round-trip: ``parse_action(str(a)) == a`` for every canonical action). The compulsory draw
(M11) is no action: the deal does it by itself.
"""

from __future__ import annotations

from typing import Final

import msgspec

from .cards import is_joker, parse_card, parse_token, token


class Action(msgspec.Struct, frozen=True, tag_field="type", kw_only=True):
    """Base of every action."""


class Take(Action, frozen=True, tag="take"):
    """Take the ``n``-th card of the row from the stock (1 = the oldest) and every card after
    it; the next action must use that card (M14, M27)."""

    n: int

    def __str__(self) -> str:
        return f"take {self.n}"


class Lay(Action, frozen=True, tag="meld"):
    """Lay a new meld from the hand (a run low end first, M39)."""

    cards: tuple[str, ...]

    def __str__(self) -> str:
        return "meld " + " ".join(self.cards)


class LayOff(Action, frozen=True, tag="layoff"):
    """Lay one card off onto meld ``meld`` (numbered from 1 in the order laid, M5)."""

    meld: int
    card: str

    def __str__(self) -> str:
        return f"layoff {self.meld} {self.card}"


class Swap(Action, frozen=True, tag="swap"):
    """Put the natural ``card`` in the place of meld ``meld``'s joker and take the joker; the
    next action must use it (M18, M27, M28)."""

    meld: int
    card: str

    def __str__(self) -> str:
        return f"swap {self.meld} {self.card}"


class Claim(Action, frozen=True, tag="claim"):
    """c, d: lay a new meld of one card from the hand and cards out of the row (M21)."""

    cards: tuple[str, ...]

    def __str__(self) -> str:
        return "claim " + " ".join(self.cards)


class Discard(Action, frozen=True, tag="discard"):
    """Discard a card to the end of the row; ends the turn (M13)."""

    card: str

    def __str__(self) -> str:
        return f"discard {self.card}"


AnyAction = Take | Lay | LayOff | Swap | Claim | Discard
ACTION_TYPES: Final[tuple[type[Action], ...]] = (Take, Lay, LayOff, Swap, Claim, Discard)

_HINT: Final = "take N, meld C C C, layoff M C, swap M C, claim C C C, discard C"


def _number(word: str, text: str) -> int:
    if not word.isdigit() or int(word) < 1:
        raise ValueError(f"not a number from 1: {word!r} in {text!r}")
    return int(word)


def _tok(word: str) -> str:
    card, stands = parse_token(word)
    return token(card, stands)


def parse_action(text: str) -> AnyAction:
    """The action ``text`` names, as ``str(action)`` prints it (case and extra spaces do not
    matter; ``X1=HQ'`` is read as ``X1=HQ``, M30). Raises ``ValueError`` with a hint. Whether
    it is legal is the deal's question."""
    words = text.split()
    if not words:
        raise ValueError(f"not an action: {text!r} (try {_HINT})")
    verb, args = words[0].lower(), words[1:]
    try:
        if verb == "take" and len(args) == 1:
            return Take(n=_number(args[0], text))
        if verb in ("meld", "claim") and args:
            cards = tuple(_tok(w) for w in args)
            return Lay(cards=cards) if verb == "meld" else Claim(cards=cards)
        if verb == "layoff" and len(args) == 2:
            return LayOff(meld=_number(args[0], text), card=_tok(args[1]))
        if verb == "swap" and len(args) == 2:
            card = parse_card(args[1])
            if is_joker(card):
                raise ValueError(f"a swap names the natural card put in the joker's place: {text!r}")
            return Swap(meld=_number(args[0], text), card=card)
        if verb == "discard" and len(args) == 1:
            return Discard(card=parse_card(args[0]))
    except ValueError as exc:
        raise ValueError(f"{exc} (in {text!r})") from None
    raise ValueError(f"not an action: {text!r} (try {_HINT})")


def parse_line(text: str) -> tuple[int, AnyAction]:
    """(seat, action) from a record's action line ``"<seat> <action>"``."""
    seat, _, rest = text.strip().partition(" ")
    if not seat.isdigit():
        raise ValueError(f"an action line starts with the seat number: {text!r}")
    return int(seat), parse_action(rest)


def format_line(seat: int, action: Action) -> str:
    return f"{seat} {action}"
