"""A bot's mistakes cost it a move, never the table: ``Guarded`` and the default move of a view.

A bot can fail a turn in three ways: ``act`` raises, it returns something that is no command
of the table's game, or it returns a command the rules do not allow now. Left alone, the first
kills the task that was to answer (asyncio then prints "Task exception was never retrieved" and
the table waits for the seat's clock), and the other two are refused by the services (the
table waits for the clock too), or stop the pure engine with an exception. Here each is:

- one structured log line, ``bot_fault`` (warning), with the player, the table, the log
  position (``index``) and the seat, the ``fault`` (``raised``, ``not_a_command``,
  ``illegal``; ``rejected`` when the services refused a command this check let through:
  ``RemotePlayer`` then plays the default move too) and the exception's type and message or
  the answer (no traceback: a bot that raises on every turn would fill the log with them);
- the move falls to the default move, the very one the services play for a seat whose clock
  ran out (``protocol.skat.decide.default_action``, ``protocol.thirty_one.decide
  .default_action``), computed here from the seat's view (``default_move``), so it is made at
  once: a bot that raises on every turn slows nobody down, and is not withdrawn;
- counted: ``Guarded.faults`` (the tournament's results.json and printed standings show each
  entrant's ``faults``, kept in the tournament's log so that a resume loses none:
  ``skatbus.tournament.FaultLedger``; ``skatbus.evaluate`` and ``skat match`` theirs).

What is legal is ``view.legal``, read as the services read a command: the ``at`` a bot may set
is ignored, and a Skat discard may name its two cards in either order. Skat's ``show`` and
``resign``, which ``view.legal`` does not list, are judged from the view as the rules judge
them (in trick play of a declared game; ``show`` by the declarer, once; ``resign`` once).
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Awaitable
from typing import Any

import msgspec

from protocol.events import CardsShown, Resigned
from protocol.skat import cards as C
from protocol.skat import commands as skat_commands
from protocol.skat.views import PlayerView
from protocol.thirty_one import commands as t31_commands
from protocol.thirty_one.cards import hand_value
from protocol.thirty_one.views import ThirtyOneView
from services import logs

from .bot_thread import BotThread, on_a_loop

RAISED = "raised"
NOT_A_COMMAND = "not_a_command"
ILLEGAL = "illegal"
FAULTS = (RAISED, NOT_A_COMMAND, ILLEGAL)
"""The ways a bot can fail a turn (the ``fault`` field of its log line)."""
REJECTED = "rejected"
"""A command ``view.legal`` let through that the services refused as illegal (``RemotePlayer``)."""

_SKAT_OFFERS = (skat_commands.ShowCards, skat_commands.Resign)


def default_move(view: Any) -> Any:
    """The move the services play for the seat to move when its clock runs out, from that
    seat's own view (``view.legal`` must be its legal actions): a Skat or a Thirty-one view.
    ``ValueError`` when the view has no legal action (it is not the seat's turn)."""
    legal = list(view.legal)
    if not legal:
        raise ValueError(f"seat {view.seat} has no legal action: it is not its turn")
    if isinstance(view, PlayerView):
        move = _skat_default(view, legal)
    elif isinstance(view, ThirtyOneView):
        move = _thirty_one_default(view, legal)
    else:
        move = legal[0]
    return move if move in legal else legal[0]


def _skat_default(view: PlayerView, legal: list[Any]) -> Any:
    """``protocol.skat.decide.default_action`` from a view: pass while bidding or doubling;
    the weakest legal card in play (trumps strongest, then by the game's order, then by card);
    pick up the skat; discard the two cards of fewest points; declare the first legal game."""
    phase = view.phase
    if phase in ("bidding", "doubling"):
        return skat_commands.PASS
    if phase == "playing":
        order = C.ORDERS[view.game.game if view.game is not None else "R"]
        playable = [C.INDEX[a.card] for a in legal if isinstance(a, skat_commands.PlayCard)]
        weakest = min(playable, key=lambda c: (order.klass[c] == C.TRUMP, order.strength[c], c))
        return skat_commands.PLAY[weakest]
    if phase == "skat":
        return skat_commands.PICKUP
    if phase == "discard":
        held = sorted((C.INDEX[c] for c in view.hand), key=lambda c: (C.POINTS[c], c))
        a, b = sorted(held[:2])
        return skat_commands.DISCARDS[(a, b)]
    return legal[0]


def _thirty_one_default(view: ThirtyOneView, legal: list[Any]) -> Any:
    """``protocol.thirty_one.decide.default_action`` from a view: take the stock's top card
    (the pile's when the stock is empty); discard the card whose loss leaves the best hand,
    never the one just taken from the pile (``view.legal`` leaves it out), the first in hand
    order on a tie."""
    if view.phase == "take":
        return t31_commands.TAKE_STOCK if view.stock else t31_commands.TAKE_DISCARD
    allowed = {a.card for a in legal if isinstance(a, t31_commands.Discard)}
    best, best_value = "", -1
    for card in view.hand:
        if card not in allowed:
            continue
        value = hand_value([c for c in view.hand if c != card], view.rules)
        if value > best_value:
            best, best_value = card, value
    return t31_commands.DISCARDS[best] if best else legal[0]


def judge(view: Any, answer: Any) -> tuple[str, Any]:
    """``("", command)`` if ``answer`` is a move the seat may make now (``at`` cleared, a Skat
    discard in card order, as ``view.legal`` names it), else ``(fault, None)``."""
    base = t31_commands.Command if isinstance(view, ThirtyOneView) else skat_commands.Command
    if not isinstance(answer, base):
        return NOT_A_COMMAND, None
    plain = msgspec.structs.replace(answer, at=-1)
    if isinstance(plain, skat_commands.Discard) and all(c in C.INDEX for c in plain.cards):
        plain = skat_commands.Discard(cards=tuple(sorted(plain.cards, key=C.INDEX.__getitem__)))  # type: ignore[arg-type]
    if isinstance(plain, _SKAT_OFFERS):
        return ("", plain) if _offer_allowed(view, plain) else (ILLEGAL, None)
    if plain in view.legal:
        return "", plain
    return ILLEGAL, None


def _offer_allowed(view: PlayerView, offer: Any) -> bool:
    """Whether a Skat ``show`` or ``resign`` is allowed now (``protocol.skat.deal.Deal.check``),
    as far as the seat's view tells: in trick play of a declared game (no ramsch), not made
    before by this seat; ``show`` only by the declarer."""
    if view.phase != "playing" or view.game is None:
        return False
    done = CardsShown if isinstance(offer, skat_commands.ShowCards) else Resigned
    if any(isinstance(e, done) and e.seat == view.seat for e in view.history):
        return False
    return not isinstance(offer, skat_commands.ShowCards) or view.declarer == view.seat


def log_fault(player: str, view: Any, index: int, fault: str, detail: str, move: Any) -> None:
    """The one line a failed turn logs (see the module docstring)."""
    logs.get(player=player).warning(
        "bot_fault",
        table=str(getattr(view, "table", ""))[:64],
        index=index,
        seat=getattr(view, "seat", None),
        fault=fault,
        error=detail[:300],
        default=str(move),
    )


def describe(exc: BaseException) -> str:
    """An exception as ``Type: message`` (one line)."""
    return " ".join(f"{type(exc).__name__}: {exc}".split())


class Guarded:
    """``bot`` playing as ``player``, its failed turns played by the default move, logged once
    each and counted in ``faults`` (see the module docstring). Its ``act`` is plain when the
    bot's is, a coroutine when the bot's is ``async``. ``name`` is what the bot is known by
    (its spec, e.g. ``my_bot.py:MyBot``).

    ``threaded`` (what ``skatbus.bot_loader`` sets for an in-process class, see
    docs/in-process-bots.md): a plain ``act`` called from an event loop (``RemotePlayer``)
    runs in the bot's own thread (``skatbus.bot_thread``) and ``act`` returns a coroutine, so
    a slow bot never holds up the loop the other bots share; called without a loop (the pure
    engine) it is a plain call, as before. Either way the bot's ``act`` is called once at a
    time (a lock), whichever threads call. An ``async def act`` is awaited on the loop."""

    def __init__(self, bot: Any, player: str = "", name: str = "", threaded: bool = False) -> None:
        self.bot = bot
        self.player = player
        self.name = name or type(bot).__name__
        self.faults = 0
        self.by_fault: dict[str, int] = {}
        self.threaded = threaded and not inspect.iscoroutinefunction(getattr(bot, "act", None))
        self._one_at_a_time = threading.Lock()
        self._thread: BotThread | None = None

    def act(self, obs: Any) -> Any:
        if self.threaded and on_a_loop():
            return self._in_thread(obs)
        try:
            answer = self._call(obs)
        except Exception as exc:
            return self.fault(obs, RAISED, describe(exc))
        if inspect.isawaitable(answer):
            return self._settle(obs, answer)
        return self.checked(obs, answer)

    def _call(self, obs: Any) -> Any:
        with self._one_at_a_time:
            return self.bot.act(obs)

    async def _in_thread(self, obs: Any) -> Any:
        if self._thread is None:
            self._thread = BotThread(self.player or self.name)
        try:
            answer = await self._thread.run(lambda: self._call(obs))
        except Exception as exc:
            return self.fault(obs, RAISED, describe(exc))
        if inspect.isawaitable(answer):  # a plain def that hands back an awaitable
            return await self._settle(obs, answer)
        return self.checked(obs, answer)

    async def _settle(self, obs: Any, pending: Awaitable[Any]) -> Any:
        try:
            answer = await pending
        except Exception as exc:
            return self.fault(obs, RAISED, describe(exc))
        return self.checked(obs, answer)

    def checked(self, obs: Any, answer: Any) -> Any:
        """``answer`` if it is a legal move now, else the default move (a fault)."""
        fault, move = judge(obs.view, answer)
        if fault:
            return self.fault(obs, fault, repr(answer)[:200])
        return move

    def fault(self, obs: Any, fault: str, detail: str) -> Any:
        """Count and log a failed turn; the default move that replaces it."""
        move = default_move(obs.view)
        self.faults += 1
        self.by_fault[fault] = self.by_fault.get(fault, 0) + 1
        log_fault(self.player or self.name, obs.view, int(getattr(obs, "index", -1)), fault, detail, move)
        return move


def guarded(bot: Any, player: str = "", name: str = "") -> Guarded:
    """``bot`` guarded (a bot that is one already is returned as it is, its player set if it
    had none)."""
    if isinstance(bot, Guarded):
        if player and not bot.player:
            bot.player = player
        return bot
    return Guarded(bot, player, name)
