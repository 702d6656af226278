"""The threads the async clients run librdkafka's waiting calls on, off the event loop.

Both are daemon threads (they never keep the process alive) that report their end to the
loop, so ``close()`` can wait for them without blocking it. :class:`Worker` runs jobs one at
a time, in order, each in a copy of the submitting task's context (OpenTelemetry's current
span included); :class:`Poller` serves a producer's delivery reports in short slices.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from kheaders._log import get_logger

T = TypeVar("T")
_log = get_logger("kheaders.aio")

SLICE = 0.1
"""Seconds a thread waits in librdkafka at most before looking at the loop again: what bounds
how long a cancelled call, or ``close()``, waits for a thread."""


def _ended(loop: asyncio.AbstractEventLoop, done: asyncio.Future[None]) -> None:
    """Tell the loop a thread is ending (nothing to tell when the loop is already closed)."""
    with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits
        loop.call_soon_threadsafe(_resolve, done)


def _resolve(done: asyncio.Future[None]) -> None:
    if not done.done():
        done.set_result(None)


async def wait_ended(done: asyncio.Future[None], timeout: float) -> bool:
    """Wait up to ``timeout`` seconds for a thread's end; True when it ended."""
    try:
        await asyncio.wait_for(asyncio.shield(done), timeout)
    except TimeoutError:
        return False
    return True


class Worker:
    """One daemon thread running submitted jobs in order; started on the first job."""

    def __init__(self, name: str, loop: asyncio.AbstractEventLoop) -> None:
        self._name = name
        self._loop = loop
        self._jobs: queue.SimpleQueue[tuple[Any, ...] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._stopped = False
        self.ended: asyncio.Future[None] = loop.create_future()

    def submit(self, fn: Callable[..., T], *args: Any) -> concurrent.futures.Future[T]:
        """Queue ``fn(*args)``, to run in a copy of the caller's context.

        Raises RuntimeError once the worker is stopped (its client is closed).
        """
        if self._stopped:
            raise RuntimeError("the client is closed")
        cf: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._jobs.put((cf, contextvars.copy_context(), fn, args))
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
            self._thread.start()
        return cf

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on the thread; a cancelled caller leaves the job to finish there."""
        return await asyncio.wrap_future(self.submit(fn, *args), loop=self._loop)

    def stop(self) -> None:
        """End the thread after the jobs already queued (``ended`` resolves then)."""
        if self._stopped:
            return
        self._stopped = True
        if self._thread is None:
            _ended(self._loop, self.ended)
        else:
            self._jobs.put(None)

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _run(self) -> None:
        try:
            while (job := self._jobs.get()) is not None:
                cf, ctx, fn, args = job
                if not cf.set_running_or_notify_cancel():
                    continue  # cancelled before it started
                try:
                    result = ctx.run(fn, *args)
                except BaseException as exc:
                    cf.set_exception(exc)
                else:
                    cf.set_result(result)
        finally:
            _ended(self._loop, self.ended)


class Poller:
    """A daemon thread calling ``poll(SLICE)`` until stopped, then ``served()`` after each
    slice that served a callback; the slice keeps the thread's reaction to ``stop()`` short.
    """

    def __init__(
        self,
        name: str,
        loop: asyncio.AbstractEventLoop,
        poll: Callable[[float], int],
        served: Callable[[], None],
    ) -> None:
        self._stop = threading.Event()
        self.ended: asyncio.Future[None] = loop.create_future()
        self._thread = threading.Thread(
            target=_poll_loop,
            args=(loop, poll, served, self._stop, self.ended),
            name=name,
            daemon=True,
        )
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()


def _poll_loop(
    loop: asyncio.AbstractEventLoop,
    poll: Callable[[float], int],
    served: Callable[[], None],
    stop: threading.Event,
    ended: asyncio.Future[None],
) -> None:
    # A function, not a method: the thread holds no reference to the client object, so an
    # unclosed client can still be collected (its finalizer then stops this thread).
    try:
        while not stop.is_set():
            try:
                if poll(SLICE):
                    served()
            except RuntimeError:
                if loop.is_closed():
                    return  # the loop is gone: nobody can receive reports any more
                _log.exception("delivery report callback failed")
            except Exception:
                _log.exception("delivery report callback failed")
    finally:
        _ended(loop, ended)
