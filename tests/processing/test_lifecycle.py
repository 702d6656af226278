"""The processors share every runner's lifecycle (kheaders._runner, as Mirror does): one
``run()`` at a time, ``close()`` stops a run and is final, a ``with`` block closes, and a stop
is spent when the run it ended returns (a later run processes again)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest

from kheaders import ProcessingError
from kheaders.processing import AIOProcessor, Processor
from tests.processing.helpers import Running, config, make, produce, wait_for

pytestmark = pytest.mark.integration


def _run(processor: Processor | AIOProcessor) -> None:
    """``processor.run()`` on this thread (on a loop of its own for the asyncio driver)."""
    if isinstance(processor, AIOProcessor):
        asyncio.run(processor.run())
    else:
        processor.run()


def test_a_second_run_is_refused_while_one_runs_and_close_is_final(
    driver: str, bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory()
    seen: list[int] = []
    processor = make(driver, config(bootstrap), [topic], lambda msg: seen.append(msg.offset()))
    running = Running(processor)
    produce(bootstrap, topic, [{"value": b"one"}])
    wait_for(lambda: seen == [0], what="the first record handled")
    with pytest.raises(ProcessingError, match="already running"):
        _run(processor)
    processor.close(timeout=60)  # returns once run() has returned
    assert processor.closed
    running.stop()  # joins the thread; re-raises what run() raised: nothing
    with pytest.raises(ProcessingError, match="is closed"):
        _run(processor)


def test_a_stop_is_spent_when_its_run_returns_and_the_next_run_processes(
    bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory()
    seen: list[bytes] = []
    group = config(bootstrap)
    processor = Processor(group, [topic], lambda msg: seen.append(msg.value()))
    processor.stop()  # before run(): that run returns at once
    processor.run()
    assert not processor.stopping
    produce(bootstrap, topic, [{"value": b"after"}])
    running = Running(processor)
    wait_for(lambda: seen == [b"after"], what="the record handled by the second run")
    running.stop()


def test_a_with_block_closes_a_processor_running_in_a_thread(
    bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory()
    seen: list[int] = []
    with Processor(config(bootstrap), [topic], lambda msg: seen.append(msg.offset())) as p:
        thread = threading.Thread(target=p.run, daemon=True)
        thread.start()
        produce(bootstrap, topic, [{"value": b"x"}])
        wait_for(lambda: seen == [0], what="the record handled")
    thread.join(60)
    assert not thread.is_alive()
    assert p.closed


def test_an_async_with_block_closes_an_aioprocessor_on_its_loop(
    bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory()
    seen: list[int] = []

    async def handle(msg: Any) -> None:
        seen.append(msg.offset())

    async def main() -> None:
        async with AIOProcessor(config(bootstrap), [topic], handle) as processor:
            task = asyncio.create_task(processor.run())
            await asyncio.to_thread(produce, bootstrap, topic, [{"value": b"x"}])
            await asyncio.to_thread(wait_for, lambda: seen == [0], 60.0, "the record")
        assert task.done()
        assert processor.closed
        await task

    asyncio.run(main())
