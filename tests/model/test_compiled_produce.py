"""The compiled produce side is its Python: the same records, reports, errors and messages.

Every function of the compiled produce modules (``kheaders._client.{sending, reports,
records, chain}``) runs on the installed module (the extension where the build
compiled it) and on its ``.py`` loaded side by side (``tests.support.cores``), on hostile
input: header shapes and types librdkafka cannot take, keys a subclass hides, lists changed
after the memo vouched for them, limits that refuse, values confluent cannot send, failing
serializers and interceptors, a full queue, failed deliveries. A ``.py`` loaded so imports
its neighbours as installed (``pure("…sending").Sender`` builds the installed ``Reporter``):
each pinned function is compared in its own module's two builds.
"""

from __future__ import annotations

import gc
from collections import deque
from collections.abc import Callable
from typing import Any

from confluent_kafka import KafkaError, Message
from hypothesis import given, settings
from hypothesis import strategies as st

from kheaders import Header, HeaderLimits, Headers, ProducerRecord, RecordMetadata
from kheaders._client.chain import PRODUCER_HOOKS
from kheaders._model.keys import KEY_SIZES
from tests.support.cores import core, installed, pure

SENDING = "kheaders._client.sending"
REPORTS = "kheaders._client.reports"
RECORDS = "kheaders._client.records"
CHAIN = "kheaders._client.chain"
KINDS = ("installed", "pure")

PINNED: frozenset[str] = frozenset(
    {
        f"{SENDING}.writable",
        f"{SENDING}.closed",
        f"{SENDING}.OutgoingHeaders.__init__",
        f"{SENDING}.OutgoingHeaders.sent",
        f"{SENDING}.OutgoingHeaders.kept",
        f"{SENDING}.OutgoingHeaders.forget",
        f"{SENDING}.FieldSerializer.__init__",
        f"{SENDING}.FieldSerializer.__call__",
        f"{SENDING}.handing",
        f"{SENDING}._Keywords.__init__",
        f"{SENDING}._Keywords.__call__",
        f"{SENDING}.unsendable",
        f"{SENDING}.instrumented",
        f"{SENDING}._injecting",
        f"{SENDING}.leave_to_instrumentation",
        f"{SENDING}.Sender.__init__",
        f"{SENDING}.Sender.send_record",
        f"{SENDING}.Sender._as_record",
        f"{SENDING}.Sender._through",
        f"{SENDING}.Sender._checked",
        f"{SENDING}.Sender._refused",
        f"{SENDING}._held",
        f"{REPORTS}.read_only",
        f"{REPORTS}.metadata_of",
        f"{REPORTS}.Carrier.__call__",
        f"{REPORTS}.Reporter.__init__",
        f"{REPORTS}.Reporter.reported",
        f"{REPORTS}.Reporter.report",
        f"{REPORTS}.Report.__init__",
        f"{REPORTS}.Report.__call__",
        f"{REPORTS}.JavaReport.__call__",
        f"{RECORDS}.ProducerRecord.__init__",
        f"{RECORDS}.RecordMetadata.__init__",
        f"{CHAIN}.OnSend.on_send",
        f"{CHAIN}.OnAcknowledgement.on_acknowledgement",
        f"{CHAIN}.OnConsume.on_consume",
        f"{CHAIN}.OnCommit.on_commit",
        f"{CHAIN}.Configurable.configure",
        f"{CHAIN}.Closeable.close",
        f"{CHAIN}._name",
        f"{CHAIN}.implements",
        f"{CHAIN}._check_interceptor",
        f"{CHAIN}.InterceptorChain.__init__",
        f"{CHAIN}.InterceptorChain.__bool__",
        f"{CHAIN}.InterceptorChain._failed",
        f"{CHAIN}.InterceptorChain.send",
        f"{CHAIN}.InterceptorChain.acknowledge",
        f"{CHAIN}.InterceptorChain.consume",
        f"{CHAIN}.InterceptorChain.commit",
        f"{CHAIN}.InterceptorChain.close",
        # the classes: made and called by the properties below on both cores; the runtime
        # protocols also by test_protocol_checks_agree
        f"{SENDING}.OutgoingHeaders",
        f"{SENDING}.FieldSerializer",
        f"{SENDING}._Keywords",
        f"{SENDING}.Sender",
        f"{REPORTS}.Carrier",
        f"{REPORTS}.Reporter",
        f"{REPORTS}.Report",
        f"{REPORTS}.JavaReport",
        f"{RECORDS}.ProducerRecord",
        f"{RECORDS}.RecordMetadata",
        f"{CHAIN}.InterceptorChain",
        f"{CHAIN}.OnSend",
        f"{CHAIN}.OnAcknowledgement",
        f"{CHAIN}.OnConsume",
        f"{CHAIN}.OnCommit",
        f"{CHAIN}.Configurable",
        f"{CHAIN}.Closeable",
    }
)
"""The functions and methods of the compiled produce modules the properties below compare."""


