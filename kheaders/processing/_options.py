"""The keyword options of the processor drivers, written once: their types (for checkers and
editors), their defaults per driver, and the check each gets at construction."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, TypedDict

from kheaders._errors import ConfigurationError, kind_of
from kheaders.deadletter import DeadLetter
from kheaders.deadletter._config import dead_letter_option
from kheaders.processing import _validate as _v
from kheaders.processing._redelivery import Redelivery
from kheaders.processing._retry import RetryTopics

if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import TracerProvider

    from kheaders.processing._core import HeadersFilter


class Options(TypedDict, total=False):
    """What every driver takes (see :class:`kheaders.processing.Processor` for each)."""

    dead_letter: DeadLetter | str | bool | None
    filter: HeadersFilter | None
    route_by: str | None
    handlers: Mapping[str | bytes, Callable[..., Any]] | None
    producer_config: Mapping[str, object] | None
    poll_timeout: float
    shutdown_timeout: float
    handle_signals: bool
    keep_timestamps: bool
    tracer_provider: TracerProvider | None
    meter_provider: MeterProvider | None


class GroupOptions(Options, total=False):
    """What the consumer-group drivers add: retry topics, and records read per poll."""

    retry: RetryTopics | None
    batch_size: int


class ProcessorOptions(GroupOptions, total=False):
    """The at-least-once drivers' options: they commit on a timer."""

    commit_interval: float


class ShareOptions(Options, total=False):
    """The share-group driver's: redelivery instead of retry topics, no offsets."""

    redelivery: Redelivery | None


COMMON: dict[str, object] = {
    "dead_letter": None,
    "filter": None,
    "route_by": None,
    "handlers": None,
    "producer_config": None,
    "poll_timeout": 0.5,
    "shutdown_timeout": 10.0,
    "handle_signals": True,
    "keep_timestamps": False,
    "tracer_provider": None,
    "meter_provider": None,
}
GROUP = {**COMMON, "retry": None, "batch_size": 500}
PROCESSOR = {**GROUP, "commit_interval": 1.0}
SHARE = {**COMMON, "dead_letter": True, "redelivery": None}


def _retry(name: str, retry: object) -> RetryTopics | None:
    if retry is None or isinstance(retry, RetryTopics):
        return retry
    hint = f": write retry=RetryTopics(delays={list(retry)!r})" if isinstance(retry, list) else ""
    raise ConfigurationError(
        f"{name}: expected RetryTopics(...) or None, got {kind_of(retry)}{hint}"
    )


def _redelivery(name: str, redelivery: object) -> Redelivery:
    if redelivery is None or isinstance(redelivery, Redelivery):
        return redelivery or Redelivery()
    raise ConfigurationError(f"{name}: expected Redelivery(...) or None, got {kind_of(redelivery)}")


_CHECKS: dict[str, Callable[[str, Any], object]] = {
    "dead_letter": lambda _name, value: dead_letter_option(value),
    "filter": _v.callable_or_none,
    "route_by": lambda _name, value: value,  # checked with handlers, below
    "handlers": lambda _name, value: value,
    "producer_config": partial(_v.mapping, optional=True),
    "poll_timeout": _v.number,
    "shutdown_timeout": _v.number,
    "commit_interval": _v.number,
    "batch_size": partial(_v.number, integer=True),
    "handle_signals": _v.flag,
    "keep_timestamps": _v.flag,
    "tracer_provider": partial(_v.provider, method="get_tracer"),
    "meter_provider": partial(_v.provider, method="get_meter"),
    "retry": _retry,
    "redelivery": _redelivery,
}


def checked(driver: str, given: Mapping[str, object], defaults: Mapping[str, object]) -> Any:
    """``given`` over ``defaults`` (the options ``driver`` takes), each checked and in the
    form the driver uses (``dead_letter=True`` is ``DeadLetter()``, ...).

    Raises ConfigurationError naming the option: one ``driver`` does not take (with the
    closest it does), or a value it cannot take.
    """
    for name in given:
        if name not in defaults:
            close = difflib.get_close_matches(name, list(defaults), n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise ConfigurationError(f"{name}: {driver} takes no such option{hint}")
    options = {name: _CHECKS[name](name, value) for name, value in {**defaults, **given}.items()}
    _v.routes(options["route_by"], options["handlers"])
    return options
