"""A page's mailbox keeps only the newest state of a kind, except the states it must not skip."""

from __future__ import annotations

from skatbus.web.feed import MAX_KEPT, Mailbox


async def test_newest_state_wins_but_a_deals_final_state_is_never_skipped() -> None:
    box = Mailbox()
    box.put(b"trick 9", "table")
    box.put(b"deal 1 ended", "table", keep=True)  # replaces the older pending state
    box.put(b"deal 2 dealt", "table")
    box.put(b"deal 2, first bid", "table")
    assert await box.get(0.01) == [b"deal 1 ended", b"deal 2, first bid"]
    assert await box.get(0.01) == []


async def test_kept_states_are_bounded() -> None:
    box = Mailbox()
    for i in range(MAX_KEPT + 5):
        box.put(str(i).encode(), "table", keep=True)
    got = await box.get(0.01)
    assert len(got) == MAX_KEPT and got[-1] == str(MAX_KEPT + 4).encode()
