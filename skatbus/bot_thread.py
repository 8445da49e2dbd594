"""A thread of a bot's own: a plain ``def act`` played off the event loop, one call at a time.

The tournament runner plays all its bots on one event loop (``RemotePlayer``s sharing one
connection). A plain ``act`` called there runs on that loop, so a slow one (a search, a model,
a ``time.sleep``) holds up every other bot and the connection with it: all the runner's seats
then miss their clocks, not only the slow bot's. An in-process class's plain ``act``
(``skatbus.bot_loader``) is therefore run in a ``BotThread``: the loop awaits its answer and
goes on serving the other bots meanwhile, so a slow bot costs its own seat its time and nobody
else anything.

Why a thread of its own per bot rather than ``asyncio.to_thread``: its calls are made one after
another in that one thread, so the bot's state is never touched by two threads at once (a bot
seated at several tables is prompted at several at once), however many tables prompt it; a
slow bot queues its own calls, never the shared default executor's workers (which other bots
and the event loop's own lookups need); and the thread is a daemon, so a bot that never
returns does not keep the process from ending (``asyncio.run`` waits for the default
executor's threads). The thread is started by the first call made from an event loop: the
pure engine (``skatbus.evaluate``, ``duplicate``, ``thirty_one_eval``, match workers), which
calls ``act`` without one, starts none.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from typing import Any

_Call = tuple[Callable[[], Any], "asyncio.Future[Any]", asyncio.AbstractEventLoop]


class BotThread:
    """Runs callables in one daemon thread of its own, in the order they were given, each
    awaited by the event loop that gave it (``run``)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._calls: queue.SimpleQueue[_Call] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._starting = threading.Lock()

    async def run(self, call: Callable[[], Any]) -> Any:
        """``call()``'s result (or exception), computed in the thread once the calls given
        before it are done. Cancelling the wait drops the result, not the call: a bot's ``act``
        cannot be stopped from outside, so it runs to its end and its answer is thrown away."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._start()
        self._calls.put((call, future, loop))
        return await future

    @property
    def started(self) -> bool:
        return self._thread is not None

    def _start(self) -> None:
        with self._starting:
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name=f"bot-{self.name}"[:60], daemon=True)
                self._thread.start()

    def _serve(self) -> None:
        while True:
            call, future, loop = self._calls.get()
            if future.cancelled():  # nobody waits for it any more (a stopped player)
                continue
            try:
                result, error = call(), None
            except Exception as exc:
                result, error = None, exc
            except BaseException as exc:  # SystemExit in a bot: its turn's fault, not the runner's end
                result, error = None, RuntimeError(f"{type(exc).__name__}: {exc}")
            try:
                loop.call_soon_threadsafe(_settle, future, result, error)
            except RuntimeError:  # the loop is closed: nobody to answer
                pass


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():  # cancelled while the bot thought
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


def on_a_loop() -> bool:
    """Whether this thread runs an event loop (the bus's players), which a plain ``act``
    must not hold up, rather than the pure engine's plain calls."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