def _each_core(run: Callable[[str], Any]) -> list[Any]:
    """``run(kind)`` for both cores, each from the same known keys: the first run's checks
    make new keys known (``KEY_SIZES``), which lets the second one's through unchecked."""
    known = dict(KEY_SIZES)
    got = []
    for kind in KINDS:
        KEY_SIZES.clear()
        KEY_SIZES.update(known)
        got.append(run(kind))
    return got


def _outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return ("ok", call())
    except Exception as exc:
        return (type(exc).__name__, str(exc))


def _shown(headers: Any) -> Any:
    """Headers as comparable data: container type, read-only flag, each pair's types and
    contents (a ``str`` subclass key or a ``bytearray`` value shows as such)."""
    if headers is None or isinstance(headers, int | str | bytes):
        return headers
    flag = headers.read_only if type(headers) is Headers else None
    pairs: list[Any] = []
    for pair in list.__iter__(headers) if isinstance(headers, list) else headers:
        if isinstance(pair, tuple) and len(pair) == 2:
            k, v = pair
            value = bytes(v) if isinstance(v, bytes | bytearray | memoryview) else v
            pairs.append((type(pair).__name__, type(k).__name__, str(k), type(v).__name__, value))
        else:
            pairs.append(repr(pair))
    return (type(headers).__name__, flag, pairs)


# -- hostile inputs -------------------------------------------------------------------------


class Key(str):
    """A ``str`` subclass key: librdkafka would send ``str()`` of it."""

    def __str__(self) -> str:
        return "other"


_keys = st.one_of(
    st.sampled_from(["content-type", "client.id", "a", "", "x\x00y", "k\udcff", "é" * 5]),
    st.text(max_size=6),
    st.builds(Key, st.sampled_from(["a", "content-type"])),
    st.integers(-2, 2),
    st.none(),
)
_values = st.one_of(
    st.binary(max_size=12),
    st.text(max_size=6),
    st.sampled_from(["\udcff", b"x" * 50]),
    st.builds(bytearray, st.binary(max_size=4)),
    st.none(),
    st.integers(0, 3),
)
_pair = st.one_of(
    st.tuples(_keys, _values),
    st.builds(Header, st.sampled_from(["a", "b"]), st.binary(max_size=4)),
    st.lists(_values, max_size=3),  # a list where a pair goes
    st.tuples(_keys),  # a 1-tuple
    st.just("ab"),
)
_pairs = st.lists(_pair, max_size=4)
_headers_spec = st.one_of(
    st.none(),
    st.tuples(st.just("list"), _pairs),
    st.tuples(st.just("reused"), st.just(None)),  # the one list every record of a run shares
    st.tuples(st.just("reused+bad"), _pair),  # that list, changed after it passed
    st.tuples(st.sampled_from(["dict", "tuple", "Headers", "closed"]), _pairs),
    st.sampled_from([("odd", 7), ("odd", b"ab"), ("odd", "ab")]),
)
_limits = st.sampled_from(
    [None, "default", HeaderLimits(max_headers=2, max_key_bytes=8, max_value_bytes=8)]
)
_data = st.one_of(st.binary(max_size=4), st.text(max_size=3), st.none(), st.integers(0, 2))
_op = st.tuples(
    st.sampled_from(["produce", "produce", "carry", "send"]),
    st.sampled_from(["t", "full", "refuse"]),  # "full": BufferError, "refuse": KafkaException
    _data,  # value
    _data,  # key
    st.integers(-1, 2),  # partition
    st.booleans(),  # a delivery callback
    st.integers(0, 2),  # timestamp
    _headers_spec,
)
_REUSED = [("content-type", b"application/json"), ("client.id", b"c")]


