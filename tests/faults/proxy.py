"""A fault-injecting TCP proxy for tests: cuts connections, stalls and delays traffic.

It listens on a loopback port and forwards every connection to one upstream address. Faults
come on command (:meth:`FaultProxy.cut`, :meth:`FaultProxy.stall`, :meth:`FaultProxy.delay`,
:meth:`FaultProxy.refuse`) or at random from :meth:`FaultProxy.start_chaos`, whose choices
and intervals come from a seeded RNG and are bounded (a fault count cap, a maximum stall and
a maximum delay), so a run is reproducible in what it does if not to the microsecond.

Kafka brokers name their own address in metadata, and clients connect to that address after
bootstrap, so a proxy only sees the traffic when the broker *advertises the proxy's port*:
start the broker with ``advertised_port=proxy.port`` (both ``ApacheKafka`` and
``EmbeddedBroker`` take it) and bootstrap through the proxy (see :func:`proxied_broker` and
:func:`fault_proxy`).

The event loop runs in a daemon thread; every public method is thread-safe.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import multiprocessing
import random
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection

from kheaders.broker import free_port
from tests.support.brokers import LocalBroker, local_broker

_CHUNK = 64 * 1024


@dataclass
class ProxyStats:
    """What the proxy did: connections accepted, faults injected, bytes forwarded."""

    connections: int = 0
    refused: int = 0
    cuts: int = 0
    connections_cut: int = 0
    stalls: int = 0
    delays: int = 0
    bytes_up: int = 0
    bytes_down: int = 0
    faults: list[str] = field(default_factory=list)


class _Pipe:
    """One proxied connection: the client side and the upstream side."""

    __slots__ = ("client", "upstream")

    def __init__(self, client: asyncio.StreamWriter, upstream: asyncio.StreamWriter) -> None:
        self.client = client
        self.upstream = upstream

    def abort(self) -> None:
        for writer in (self.client, self.upstream):
            writer.transport.abort()


class FaultProxy:
    """Forward ``127.0.0.1:port`` to ``upstream`` and inject faults on demand.

    >>> with FaultProxy(("127.0.0.1", 9092)) as proxy:  # doctest: +SKIP
    ...     proxy.stall(200)   # nothing moves for 200 ms
    ...     proxy.cut()        # every open connection is reset
    """

    def __init__(
        self, upstream: tuple[str, int], port: int | None = None, *, seed: int = 0
    ) -> None:
        self.upstream = upstream
        self.port = port or free_port()
        self.stats = ProxyStats()
        self._rng = random.Random(seed)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.AbstractServer | None = None
        self._pipes: set[_Pipe] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._flowing = asyncio.Event()
        self._delay_s = 0.0
        self._refusing = False
        self._chaos: asyncio.Task[None] | None = None
        self._lock = threading.Lock()

    @property
    def address(self) -> str:
        """``127.0.0.1:PORT``: where clients connect."""
        return f"127.0.0.1:{self.port}"

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> FaultProxy:
        """Start listening (in a background thread); return ``self``."""
        self._thread.start()
        self._call(self._start())
        return self

    async def _start(self) -> None:
        self._flowing.set()
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port)

    def stop(self) -> None:
        """Stop chaos, close every connection and the listener, end the thread."""
        if not self._thread.is_alive():
            return
        self._call(self._stop())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        self._loop.close()

    async def _stop(self) -> None:
        if self._chaos is not None:
            self._chaos.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._chaos
        self._flowing.set()
        if self._server is not None:
            self._server.close()
        for pipe in list(self._pipes):
            pipe.abort()
        tasks = [t for t in self._tasks if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _call(self, coro: object) -> object:
        future: concurrent.futures.Future[object] = asyncio.run_coroutine_threadsafe(
            coro,  # type: ignore[arg-type]
            self._loop,
        )
        return future.result(10)

    # -- faults on command -------------------------------------------------------------------

    def cut(self) -> int:
        """Reset every open connection now (clients see a broken connection); return how many."""
        return self._call(self._cut("cut"))  # type: ignore[return-value]

    async def _cut(self, why: str) -> int:
        pipes = list(self._pipes)
        for pipe in pipes:
            pipe.abort()
        self.stats.cuts += 1
        self.stats.connections_cut += len(pipes)
        self.stats.faults.append(f"{why}:{len(pipes)}")
        return len(pipes)

    def stall(self, ms: float) -> None:
        """Stop forwarding in both directions for ``ms`` milliseconds (connections stay open)."""
        self._loop.call_soon_threadsafe(self._stall, ms)

    def _stall(self, ms: float) -> None:
        self.stats.stalls += 1
        self.stats.faults.append(f"stall:{ms:.0f}ms")
        self._flowing.clear()
        self._loop.call_later(ms / 1000, self._flowing.set)

    def delay(self, ms: float) -> None:
        """Hold every forwarded chunk ``ms`` milliseconds from now on (0 turns it off)."""
        self._loop.call_soon_threadsafe(self._set_delay, ms)

    def _set_delay(self, ms: float) -> None:
        if ms:
            self.stats.delays += 1
            self.stats.faults.append(f"delay:{ms:.0f}ms")
        self._delay_s = ms / 1000

    def refuse(self, refusing: bool = True) -> None:
        """Close new connections at once while ``refusing`` (as if the broker were gone)."""
        self._refusing = refusing

    # -- faults at random ----------------------------------------------------------------------

    def start_chaos(
        self,
        *,
        interval_ms: tuple[float, float] = (50, 300),
        max_faults: int = 50,
        max_stall_ms: float = 300,
        max_delay_ms: float = 30,
        weights: tuple[float, float, float] = (1.0, 1.0, 1.0),
    ) -> None:
        """Inject up to ``max_faults`` random faults (cut, stall, delay) at seeded intervals.

        A delay lasts until the next fault, which clears it. Choices and intervals come from
        the seeded RNG; :meth:`stop_chaos` (or :meth:`stop`) ends it and clears any delay.
        """

        async def chaos() -> None:
            for _ in range(max_faults):
                await asyncio.sleep(self._rng.uniform(*interval_ms) / 1000)
                self._set_delay(0)
                kind = self._rng.choices(("cut", "stall", "delay"), weights)[0]
                if kind == "cut":
                    await self._cut("chaos-cut")
                elif kind == "stall":
                    self._stall(self._rng.uniform(10, max_stall_ms))
                else:
                    self._set_delay(self._rng.uniform(1, max_delay_ms))
            self._set_delay(0)

        async def begin() -> None:
            self._chaos = asyncio.get_running_loop().create_task(chaos())

        self._call(begin())

    def stop_chaos(self) -> None:
        """End random faults, clear any delay, let traffic flow."""

        async def end() -> None:
            if self._chaos is not None:
                self._chaos.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._chaos
                self._chaos = None
            self._set_delay(0)
            self._flowing.set()

        self._call(end())

    def chaos_done(self) -> bool:
        """True when no chaos task is running (it ended, or never started)."""
        chaos = self._chaos
        return chaos is None or chaos.done()

    # -- forwarding ------------------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is None:  # pragma: no cover - always inside a task
            return
        self._tasks.add(task)
        try:
            await self._forward(reader, writer)
        except asyncio.CancelledError:  # stop(): the connection ends with the proxy
            writer.transport.abort()
        finally:
            self._tasks.discard(task)

    async def _forward(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._refusing:
            self.stats.refused += 1
            writer.transport.abort()
            return
        cuts = self.stats.cuts
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            self.stats.refused += 1
            writer.transport.abort()
            return
        if self._refusing or self.stats.cuts != cuts:
            # a cut or a refusal came while this connection was being set up: it was open
            # then, so it goes too (else a client reconnecting just then would slip through)
            self.stats.refused += 1
            writer.transport.abort()
            up_writer.transport.abort()
            return
        self.stats.connections += 1
        pipe = _Pipe(writer, up_writer)
        self._pipes.add(pipe)
        try:
            await asyncio.gather(
                self._pump(reader, up_writer, up=True),
                self._pump(up_reader, writer, up=False),
            )
        finally:
            self._pipes.discard(pipe)
            pipe.abort()

    async def _pump(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, up: bool
    ) -> None:
        try:
            while True:
                data = await reader.read(_CHUNK)
                if not data:
                    break
                if self._delay_s:
                    await asyncio.sleep(self._delay_s)
                await self._flowing.wait()
                writer.write(data)
                await writer.drain()
                if up:
                    self.stats.bytes_up += len(data)
                else:
                    self.stats.bytes_down += len(data)
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.transport.abort()


def _serve(conn: Connection, upstream: tuple[str, int], port: int, seed: int) -> None:
    """The body of a :class:`ProcessFaultProxy`: a FaultProxy obeying commands from a pipe."""
    proxy = FaultProxy(upstream, port, seed=seed).start()
    conn.send("ready")
    while True:
        try:
            name, args, kwargs = conn.recv()
        except EOFError:  # the parent went away
            name, args, kwargs = "stop", (), {}
        if name == "stop":
            proxy.stop()
            with contextlib.suppress(OSError):
                conn.send(None)
            return
        if name == "stats":
            conn.send(dataclasses.replace(proxy.stats, faults=list(proxy.stats.faults)))
            continue
        conn.send(getattr(proxy, name)(*args, **kwargs))


class ProcessFaultProxy:
    """A :class:`FaultProxy` in its own process, so that it never waits for the GIL of the
    process whose clients it tests (a busy producer would otherwise slow the forwarding
    down and add faults nobody asked for). Same commands; ``stats`` is a snapshot."""

    def __init__(
        self, upstream: tuple[str, int], port: int | None = None, *, seed: int = 0
    ) -> None:
        self.upstream = upstream
        self.port = port or free_port()
        self.seed = seed
        self._conn: Connection | None = None
        self._process: multiprocessing.process.BaseProcess | None = None
        self._lock = threading.Lock()

    @property
    def address(self) -> str:
        """``127.0.0.1:PORT``: where clients connect."""
        return f"127.0.0.1:{self.port}"

    def start(self) -> ProcessFaultProxy:
        """Start the proxy process and wait until it listens; return ``self``."""
        ctx = multiprocessing.get_context("spawn")  # never fork a process running librdkafka
        parent, child = ctx.Pipe()
        self._process = ctx.Process(
            target=_serve, args=(child, self.upstream, self.port, self.seed), daemon=True
        )
        self._process.start()
        if not parent.poll(60) or parent.recv() != "ready":
            self._process.kill()
            raise RuntimeError("the fault proxy process did not start")
        self._conn = parent
        return self

    def _call(self, name: str, *args: object, **kwargs: object) -> object:
        assert self._conn is not None, "start() the proxy first"
        with self._lock:
            self._conn.send((name, args, kwargs))
            return self._conn.recv()

    def cut(self) -> int:
        """Reset every open connection now; return how many."""
        return self._call("cut")  # type: ignore[return-value]

    def stall(self, ms: float) -> None:
        """Stop forwarding in both directions for ``ms`` milliseconds."""
        self._call("stall", ms)

    def delay(self, ms: float) -> None:
        """Hold every forwarded chunk ``ms`` milliseconds (0 turns it off)."""
        self._call("delay", ms)

    def refuse(self, refusing: bool = True) -> None:
        """Close new connections at once while ``refusing``."""
        self._call("refuse", refusing)

    def start_chaos(self, **kwargs: object) -> None:
        """As :meth:`FaultProxy.start_chaos`."""
        self._call("start_chaos", **kwargs)

    def stop_chaos(self) -> None:
        """As :meth:`FaultProxy.stop_chaos`."""
        self._call("stop_chaos")

    def chaos_done(self) -> bool:
        """True when no chaos is running."""
        return bool(self._call("chaos_done"))

    @property
    def stats(self) -> ProxyStats:
        """A snapshot of the proxy's counters."""
        return self._call("stats")  # type: ignore[return-value]

    def stop(self) -> None:
        """Stop the proxy process (every connection closes)."""
        process, self._process = self._process, None
        if process is None:
            return
        with contextlib.suppress(OSError, EOFError):
            self._call("stop")
        process.join(10)
        if process.is_alive():
            process.kill()
            process.join(5)

    def __enter__(self) -> ProcessFaultProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


