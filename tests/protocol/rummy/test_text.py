"""Action texts as RECORDS.md writes them: parse, format, round-trip, and the codecs."""

from __future__ import annotations

import msgspec
import pytest

from protocol.rummy import (
    AnyAction,
    Claim,
    Discard,
    Lay,
    LayOff,
    Swap,
    Take,
    format_line,
    parse_action,
    parse_card,
    parse_line,
    parse_token,
    token,
)

TEXTS = [
    ("take 1", Take(n=1)),
    ("take 12", Take(n=12)),
    ("meld SK SA S2", Lay(cards=("SK", "SA", "S2"))),
    ("meld S9 ST X1=SJ", Lay(cards=("S9", "ST", "X1=SJ"))),
    ("meld H8 S8 X1=8", Lay(cards=("H8", "S8", "X1=8"))),
    ("meld HT' HJ HQ", Lay(cards=("HT'", "HJ", "HQ"))),
    ("layoff 2 X1=H5", LayOff(meld=2, card="X1=H5")),
    ("layoff 1 CK", LayOff(meld=1, card="CK")),
    ("swap 1 D6", Swap(meld=1, card="D6")),
    ("claim C6 S6 H6", Claim(cards=("C6", "S6", "H6"))),
    ("claim H7 H8 X2=H9", Claim(cards=("H7", "H8", "X2=H9"))),
    ("discard S7", Discard(card="S7")),
    ("discard X3", Discard(card="X3")),
    ("discard HA'", Discard(card="HA'")),
]


@pytest.mark.parametrize(("text", "action"), TEXTS)
def test_parse_and_format_round_trip(text: str, action: AnyAction) -> None:
    assert parse_action(text) == action
    assert str(action) == text
    assert parse_action(str(action)) == action
    for codec in (msgspec.json, msgspec.msgpack):
        assert codec.decode(codec.encode(action), type=AnyAction) == action


def test_spelling_is_forgiving_but_canonical() -> None:
    assert str(parse_action("  MELD  sk sa  s2 ")) == "meld SK SA S2"
    assert str(parse_action("layoff 3 x1=hq'")) == "layoff 3 X1=HQ"  # M30: a joker names a card, not a copy
    assert str(parse_action("Discard ha'")) == "discard HA'"


@pytest.mark.parametrize(
    "bad",
    ["", "pass", "take", "take 0", "take x", "take 1 2", "meld", "layoff 1", "layoff x CK", "swap 1 X1",
     "swap 1 X1=H5", "discard X1=H5", "discard H1", "meld HA X1=X2", "meld HA=H5", "claim", "discard HA''"],
)  # fmt: skip
def test_bad_texts_are_one_clear_error(bad: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_action(bad)
    assert "\n" not in str(info.value)


def test_lines_and_tokens() -> None:
    assert parse_line("0 take 3") == (0, Take(n=3))
    assert parse_line("2 meld X1=Q SQ HQ") == (2, Lay(cards=("X1=Q", "SQ", "HQ")))
    assert format_line(1, Discard(card="C9")) == "1 discard C9"
    with pytest.raises(ValueError, match="seat"):
        parse_line("take 3")
    assert parse_card("x4") == "X4" and parse_token("X2=q") == ("X2", "Q") and token("X1", "HQ") == "X1=HQ"