def _build_headers(spec: Any, reused: list[Any]) -> Any:
    """A fresh object for each run (Headers get closed by the one before)."""
    if spec is None:
        return None
    kind, arg = spec
    if kind == "list":
        return list(arg)
    if kind == "reused":
        return reused
    if kind == "reused+bad":
        reused.append(arg)
        return reused
    if kind == "dict":
        return {p[0]: p[1] for p in arg if isinstance(p, tuple) and len(p) == 2}
    if kind == "tuple":
        return tuple(arg)
    if kind in ("Headers", "closed"):
        try:
            headers = Headers([p for p in arg if isinstance(p, tuple) and len(p) == 2])
        except (TypeError, ValueError):
            headers = Headers()
        return headers.close() if kind == "closed" else headers
    return arg


class Raw:
    """librdkafka's stand-in: takes what confluent's ``produce`` takes (checking types as it
    does), queues the reports; ``serve`` delivers them, every third one failed."""

    def __init__(self) -> None:
        self.log: list[Any] = []
        self.queue: list[tuple[Any, str, Any, Any]] = []

    def produce(
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        partition: int = -1,
        callback: Any = None,
        on_delivery: Any = None,
        timestamp: int = 0,
        headers: Any = None,
    ) -> None:
        for data in (value, key):
            if data is not None and not isinstance(data, bytes | str):
                raise TypeError("expected bytes or str")
        if headers is not None:
            for pair in list.__iter__(headers):
                if type(pair) not in (tuple, Header) or len(pair) != 2:
                    raise TypeError("headers must be (str, bytes) tuples")
                if not isinstance(pair[0], str) or not isinstance(pair[1], bytes | str | None):
                    raise TypeError("header key must be str, value bytes, str or None")
        if topic == "full":
            raise BufferError("Local: Queue full")
        if topic == "refuse":
            raise ValueError("refused")
        self.log.append(("produced", topic, value, key, partition, timestamp, _shown(headers)))
        cb = callback or on_delivery
        if cb is not None:
            self.queue.append((cb, topic, key, value))

    def serve(self) -> None:
        queue, self.queue = self.queue, []
        for i, (cb, topic, key, value) in enumerate(queue):
            err = KafkaError(KafkaError._MSG_TIMED_OUT) if i % 3 == 2 else None
            msg = Message(topic=topic, partition=0, offset=i, key=key, value=value)
            cb(err, msg)


class Acks:
    """An interceptor that acknowledges: what each acknowledgement showed."""

    def __init__(self, log: list[Any]) -> None:
        self.log = log

    def on_acknowledgement(self, md: RecordMetadata, error: Any, headers: Headers) -> None:
        err = None if error is None else (type(error).__name__, str(error))
        fields = (md.topic, md.partition, md.offset, md.serialized_value_size)
        self.log.append(("ack", fields, err, _shown(headers)))


class Sends(Acks):
    """An interceptor that sees each record: stamps it; fails on some values."""

    def on_send(self, record: ProducerRecord) -> Any:
        if record.value == b"":
            raise RuntimeError("on_send failed")
        if record.value == "":
            return None  # not a record: a failure the chain logs and skips
        record.headers.add("stamp", b"1")
        return record


