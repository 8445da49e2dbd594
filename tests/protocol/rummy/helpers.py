"""Build rummy deals in the middle of play for golden tests: hands, row and melds written as
in records (``"SJ SK"``, melds as ``meld`` actions write them), the rest of the pack as the
stock, so that every card is in exactly one place."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from protocol.rummy import Deal, Meld, RummyRules, lay_off, make_meld, parse_token


def cards(text: str) -> tuple[str, ...]:
    return tuple(text.split())


def meld(text: str, owner: int, rules: RummyRules, layoffs: Sequence[tuple[str, int]] = ()) -> Meld:
    """A meld laid by ``owner`` as ``meld <text>`` writes it, then ``layoffs`` (token, seat)."""
    m = make_meld([parse_token(t) for t in text.split()], rules, owner)
    for tok, by in layoffs:
        card, stands = parse_token(tok)
        m = lay_off(m, card, stands, rules, by)
    return m


def table(
    rules: RummyRules,
    hands: Mapping[int, str],
    row: str = "",
    melds: Sequence[Meld] = (),
    seat: int = 0,
    melded: Sequence[int] = (),
    stock: str | None = None,
    dealer: int | None = None,
    **changes: object,
) -> Deal:
    """A deal with seat ``seat`` to move (its draw made): the named cards where given, the rest
    of the pack in the stock in pack order (or ``stock`` exactly, the rest then dropped)."""
    n = rules.players
    hs = tuple(cards(hands.get(s, "")) for s in range(n))
    used = {c for h in hs for c in h} | set(cards(row)) | {p.card for m in melds for p in m.cards}
    rest = tuple(c for c in rules.pack if c not in used)
    state = Deal(
        rules=rules,
        dealer=(n - 1) if dealer is None else dealer,
        hands=hs,
        stock=rest if stock is None else cards(stock),
        row=cards(row),
        melds=tuple(melds),
        seat=seat,
        melded=tuple(s in melded for s in range(n)),
        turns=1,
    )
    return msgspec.structs.replace(state, **changes) if changes else state
