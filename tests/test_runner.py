"""Every runner's one lifecycle (kheaders/_runner.py): ``run()`` until ``stop()`` or a
signal, ``close()`` waits for it and is final, a context manager, one run at a time."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from collections.abc import Iterator
from types import FrameType

import pytest

from kheaders import ConfigurationError
from kheaders._errors import ProcessingError
from kheaders._runner import Runner


class Loop(Runner):
    """A runner whose work is counting rounds until it is asked to stop."""

    def __init__(self, *, handle_signals: bool = True) -> None:
        super().__init__(handle_signals=handle_signals)
        self.rounds = 0
        self.started = threading.Event()
        self.released = 0

    def run(self) -> None:
        with self._running():
            self.started.set()
            while not self.stopping:
                self.rounds += 1
                self._stop.wait(0.01)

    def _release(self) -> None:
        self.released += 1


@pytest.fixture
def guard() -> Iterator[list[int]]:
    """A SIGTERM handler of the test's own (so a signal a runner did not take never ends the
    test run); what it received is listed; the previous handler comes back after."""
    seen: list[int] = []

    def handler(signum: int, _frame: FrameType | None) -> None:
        seen.append(signum)

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield seen
    finally:
        signal.signal(signal.SIGTERM, previous)


def _in_thread(loop: Loop) -> threading.Thread:
    thread = threading.Thread(target=loop.run, daemon=True)
    thread.start()
    assert loop.started.wait(30)
    return thread


def _signal_once_started(loop: Loop) -> None:
    assert loop.started.wait(30)
    os.kill(os.getpid(), signal.SIGTERM)


def test_run_returns_after_stop_from_another_thread() -> None:
    loop = Loop()
    thread = _in_thread(loop)
    loop.stop()
    thread.join(30)
    assert not thread.is_alive()
    assert loop.rounds >= 1
    assert not loop.stopping  # the stop is spent with the run it ended


def test_a_stop_before_the_run_starts_is_kept() -> None:
    """A thread that starts ``run()`` late still sees the ``stop()`` that came first."""
    loop = Loop()
    loop.stop()
    loop.run()  # returns at once
    assert loop.rounds == 0
    thread = _in_thread(loop)  # and the next run runs
    loop.stop()
    thread.join(30)
    assert not thread.is_alive()


def test_sigterm_stops_a_run_on_the_main_thread_and_the_old_handler_comes_back(
    guard: list[int],
) -> None:
    loop = Loop()
    handler = signal.getsignal(signal.SIGTERM)
    threading.Thread(target=_signal_once_started, args=(loop,), daemon=True).start()
    loop.run()  # returns: the signal called stop()
    assert loop.rounds >= 1
    assert guard == []  # the runner took the signal, not the handler before it
    assert signal.getsignal(signal.SIGTERM) is handler


def test_handle_signals_false_leaves_signals_alone(guard: list[int]) -> None:
    loop = Loop(handle_signals=False)

    def kill_then_stop() -> None:
        _signal_once_started(loop)
        while not guard:  # delivered to the main thread's handler, between two rounds
            loop.started.wait(0.01)
        loop.stop()

    killer = threading.Thread(target=kill_then_stop, daemon=True)
    killer.start()
    loop.run()
    killer.join(30)
    assert guard == [signal.SIGTERM]


def test_close_waits_for_the_run_and_is_final() -> None:
    loop = Loop()
    thread = _in_thread(loop)
    loop.close(timeout=30)
    assert not thread.is_alive()  # close() returned only once run() had
    assert loop.closed
    assert loop.released == 1
    with pytest.raises(ProcessingError, match="Loop is closed"):
        loop.run()
    loop.close()  # idempotent


def test_one_run_at_a_time() -> None:
    loop = Loop()
    thread = _in_thread(loop)
    try:
        with pytest.raises(ProcessingError, match="already running"):
            loop.run()
    finally:
        loop.stop()
        thread.join(30)
    loop.started.clear()
    second = _in_thread(loop)  # after a run returned, the runner runs again
    loop.close(timeout=30)
    assert not second.is_alive()


def test_a_with_block_closes_the_runner() -> None:
    with Loop() as loop:
        thread = _in_thread(loop)
    assert not thread.is_alive()
    assert loop.closed


def test_close_from_inside_the_run_does_not_wait_for_itself() -> None:
    class Closing(Loop):
        def run(self) -> None:
            with self._running():
                self.close(timeout=0)

    closing = Closing()
    closing.run()
    assert closing.closed
    assert closing.released == 1


def test_handle_signals_must_be_a_bool() -> None:
    with pytest.raises(ConfigurationError, match="handle_signals: expected True or False"):
        Loop(handle_signals="yes")  # type: ignore[arg-type]


def test_an_asyncio_runner_shares_the_lifecycle_and_closes_without_blocking_its_loop() -> None:
    class AsyncLoop(Runner):
        def __init__(self) -> None:
            super().__init__()
            self.rounds = 0

        async def run(self) -> None:
            with self._running():
                while not self.stopping:
                    self.rounds += 1
                    await asyncio.sleep(0.01)

    async def main() -> AsyncLoop:
        runner = AsyncLoop()
        task = asyncio.create_task(runner.run())
        while not runner.rounds:
            await asyncio.sleep(0.01)
        await asyncio.to_thread(runner.close, 30)  # the loop goes on while close() waits
        assert task.done()
        await task
        return runner

    runner = asyncio.run(main())
    assert runner.closed
    with pytest.raises(ProcessingError, match="AsyncLoop is closed"):
        asyncio.run(runner.run())