def _value_ser(topic: str, headers: Headers, value: Any) -> Any:
    if value == 2:
        raise ValueError("cannot serialize 2")
    return value


def _run(kind: str, path_kind: str, limits: Any, ops: list[Any], parking: bool) -> list[Any]:
    """The ops on a sender of core ``kind``; every outcome, then every report, in order."""
    sending = core(kind, SENDING)
    reports = core(kind, REPORTS)
    chains = core(kind, CHAIN)
    raw = Raw()
    log = raw.log
    interceptors: list[object] = []
    if path_kind == "acking":
        interceptors = [Acks(log)]
    elif path_kind == "intercepted":
        interceptors = [Sends(log)]
    chain = chains.InterceptorChain(interceptors, hooks=PRODUCER_HOOKS)
    parked: deque[Any] | None = deque() if parking else None
    serializer = _value_ser if path_kind == "intercepted" else None
    sender = sending.Sender(
        chain,
        HeaderLimits() if limits == "default" else limits,
        raw.produce,
        serializers=(None, serializer),
        parked=parked,
    )
    reporter = sender.reporter
    reused = list(_REUSED)

    def callback(err: Any, msg: Any) -> None:
        log.append(("cb", None if err is None else err.code(), msg.value(), _shown(msg.headers())))

    def java(md: RecordMetadata, err: Any) -> None:
        log.append(("java", md.topic, md.offset, None if err is None else err.code()))

    class Carrier:
        __slots__ = ("sent",)
        sent: Any

        def __call__(self, err: Any, msg: Any) -> None:
            log.append(("carrier", None if err is None else err.code(), _shown(self.sent)))

    for op, topic, value, key, partition, with_cb, timestamp, spec in ops:
        headers = _build_headers(spec, reused)
        cb = callback if with_cb else None
        at = {"partition": partition, "timestamp": timestamp}
        if op == "produce":

            def call() -> None:
                report = reporter.report(cb, headers)  # noqa: B023
                sender.send(topic, value, key, headers, report, **at)  # noqa: B023
        elif op == "carry":
            call = lambda: sender.send(topic, value, key, headers, Carrier(), **at)  # noqa: E731,B023
        else:

            def call() -> None:
                record = ProducerRecord(topic, value, key, headers, partition, timestamp)  # noqa: B023
                report = (
                    reports.JavaReport(reporter, java)
                    if with_cb  # noqa: B023
                    else reporter.report(None, record.headers)
                )
                sender.send_record(record, report)

        log.append(_outcome(call))
        log.append(("headers after", _shown(headers)))
    raw.serve()
    log.append(("parked", [h[0] for h in parked or ()], dict(chain.errors)))
    return log


@settings(max_examples=120, deadline=None)
@given(
    st.sampled_from(["plain", "acking", "intercepted"]),
    _limits,
    st.lists(_op, max_size=6),
    st.booleans(),
)
def test_every_produce_path_agrees(
    path_kind: str, limits: Any, ops: list[Any], parking: bool
) -> None:
    installed_run, pure_run = _each_core(lambda kind: _run(kind, path_kind, limits, ops, parking))
    assert installed_run == pure_run


# -- the parts, one by one ------------------------------------------------------------------


@settings(max_examples=150)
@given(_headers_spec, _limits)
def test_outgoing_headers_agree(spec: Any, limits: Any) -> None:
    limits = HeaderLimits() if limits == "default" else limits

    def run(kind: str) -> list[Any]:
        module = core(kind, SENDING)
        reused = list(_REUSED)
        gate = module.OutgoingHeaders(limits)
        results = []
        for _ in range(2):  # the second time, the memo may vouch for it
            headers = _build_headers(spec, reused)
            sent = _outcome(lambda: gate.sent(headers))  # noqa: B023
            kept = gate.kept(sent[1]) if sent[0] == "ok" else None
            results += [_shown(sent[1]) if sent[0] == "ok" else sent, _shown(kept)]
            gate.forget()
        headers = _build_headers(spec, reused)
        results.append(_outcome(lambda: _shown(module.writable(headers))))
        fresh = _build_headers(spec, [])
        closed = _outcome(lambda: _shown(module.closed(module.writable(fresh), limits)))
        results.append(closed)
        return results

    got = _each_core(run)
    assert got[0] == got[1]


