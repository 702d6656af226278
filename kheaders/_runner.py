"""What kheaders' runners share (Mirror, Processor, AIOProcessor): one lifecycle, one config style.

The lifecycle, written once here:

- ``run()`` blocks until :meth:`Runner.stop` (from any thread, a handler included), SIGTERM
  or SIGINT (in the main thread, unless ``handle_signals=False``), or the runner's own end;
  it finishes the work in hand, commits, closes its clients and returns. A ``stop()`` that
  comes before ``run()`` starts (a thread not yet scheduled) is kept: that ``run()`` returns
  at once. One ``run()`` at a time; after it returns the runner may ``run()`` again.
- ``close()`` stops a run in progress, waits for it to return (from another thread), and
  makes the runner final: ``run()`` after ``close()`` raises ProcessingError.
- ``with runner:`` closes it at the end of the block, however the block ends.

The config style: librdkafka settings travel in mappings under their own dotted names (the
consumer's in ``config``, ``group.id`` included, never a ``group_id=`` keyword; additions to a
producer's in ``producer_config``); everything else is a keyword-only Python option with the
same name wherever it means the same (``commit_interval``, ``batch_size``,
``shutdown_timeout``, ``handle_signals``, ``tracer_provider``, ``meter_provider``).
:func:`connection_config` takes the settings every client of one cluster shares.
"""

from __future__ import annotations

import signal
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Self

from kheaders._errors import ConfigurationError, ProcessingError

SIGNALS = (signal.SIGTERM, signal.SIGINT)

CONNECTION_PREFIXES = (
    "bootstrap.servers",
    "client.id",
    "security.protocol",
    "ssl.",
    "sasl.",
    "socket.",
    "broker.",
    "reconnect.",
    "metadata.",
    "topic.metadata.",
    "client.dns.lookup",
    "api.version.",
    "allow.auto.create.topics",
)
"""Settings that say how to reach and talk to a cluster (every client of it takes them)."""


def connection_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The connection and security settings of ``config`` (see :data:`CONNECTION_PREFIXES`)."""
    return {k: v for k, v in config.items() if k.startswith(CONNECTION_PREFIXES)}


@contextmanager
def stop_on_signals(stop: Callable[[], None], enabled: bool) -> Iterator[None]:
    """SIGTERM and SIGINT call ``stop`` while inside, when ``enabled`` and on the main thread
    (the only thread Python delivers signals to); the previous handlers come back after."""
    if not enabled or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.getsignal(s) for s in SIGNALS}
    for sig in previous:
        signal.signal(sig, lambda *_: stop())
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def deprecated_keyword(owner: str, old: str, new: str, *, stacklevel: int = 3) -> None:
    """Warn (DeprecationWarning at the caller's caller, by default) that ``owner`` was given
    the old keyword ``old``, whose place ``new`` takes."""
    warnings.warn(
        f"{owner}({old}=...) is deprecated: {new} (the old keyword goes in the next release)",
        DeprecationWarning,
        stacklevel=stacklevel,
    )


class Runner:
    """A service loop with kheaders' one lifecycle (see the module's docstring).

    A subclass calls ``Runner.__init__`` and runs its loop inside :meth:`_running` while
    :attr:`stopping` is False; its loop finishes the work in hand and releases its clients
    when it sees :attr:`stopping`. :meth:`_release` frees anything kept between runs. An
    asyncio runner runs its coroutine inside :meth:`_running` too (signals are delivered to
    the main thread's loop), and closes with ``await asyncio.to_thread(runner.close)`` so the
    loop goes on while ``close()`` waits.
    """

    def __init__(self, *, handle_signals: bool = True) -> None:
        if not isinstance(handle_signals, bool):
            raise ConfigurationError(
                f"handle_signals: expected True or False, got {type(handle_signals).__name__}"
            )
        self.handle_signals = handle_signals
        self._stop = threading.Event()
        self._idle = threading.Event()
        """Set while no ``run()`` is in progress."""
        self._idle.set()
        self._runner_thread: threading.Thread | None = None
        self._closed = False

    @contextmanager
    def _running(self) -> Iterator[None]:
        """The span of one ``run()``: refused after ``close()`` or while another runs;
        SIGTERM/SIGINT call :meth:`stop` inside it (see ``handle_signals``)."""
        name = type(self).__name__
        if self._closed:
            raise ProcessingError(f"{name} is closed: build a new one to run again")
        if not self._idle.is_set():
            raise ProcessingError(f"{name} is already running (one run() at a time)")
        self._idle.clear()
        self._runner_thread = threading.current_thread()
        try:
            with stop_on_signals(self.stop, self.handle_signals):
                yield
        finally:
            self._runner_thread = None
            self._stop_spent()
            self._idle.set()

    def _stop_spent(self) -> None:
        """The run a stop asked to end has ended: a later ``run()`` runs (a subclass that
        mirrors the stop in a flag of its own clears that too)."""
        self._stop.clear()

    def stop(self) -> None:
        """Ask ``run()`` to finish the work in hand, commit and return (any thread; a no-op
        when nothing runs)."""
        self._stop.set()

    @property
    def stopping(self) -> bool:
        """Whether :meth:`stop` was called (or a signal arrived) and the run it asked to end
        has not ended yet."""
        return self._stop.is_set()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def close(self, timeout: float | None = None) -> None:
        """Stop, wait up to ``timeout`` seconds (``None``: as long as it takes) for a
        ``run()`` in another thread to return, and free what the runner holds. Idempotent;
        ``run()`` is refused afterwards. Raises ProcessingError when the run did not return
        within ``timeout``."""
        self._closed = True
        self.stop()
        inside = self._runner_thread is threading.current_thread()
        if not inside and not self._idle.wait(timeout):
            raise ProcessingError(
                f"{type(self).__name__}.close: run() did not return within {timeout} s"
            )
        self._release()

    def _release(self) -> None:
        """Free what the runner keeps between runs (nothing, unless a subclass keeps some)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