SEED = 20261121
"""The fault proxies' random seed in the tests: the same faults on every run."""
RATE = 8_000
"""Records/s of the runs through faults: spreads them so the faults land while records fly."""
PARTITIONS = 3
MESSAGE_TIMEOUT_MS = 6000
"""Above the chaos' stalls and reconnects: only a blackout makes records time out."""


@contextlib.contextmanager
def fault_proxy(
    broker: LocalBroker, seed: int = 0, *, own_process: bool = False
) -> Iterator[FaultProxy]:
    """A fresh fault proxy on the port ``broker`` advertises, forwarding to its real port.

    A broker outlives many proxies this way (one per test: fresh statistics, no chaos or
    refusal left over from the last test) while a new broker costs seconds to start. With
    ``own_process`` the proxy runs in a process of its own (:class:`ProcessFaultProxy`).
    """
    kind = ProcessFaultProxy if own_process else FaultProxy
    proxy: FaultProxy = kind(  # type: ignore[assignment]
        ("127.0.0.1", broker.port), broker.advertised_port, seed=seed
    ).start()
    try:
        yield proxy
    finally:
        proxy.stop()


def proxied_local_broker() -> LocalBroker:
    """A started broker of the reference kind (Apache Kafka, else Tansu) that advertises a free
    port where no one listens until :func:`fault_proxy` puts a proxy there.

    Everything that reaches the broker at its advertised address crosses the proxy: every
    client connection after bootstrap, and on Apache Kafka the broker's own inter-broker
    requests too (transaction markers), which the fault tests do not use.
    """
    return local_broker(advertised_port=free_port()).start()


@contextlib.contextmanager
def proxied_broker(
    seed: int = 0, *, own_process: bool = False
) -> Iterator[tuple[LocalBroker, FaultProxy]]:
    """A fresh broker (:func:`proxied_local_broker`) behind a fresh :func:`fault_proxy`;
    clients bootstrap at the proxy. The test fixtures share one broker instead."""
    broker = proxied_local_broker()
    try:
        with fault_proxy(broker, seed, own_process=own_process) as proxy:
            yield broker, proxy
    finally:
        broker.stop()


def wait_until(predicate: object, timeout: float, interval: float = 0.05) -> bool:
    """Poll ``predicate()`` until true or ``timeout`` seconds pass; return its last value."""
    deadline = time.monotonic() + timeout
    while True:
        if predicate():  # type: ignore[operator]
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)
