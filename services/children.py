"""Child processes that die with their parent, whatever kills the parent.

A nats-server or a service left running after its parent died (a closed terminal, ``kill -9``,
an OOM kill) holds a port, a durable consumer and, worst, the store: the next start on that
store would run a second server on it. So every long-lived child of ``skat up``, ``skat run``,
``skat tournament`` and the other commands with a built-in stack is started by ``popen``:

- **Parent-death signal** (Linux ``prctl(PR_SET_PDEATHSIG)``): the kernel sends the child
  SIGTERM (a service hands its partitions over, nats-server shuts down cleanly) when its parent
  dies, even by SIGKILL. The kernel ties this to the *thread* that forked, not the process: a
  child forked from a worker thread (an executor's, which ends with its event loop) would be
  signalled when that thread ends. So children are forked from the main thread, or else from
  one spawner thread that lives as long as the process.
- **Own process group**: a terminal's Ctrl-C (SIGINT) and hang-up (SIGHUP) go to the
  foreground process group, i.e. to the parent only, which then stops its children in order
  (services first, then the server). nats-server in particular must not see a SIGHUP: to it
  that means "reload the configuration", not "stop".
- **stdin from /dev/null**: a child in a background process group that read the terminal would
  be stopped (SIGTTIN); none of them needs input.

Python children spawned by ``services.main.spawn_services`` also watch their parent
(``PARENT_PID_ENV``) as a fallback where there is no parent-death signal (not Linux).
Elsewhere than Linux ``popen`` degrades to the process group alone, without failing.
"""

from __future__ import annotations

import concurrent.futures
import ctypes
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any, Final

PARENT_PID_ENV: Final = "SKAT_PARENT_PID"
"""Set in a service's environment by its parent: the PID it watches (see ``parent_gone``)."""

_PR_SET_PDEATHSIG: Final = 1


def _load_prctl() -> Callable[..., int] | None:
    """libc's ``prctl``, resolved now: after a fork in a threaded process, loading a library
    (ctypes' dlopen, malloc) could deadlock, so the child only calls what is resolved here."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    return prctl


_PRCTL: Final = _load_prctl()


def has_parent_death_signal() -> bool:
    """Whether children get a signal from the kernel when their parent dies (Linux)."""
    return _PRCTL is not None


def _die_with(parent: int, sig: int) -> Callable[[], None]:
    """What the child runs between fork and exec: ask for ``sig`` when the parent dies, and
    if the parent died before that (the request came too late to fire), exit at once."""

    def preexec() -> None:
        if _PRCTL is not None:
            _PRCTL(_PR_SET_PDEATHSIG, sig, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)

    return preexec


def popen(
    argv: Sequence[str],
    *,
    die_signal: int = signal.SIGTERM,
    pass_fds: Sequence[int] = (),
    **kwargs: Any,
) -> subprocess.Popen[bytes]:
    """``subprocess.Popen(argv, **kwargs)`` for a child that must not outlive this process:
    ``die_signal`` when the parent dies, its own process group, stdin from /dev/null (unless
    given). Forked from the main thread or from the process-long spawner thread."""
    kwargs.setdefault("stdin", subprocess.DEVNULL)
    if os.name != "posix":  # no process groups or preexec_fn there: a plain child
        return subprocess.Popen(list(argv), **kwargs)
    parent = os.getpid()

    def make() -> subprocess.Popen[bytes]:
        # preexec_fn forks without vfork: nothing but prctl and getppid runs before exec.
        return subprocess.Popen(
            list(argv),
            preexec_fn=_die_with(parent, die_signal),
            process_group=0,
            pass_fds=tuple(pass_fds),
            **kwargs,
        )

    if threading.current_thread() is threading.main_thread():
        return make()
    return _spawner().run(make)


def parent_gone(expected: int | None) -> bool:
    """Whether the process that started this one is gone (we were re-parented): the fallback
    watchdog's test. ``expected`` None: nobody asked to be watched."""
    return expected is not None and os.getppid() != expected


def watched_parent(env: dict[str, str] | None = None) -> int | None:
    """The parent PID a service should watch, from ``PARENT_PID_ENV`` (None: not set, or not a
    number)."""
    value = (os.environ if env is None else env).get(PARENT_PID_ENV, "")
    return int(value) if value.isdigit() else None


class _Spawner:
    """One daemon thread that forks children for the other non-main threads. It lives as long
    as the process (it only ever waits on its queue), so the parent-death signal of a child it
    forked fires when the process dies, not when the thread that asked for the child ends."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self._jobs: queue.SimpleQueue[
            tuple[Callable[[], subprocess.Popen[bytes]], concurrent.futures.Future[subprocess.Popen[bytes]]]
        ] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._serve, name="skatbus-spawner", daemon=True)
        self._thread.start()

    def run(self, make: Callable[[], subprocess.Popen[bytes]]) -> subprocess.Popen[bytes]:
        done: concurrent.futures.Future[subprocess.Popen[bytes]] = concurrent.futures.Future()
        self._jobs.put((make, done))
        return done.result()

    def _serve(self) -> None:
        while True:
            make, done = self._jobs.get()
            try:
                done.set_result(make())
            except BaseException as exc:  # handed to the caller's thread
                done.set_exception(exc)


_SPAWNER: _Spawner | None = None
_SPAWNER_LOCK = threading.Lock()


def _spawner() -> _Spawner:
    global _SPAWNER
    with _SPAWNER_LOCK:
        if _SPAWNER is None or _SPAWNER.pid != os.getpid():  # none yet, or a forked copy without its thread
            _SPAWNER = _Spawner()
        return _SPAWNER
