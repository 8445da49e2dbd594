"""Types of the C core (skatbus/pimc/_dds.c)."""

def root(
    hands: tuple[int, int, int],
    trick: tuple[int, ...],
    mover: int,
    declarer: int,
    null: bool,
    lo: int,
    hi: int,
    node_limit: int,
    klass: bytes,
    strength: bytes,
    points: bytes,
) -> tuple[list[tuple[int, int]], int] | None: ...
