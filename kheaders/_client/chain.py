"""Interceptor chains: the hook contracts, and the container that runs them with Java's policy.

An interceptor is any object with one or more of the optional hook methods below (one small
protocol per hook, as franz-go does); ``configure(config)`` and ``close()`` are optional
lifecycle methods. The chain sorts interceptors into one tuple per hook once, at construction,
so a record only meets the interceptors that implement its hook, and an empty chain costs
nothing.

Failure policy (Kafka's ``ProducerInterceptors``/``ConsumerInterceptors``): an interceptor
that raises is logged (interceptor, hook, topic, error), counted in :attr:`InterceptorChain.errors`
and skipped; the chain goes on with the last good record (or batch). An ``on_send`` that
returns ``None`` or something that is not a :class:`ProducerRecord` (an ``on_consume`` that
returns something that is not a list) is a failure too. A record is never lost. With
``strict=True`` the first error propagates instead.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from kheaders import _telemetry
from kheaders._client.records import ProducerRecord, RecordMetadata
from kheaders._log import get_logger
from kheaders._model.headers import Headers

if TYPE_CHECKING:
    from confluent_kafka import KafkaError, Message, TopicPartition

_log = get_logger("kheaders.interceptors")


@runtime_checkable
class OnSend(Protocol):
    """Producer hook: sees (and may replace) each record before serialization.

    Runs on the caller's thread; return the record to send (the same one, changed, or a new
    one). Raising, or returning anything but a ProducerRecord, skips this interceptor.
    """

    def on_send(self, record: ProducerRecord) -> ProducerRecord: ...


@runtime_checkable
class OnAcknowledgement(Protocol):
    """Producer hook: called exactly once per record, on delivery or on failure.

    ``error`` is ``None`` on success, librdkafka's ``KafkaError`` when delivery failed, or the
    exception that made ``produce`` itself fail (then ``metadata`` has what was known so far).
    ``headers`` are the record's (read-only once sent) headers.
    """

    def on_acknowledgement(
        self, metadata: RecordMetadata, error: KafkaError | Exception | None, headers: Headers
    ) -> None: ...


@runtime_checkable
class OnConsume(Protocol):
    """Consumer hook: sees each non-empty batch before the application; returns the batch."""

    def on_consume(self, messages: list[Message]) -> list[Message]: ...


@runtime_checkable
class OnCommit(Protocol):
    """Consumer hook: called after each successful commit (sync, async or automatic)."""

    def on_commit(self, offsets: list[TopicPartition]) -> None: ...


@runtime_checkable
class Configurable(Protocol):
    """Lifecycle: interceptors named in a client config get the full config once, when built."""

    def configure(self, config: Mapping[str, object]) -> None: ...


@runtime_checkable
class Closeable(Protocol):
    """Lifecycle: called once when the client closes."""

    def close(self) -> None: ...


PRODUCER_HOOKS: tuple[str, ...] = ("on_send", "on_acknowledgement")
CONSUMER_HOOKS: tuple[str, ...] = ("on_consume", "on_commit")
ALL_HOOKS: tuple[str, ...] = PRODUCER_HOOKS + CONSUMER_HOOKS
_LIFECYCLE = frozenset({"configure", "close"})


def _name(interceptor: object) -> str:
    return type(interceptor).__name__


def implements(interceptor: object, hooks: Iterable[str]) -> bool:
    """Whether ``interceptor`` has one of ``hooks``: a method, or a property that may be off
    for now (metrics without a MeterProvider: the chain then leaves it out).
    """
    kind = type(interceptor)
    return any(
        callable(getattr(interceptor, h, None)) or isinstance(getattr(kind, h, None), property)
        for h in hooks
    )


def _check_interceptor(interceptor: object, hooks: Sequence[str]) -> None:
    """Reject a class (not an instance) or an object that implements none of ``hooks``.

    A hook may be a property that raises AttributeError while the interceptor has nothing to
    do (metrics without a MeterProvider): the chain then leaves it out, at no cost per record.

    Raises TypeError naming the object and, for a likely typo, the odd method names.
    """
    if isinstance(interceptor, type):
        raise TypeError(
            f"interceptor {interceptor.__qualname__} is a class: pass an instance"
            f" ({interceptor.__qualname__}()), or name the class in 'interceptor.classes'"
        )
    if implements(interceptor, hooks):
        return
    odd = sorted(
        a
        for a in dir(interceptor)
        if a.startswith("on_") and a not in ALL_HOOKS and a not in _LIFECYCLE
    )
    hint = f"; it has {', '.join(odd)} (misspelled?)" if odd else ""
    raise TypeError(
        f"interceptor {interceptor!r} ({_name(interceptor)}) implements none of the hooks"
        f" {', '.join(hooks)}{hint}"
    )


class InterceptorChain:
    """Runs interceptors' hooks in order with Kafka's failure policy (see the module doc).

    >>> class Stamp:
    ...     def on_send(self, record):
    ...         record.headers.add("stamp", b"1")
    ...         return record
    >>> chain = InterceptorChain([Stamp()])
    >>> chain.send(ProducerRecord("t", b"v")).headers.last_value("stamp")
    b'1'

    Raises TypeError at construction for an object that implements none of ``hooks``.
    """

    __slots__ = (
        "_names",
        "_strict",
        "errors",
        "interceptors",
        "on_acknowledgement",
        "on_commit",
        "on_consume",
        "on_send",
    )

    def __init__(
        self,
        interceptors: Iterable[object] = (),
        *,
        strict: bool = False,
        hooks: Sequence[str] = ALL_HOOKS,
    ) -> None:
        self.interceptors: tuple[object, ...] = tuple(interceptors)
        self._strict = strict
        names: dict[int, str] = {}
        seen: dict[str, int] = {}
        for i in self.interceptors:
            _check_interceptor(i, hooks)
            base = _name(i)
            seen[base] = seen.get(base, 0) + 1
            names[id(i)] = base if seen[base] == 1 else f"{base}#{seen[base]}"
        self._names = names
        self.errors: dict[str, int] = {n: 0 for n in names.values()}
        """Failures per interceptor name (class name; ``Name#2`` for a second instance)."""

        def pick(hook: str) -> tuple[tuple[str, Callable[..., object]], ...]:
            if hook not in hooks:
                return ()
            return tuple(
                (names[id(i)], getattr(i, hook))
                for i in self.interceptors
                if callable(getattr(i, hook, None))
            )

        self.on_send = pick("on_send")
        self.on_acknowledgement = pick("on_acknowledgement")
        self.on_consume = pick("on_consume")
        self.on_commit = pick("on_commit")

    def __bool__(self) -> bool:
        return bool(self.interceptors)

    def _failed(self, name: str, hook: str, topic: str | None, exc: BaseException) -> None:
        self.errors[name] += 1
        _telemetry.interceptor_failed(name, hook)
        _log.warning(
            "interceptor failed, skipped",
            interceptor=name,
            hook=hook,
            topic=topic,
            error=f"{type(exc).__name__}: {exc}",
            # the traceback as text, not exc_info: a dev renderer would print the frames'
            # locals, which hold the record's header values
            exception="".join(traceback.format_exception(exc)),
        )

    def send(self, record: ProducerRecord) -> ProducerRecord:
        """Run every ``on_send`` in order; return the last good record (never ``None``)."""
        for name, hook in self.on_send:
            try:
                result = hook(record)
                if type(result) is not ProducerRecord and not isinstance(result, ProducerRecord):
                    raise TypeError(
                        f"on_send returned {type(result).__name__}, not a ProducerRecord"
                    )
            except Exception as exc:
                if self._strict:
                    raise
                self._failed(name, "on_send", record.topic, exc)
                continue
            record = result
        return record

    def acknowledge(
        self, metadata: RecordMetadata, error: KafkaError | Exception | None, headers: Headers
    ) -> None:
        """Run every ``on_acknowledgement``; a failing one does not stop the others."""
        for name, hook in self.on_acknowledgement:
            try:
                hook(metadata, error, headers)
            except Exception as exc:
                if self._strict:
                    raise
                self._failed(name, "on_acknowledgement", metadata.topic, exc)

    def consume(self, messages: list[Message]) -> list[Message]:
        """Run every ``on_consume`` in order; return the last good batch."""
        for name, hook in self.on_consume:
            try:
                result = hook(messages)
                if not isinstance(result, list):
                    raise TypeError(f"on_consume returned {type(result).__name__}, not a list")
            except Exception as exc:
                if self._strict:
                    raise
                topics = ",".join(sorted({m.topic() or "" for m in messages}))
                self._failed(name, "on_consume", topics, exc)
                continue
            messages = result
        return messages

    def commit(self, offsets: list[TopicPartition]) -> None:
        """Run every ``on_commit``; a failing one does not stop the others."""
        for name, hook in self.on_commit:
            try:
                hook(offsets)
            except Exception as exc:
                if self._strict:
                    raise
                topics = ",".join(sorted({tp.topic for tp in offsets}))
                self._failed(name, "on_commit", topics, exc)

    def close(self) -> None:
        """Close every interceptor (in order), even when some raise (those are logged).

        With ``strict=True``, raises the first exception a ``close()`` raised, after closing
        the rest.
        """
        first: Exception | None = None
        for i in self.interceptors:
            close = getattr(i, "close", None)
            if not callable(close):
                continue
            try:
                close()
            except Exception as exc:
                self._failed(self._names[id(i)], "close", None, exc)
                if first is None:
                    first = exc
        if first is not None and self._strict:
            raise first
