"""A processor's arguments checked at construction: each refusal names the argument and what
was expected, so nothing surfaces later in ``run()`` or in a worker."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import confluent_kafka
from confluent_kafka import KafkaException

from kheaders._client.config import (
    INTERCEPTOR_CLASSES,
    KEY_DESERIALIZER,
    KEY_SERIALIZER,
    VALUE_DESERIALIZER,
    VALUE_SERIALIZER,
    DeclaredKeys,
    check_keys,
    librdkafka_config,
    load_dotted,
)
from kheaders._errors import ConfigurationError, kind_of
from kheaders._model.limits import HeaderLimits

_SENTINEL = "kheaders.processing.settings-checked"
"""A key no librdkafka knows, set last in a probe: confluent-kafka applies settings in order
and stops at the first it refuses, so reaching this one means every earlier one was taken,
and no client was built (no thread, no connection)."""


def number(name: str, value: Any, *, integer: bool = False, zero: bool = False) -> Any:
    """``value``; ConfigurationError unless it is a finite number (an int when ``integer``)
    above zero (or zero, when ``zero``); a bool is not a number here."""
    kinds: tuple[type, ...] = (int,) if integer else (int, float)
    ok = isinstance(value, kinds) and not isinstance(value, bool)
    if ok and not math.isfinite(value):
        ok = False
    if ok and not (value >= 0 if zero else value > 0):
        ok = False
    if not ok:
        what = "an int" if integer else "a number"
        bound = ">= 0" if zero else "> 0"
        raise ConfigurationError(f"{name}: expected {what} {bound}, got {kind_of(value)}")
    return value


def flag(name: str, value: Any) -> Any:
    """``value``; ConfigurationError unless it is True or False."""
    if not isinstance(value, bool):
        raise ConfigurationError(f"{name}: expected True or False, got {kind_of(value)}")
    return value


def exception_types(name: str, value: object) -> tuple[type[BaseException], ...]:
    """``value`` as a tuple of exception types (one type stands alone). Raises
    ConfigurationError naming ``name`` for anything else."""
    kinds = (value,) if isinstance(value, type) else value
    if not isinstance(kinds, list | tuple) or not all(
        isinstance(k, type) and issubclass(k, BaseException) for k in kinds
    ):
        raise ConfigurationError(
            f"{name}: expected a tuple of exception types, got {kind_of(value)}"
        )
    return tuple(kinds)


def callable_or_none(name: str, value: Any) -> Any:
    """``value``; ConfigurationError unless it is callable (or None)."""
    if value is not None and not callable(value):
        raise ConfigurationError(
            f"{name}: expected a function called with each record, got {kind_of(value)}"
        )
    return value


def topics_list(topics: object) -> None:
    """Raise ConfigurationError unless ``topics`` is a non-empty list of topic names."""
    if isinstance(topics, str | bytes) or not isinstance(topics, list | tuple) or not topics:
        raise ConfigurationError(
            f"topics: expected a non-empty list of topic names, got {kind_of(topics)}"
        )
    for topic in topics:
        if not isinstance(topic, str) or not topic:
            raise ConfigurationError(f"topics: each must be a topic name, got {kind_of(topic)}")


def routes(route_by: object, handlers: object) -> None:
    """Raise ConfigurationError for a ``route_by`` that is not a header name, or
    ``handlers`` that is not a mapping of route values to functions."""
    if route_by is not None and (not isinstance(route_by, str) or not route_by):
        raise ConfigurationError(f"route_by: expected a header name, got {kind_of(route_by)}")
    if handlers is None:
        return
    if not isinstance(handlers, Mapping):
        raise ConfigurationError(
            f"handlers: expected a dict of header value -> function, got {kind_of(handlers)}"
        )
    for value, handler in handlers.items():
        if not isinstance(value, str | bytes):
            raise ConfigurationError(
                f"handlers: each key is a header value (str or bytes), got {kind_of(value)}"
            )
        if not callable(handler):
            raise ConfigurationError(
                f"handlers[{value!r}]: expected a function, got {kind_of(handler)}"
            )


def mapping(name: str, value: Any, *, optional: bool = False) -> Any:
    """``value``; ConfigurationError unless it is a dict of settings (or None when
    ``optional``)."""
    if not isinstance(value, Mapping) and not (value is None and optional):
        # its type only: a settings string may hold a secret
        raise ConfigurationError(f"{name}: expected a dict of settings, got {type(value).__name__}")
    return value


def provider(name: str, value: Any, method: str) -> Any:
    """``value``; ConfigurationError unless it is None or has ``method`` (an OpenTelemetry
    tracer or meter provider)."""
    if value is not None and not callable(getattr(value, method, None)):
        raise ConfigurationError(
            f"{name}: expected an OpenTelemetry provider (with {method}()), got {kind_of(value)}"
        )
    return value


def librdkafka_settings(
    config: Mapping[str, object], setting: str, client: Callable[..., Any]
) -> None:
    """Refuse now what librdkafka would refuse when ``run()`` builds ``client``: an unknown
    (misspelt) setting or a value it cannot take, naming the setting (never its value).

    Keys kheaders or the ``interceptor.classes`` declare are left out (declared on the
    classes, read without building them).
    """
    specs = config.get(INTERCEPTOR_CLASSES)
    owners: list[object] = []
    if isinstance(specs, str):
        specs = [s.strip() for s in specs.split(",") if s.strip()]
    for spec in specs if isinstance(specs, list | tuple) else [specs] if specs else []:
        owners.append(load_dotted(spec, INTERCEPTOR_CLASSES) if isinstance(spec, str) else spec)
    if client is confluent_kafka.Consumer:  # kheaders' own keys, as the Consumer checks them
        mine = (INTERCEPTOR_CLASSES, KEY_DESERIALIZER, VALUE_DESERIALIZER)
        theirs = (KEY_SERIALIZER, VALUE_SERIALIZER, *HeaderLimits.config_keys)
        check_keys(
            config,
            DeclaredKeys.of([_Declares(mine), *owners]),
            dict.fromkeys(theirs, "producer"),
            "consumer",
        )
    probe = {**librdkafka_config(config, owners), _SENTINEL: "1"}
    try:
        made = client(probe)
    except KafkaException as exc:
        text = exc.args[0].str() if exc.args else str(exc)
        if _SENTINEL in text:
            return  # every setting before the sentinel was taken
        raise ConfigurationError(f"{setting}: {text}") from None
    except (TypeError, ValueError) as exc:  # confluent-kafka's own checks (a callback's type)
        raise ConfigurationError(f"{setting}: {exc}") from None
    # a confluent-kafka that took the sentinel: nothing is known about the rest
    close = getattr(made, "close", None)
    if callable(close):
        close()


class _Declares:
    __slots__ = ("config_keys",)

    def __init__(self, keys: tuple[str, ...]) -> None:
        self.config_keys = keys


def consumer_settings(config: Mapping[str, object]) -> None:
    """:func:`librdkafka_settings` for the processor's consumer."""
    librdkafka_settings(config, "config", confluent_kafka.Consumer)


def producer_settings(config: Mapping[str, object]) -> None:
    """:func:`librdkafka_settings` for the retry and dead-letter producer."""
    librdkafka_settings(config, "producer_config", confluent_kafka.Producer)