_timestamps = st.sampled_from([(0, 0), (1, 1700000000000), (2, 5)])


@settings(max_examples=100)
@given(
    st.text(max_size=4),
    st.none() | st.integers(-1, 3),
    st.none() | st.integers(-1001, 10),
    st.none() | st.binary(max_size=4),
    st.none() | st.binary(max_size=4),
    _timestamps,
    st.lists(
        st.tuples(st.text("abc-.", min_size=1, max_size=3), st.binary(max_size=3)), max_size=3
    ),
)
def test_delivery_reports_agree(
    topic: str,
    partition: int | None,
    offset: int | None,
    key: bytes | None,
    value: bytes | None,
    timestamp: tuple[int, int],
    pairs: list[tuple[str, bytes]],
) -> None:
    def message() -> Any:
        msg: Any = Message(topic=topic, key=key, value=value, timestamp=timestamp)
        if partition is not None:
            msg = Message(
                topic=topic, partition=partition, key=key, value=value, timestamp=timestamp
            )
        if offset is not None:
            msg = Message(
                topic=topic, partition=partition or 0, offset=offset, key=key, value=value,
                timestamp=timestamp,
            )  # fmt: skip
        return msg

    got = []
    for kind in KINDS:
        module = core(kind, REPORTS)
        seen: list[Any] = []

        def cb(err: Any, msg: Any) -> None:
            seen.append((err, _shown(msg.headers())))  # noqa: B023

        def ack(md: RecordMetadata, err: Any, headers: Headers) -> None:
            seen.append((md, md.latency, err, _shown(headers)))  # noqa: B023

        def java(md: RecordMetadata, err: Any) -> None:
            seen.append(("java", md, err))  # noqa: B023

        kept = tuple(pairs)
        results: list[Any] = [module.metadata_of(message())]
        results.append(_shown(module.read_only(kept)))
        results.append(_shown(module.read_only(Headers(pairs).close())))
        for acks in (None, ack):
            reporter = module.Reporter(acks, share=True)
            results.append(reporter.report(None, None) is None)
            shared = reporter.report(cb, None)
            results.append(shared is reporter.report(cb, None))
            results.append(shared is reporter.report(cb, []))
            shared(None, message())
            own = reporter.report(cb, [])
            own.sent = kept
            own("error", message())
            unhashable = _outcome(lambda: reporter.report([], None))  # noqa: B023
            results.append((unhashable[0], callable(unhashable[1])))
            results.append(reporter.reported(kept, None, message()))
            report = module.Report(reporter, None)
            report.sent = Headers(pairs).close()
            report("e", message())
            javas = module.JavaReport(reporter, java)
            javas.sent = kept
            javas(None, message())
        results.append(module.Carrier.__call__(None, None, message()))
        got.append((results, seen))
    assert got[0] == got[1]


def test_reports_release_a_callback_once_its_records_are_reported() -> None:
    for kind in KINDS:
        module = core(kind, REPORTS)
        reporter = module.Reporter(None, share=True)

        class Callback:
            def __call__(self, err: Any, msg: Any) -> None:
                pass

        cb = Callback()
        first = reporter.report(cb, None)
        assert reporter.report(cb, None) is first
        del first
        gc.collect()
        assert reporter._shared == {}, kind  # the weak reference's callback forgot it
        assert reporter.report(cb, None) is not None


# -- the chain ------------------------------------------------------------------------------


class Good:
    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        record.headers.add("good", b"1")
        return record

    def on_acknowledgement(self, md: Any, err: Any, headers: Any) -> None:
        pass

    def on_consume(self, messages: list[Any]) -> list[Any]:
        return [*messages, "good"]

    def on_commit(self, offsets: list[Any]) -> None:
        pass

    def close(self) -> None:
        pass


class Bad:
    def on_send(self, record: ProducerRecord) -> Any:
        return "not a record"

    def on_acknowledgement(self, md: Any, err: Any, headers: Any) -> None:
        raise RuntimeError("ack failed")

    def on_consume(self, messages: list[Any]) -> Any:
        return ()

    def on_commit(self, offsets: list[Any]) -> None:
        raise KeyError("commit failed")

    def close(self) -> None:
        raise OSError("close failed")


class Misspelt:
    def on_sned(self, record: Any) -> Any:
        return record


_INTERCEPTORS = (Good(), Bad(), Misspelt(), Good, object())


@settings(max_examples=100)
@given(st.lists(st.sampled_from(range(len(_INTERCEPTORS))), max_size=4), st.booleans())
def test_interceptor_chains_agree(chosen: list[int], strict: bool) -> None:
    interceptors = [_INTERCEPTORS[i] for i in chosen]
    got: list[Any] = []
    for kind in KINDS:
        module = core(kind, CHAIN)
        results: list[Any] = [[module._name(i) for i in interceptors]]
        results.append([module.implements(i, module.PRODUCER_HOOKS) for i in interceptors])
        check = module._check_interceptor
        results.append([_outcome(lambda i=i, c=check: c(i, ("on_send",))) for i in interceptors])  # type: ignore[misc]
        built = _outcome(lambda: module.InterceptorChain(interceptors, strict=strict))  # noqa: B023
        if built[0] != "ok":
            got.append((results, built))
            continue
        chain = built[1]
        record = ProducerRecord("t", b"v", None, [("a", b"1")])
        sent = _outcome(lambda: chain.send(record))  # noqa: B023
        results.append(sent if sent[0] != "ok" else _shown(sent[1].headers))
        md = RecordMetadata("t", 0, 1)
        results.append(_outcome(lambda: chain.acknowledge(md, None, Headers())))  # noqa: B023
        batch = [Message(topic="t")]
        results.append(_outcome(lambda: [m is batch[0] for m in chain.consume(batch)]))  # noqa: B023
        results.append(_outcome(lambda: chain.commit([])))  # noqa: B023
        results.append(_outcome(chain.close))
        results.append((bool(chain), chain.errors, len(chain.on_send), len(chain.on_consume)))
        results.append(
            [
                module.OnSend.on_send(None, record),
                module.OnAcknowledgement.on_acknowledgement(None, md, None, Headers()),
                module.OnConsume.on_consume(None, []),
                module.OnCommit.on_commit(None, []),
                module.Configurable.configure(None, {}),
                module.Closeable.close(None),
            ]
        )
        got.append((results, None))
    assert repr(got[0]) == repr(got[1])


@settings(max_examples=100)
@given(
    st.one_of(
        st.none(),
        st.dictionaries(st.text(max_size=3), _values, max_size=3),
        _pairs,
        st.sampled_from([7, b"ab", "ab"]),
    )
)
def test_producer_records_agree(headers: Any) -> None:
    a = _outcome(lambda: _shown(installed(RECORDS).ProducerRecord("t", headers=headers).headers))
    b = _outcome(lambda: _shown(pure(RECORDS).ProducerRecord("t", headers=headers).headers))
    assert a == b


@given(
    st.text(max_size=4),
    st.lists(st.one_of(st.none(), st.integers(-2, 10**6)), max_size=5),
    st.none() | st.floats(0, 10),
)
def test_record_metadata_agrees(topic: str, fields: list[Any], latency: float | None) -> None:
    """Built by position and by keyword alike, frozen, equal ignoring ``latency``."""
    got = []
    for kind in KINDS:
        cls = core(kind, RECORDS).RecordMetadata
        md = cls(topic, *fields, latency=latency)
        other = cls(topic, *fields)
        frozen = _outcome(lambda: setattr(md, "offset", 7))  # noqa: B023
        got.append((repr(md), md == other, hash(md) == hash(other), frozen[0]))
    assert got[0] == got[1]
    assert got[0][1:] == (True, True, "FrozenInstanceError")


@given(st.sampled_from(["key", "value"]), st.text(max_size=5), st.text(max_size=5))
def test_serialization_errors_agree(field: str, topic: str, message: str) -> None:
    def fails(topic: str, headers: Any, data: Any) -> Any:
        raise ValueError(message)

    def keyed(topic: str, headers: Any, data: Any, *, context: Any = None) -> Any:
        return (context.topic, context.field, context.key, data)

    got = []
    for kind in KINDS:
        module = core(kind, SENDING)
        error = _outcome(lambda: module.FieldSerializer(field, fails)(topic, Headers(), b"k", 1))  # noqa: B023
        fine = module.FieldSerializer(field, keyed)(topic, Headers(), b"k", 1)
        got.append((error, fine))
    assert got[0] == got[1]
    assert got[0][0][0] == "SerializationError"
    assert got[0][1] == (topic, field, b"k", 1)


class _Calls:
    """A ``produce`` that is not confluent's: records how it was called."""

    def __init__(self) -> None:
        self.calls: list[Any] = []

    def produce(self, *args: Any, **kwargs: Any) -> None:
        self.calls.append((args, kwargs))


_OTEL = "opentelemetry.instrumentation.confluent_kafka"


def _traced(name: str, wrapped: bool) -> Any:
    """An object of a class named ``name`` that OpenTelemetry's module seems to define."""
    produce: Any = lambda self, *a, **k: None  # noqa: E731
    if wrapped:
        produce.__wrapped__ = produce
    return type(name, (), {"__module__": _OTEL, "produce": produce})()


@given(
    st.sampled_from(["AutoInstrumentedProducer", "ProxiedProducer", None]),
    st.booleans(),
    st.lists(st.sampled_from(["traceparent", "tracestate", "other"]), max_size=4),
    st.sets(st.sampled_from(["traceparent", "tracestate"])),
)
def test_handing_and_the_instrumentation_beneath_agree(
    name: str | None, wrapped: bool, fields: list[str], kept: set[str]
) -> None:
    got = []
    for kind in KINDS:
        module = core(kind, SENDING)
        client = object() if name is None else _traced(name, wrapped)
        headers = Headers([(f, b"1") for f in fields])
        results: list[Any] = [module.instrumented(client), module._injecting(client)]
        module.leave_to_instrumentation(client, headers, tuple(sorted(kept)))
        results.append(_shown(headers))
        calls = _Calls()
        hand = module.handing(calls, False)
        hand("t", b"v", b"k", -1, None, print, 0, None)
        hand("t", b"v", None, 1, print, None, 5, [("a", b"1")])
        results.append(calls.calls)
        results.append(module.handing(calls, True) == calls.produce)
        handed = ("t", 5, object(), -1, None, None, 0, None)
        results.append(str(module.unsendable(handed, TypeError("x"))))
        results.append(str(module.unsendable(("t", b"v", None), TypeError("x"))))
        got.append(results)
    assert got[0] == got[1]


_HOOKS = ("on_send", "on_acknowledgement", "on_consume", "on_commit", "configure", "close")


@given(st.sets(st.sampled_from(_HOOKS)))
def test_protocol_checks_agree(hooks: set[str]) -> None:
    """An interceptor is sorted into the chain's hooks by isinstance of the runtime
    protocols: both cores must sort any object with any subset of the hooks alike."""
    cls = type("Interceptor", (), {name: lambda self, *a: None for name in hooks})
    protocols = (
        "OnSend",
        "OnAcknowledgement",
        "OnConsume",
        "OnCommit",
        "Configurable",
        "Closeable",
    )
    a = [isinstance(cls(), getattr(installed(CHAIN), p)) for p in protocols]
    b = [isinstance(cls(), getattr(pure(CHAIN), p)) for p in protocols]
    assert a == b
    assert a == [h in hooks for h in _HOOKS]
