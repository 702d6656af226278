"""Header limits: a record's headers are checked before librdkafka sees them.

Defaults (generous for real headers, safe against runaway ones):

==================  =========  ==========================================================
``max_headers``     1000       a trace, a few ids and flags are 5 to 20 headers
``max_key_bytes``   1024       keys are names; real ones are under 100 bytes (UTF-8)
``max_value_bytes`` 1 MiB      one value may not exceed what the broker accepts at all
``max_total_bytes`` 1 MiB      the encoded header section (record-v2 layout, counts and
                               lengths included)
==================  =========  ==========================================================

Why 1 MiB: Kafka's broker ``message.max.bytes`` (and the topic's ``max.message.bytes``)
defaults to 1,048,588 bytes for a whole record batch, and librdkafka's ``message.max.bytes``
defaults to 1,000,000. Headers past 1 MiB can never be written to a default cluster; the
broker would reject them only after a network round trip, with an error that names no
header. Raise the limits together with the cluster's, or lower them to protect consumers.

Producer settings (strings or ints): ``kheaders.header.limits.max.headers``,
``kheaders.header.limits.max.key.bytes``, ``kheaders.header.limits.max.value.bytes``,
``kheaders.header.limits.max.total.bytes``; ``kheaders.header.limits.enabled=false``
turns the check off.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from kheaders import _telemetry
from kheaders._codec.varint import varint_size
from kheaders._errors import ConfigurationError, HeaderLimitError
from kheaders._model.header import Header
from kheaders._model.keys import KEY_SIZES, check_keys, key_size
from kheaders._settings import config_bool

MIB = 1 << 20
_VARINT_MAX = 5
"""The most bytes a (32-bit zigzag) varint length or count takes."""

CONFIG_PREFIX = "kheaders.header.limits."
_SETTINGS = {
    "max.headers": "max_headers",
    "max.key.bytes": "max_key_bytes",
    "max.value.bytes": "max_value_bytes",
    "max.total.bytes": "max_total_bytes",
}


def plain_fit(items: Sequence[tuple[object, object]], limits: HeaderLimits | None) -> bool:
    """True for the usual headers, accepted in one pass without a closer look: ``tuple``
    (or :class:`Header`) pairs of an exact ``str`` key already known valid
    (:data:`~kheaders._model.keys.KEY_SIZES`: one lookup gives its UTF-8 size) and an exact
    ``bytes`` value, within ``limits`` (when given; the total by an upper bound of its
    encoded size).

    Per pair it only sums the key and value sizes; one comparison then settles the usual
    case: the two sums within :attr:`HeaderLimits.plain_budget` (chosen so that they bound
    every limit at once: each key and value is at most its sum, the count at most the key
    bytes since keys are not empty). Headers over the budget get the exact comparisons.
    Exact types, because librdkafka reads what a subclass hides: it takes a key with
    ``str(key)`` (a ``(str, Enum)`` member's is ``"Cls.NAME"``, another subclass may return
    anything, even a string that crashes it) and a tuple subclass's items without its
    ``__iter__``.

    False says only "look closer": a key not seen yet, a header of another form or type
    (``None``, ``str`` values), a list that is no list of tuples, or one near a limit.
    """
    key_bytes = value_bytes = 0
    try:
        for pair in items:
            if type(pair) is not tuple and type(pair) is not Header:
                return False
            key, value = pair  # ValueError unless a pair (a list passed as a tuple)
            if type(key) is not str or type(value) is not bytes:
                return False
            key_bytes += KEY_SIZES[key]  # KeyError: not known valid yet
            value_bytes += len(value)
    except (KeyError, ValueError):
        return False
    if limits is None or key_bytes + value_bytes <= limits.plain_budget:
        return True
    return _within(items, key_bytes, value_bytes, limits)  # type: ignore[arg-type]


def _within(
    items: Sequence[tuple[str, bytes]], key_bytes: int, value_bytes: int, limits: HeaderLimits
) -> bool:
    """The exact comparisons for headers that passed :func:`plain_fit`'s pass but not its
    budget: the count, an upper bound of the total, then each key and value (a second pass
    only when a sum is over its per-header limit)."""
    count = len(items)
    if count > limits.max_headers:
        return False
    if key_bytes + value_bytes + _VARINT_MAX * (2 * count + 1) > limits.max_total_bytes:
        return False
    max_key, max_value = limits.max_key_bytes, limits.max_value_bytes
    if key_bytes <= max_key and value_bytes <= max_value:
        return True
    return all(KEY_SIZES[key] <= max_key and len(value) <= max_value for key, value in items)


def _refused(limit: str, message: str) -> HeaderLimitError:
    """The error for a record over ``limit``, counted in kheaders' own metrics."""
    _telemetry.record_refused(limit)
    return HeaderLimitError(message)


@dataclass(frozen=True, slots=True)
class HeaderLimits:
    """Limits on a record's headers: count, key size, value size and total encoded size.

    >>> HeaderLimits(max_headers=2).check([("a", b"1"), ("b", None)])
    >>> HeaderLimits(max_value_bytes=3).check([("id", b"1234")])
    Traceback (most recent call last):
    ...
    kheaders.HeaderLimitError: header 'id': value of 4 bytes exceeds max_value_bytes=3

    Raises ValueError at construction for a limit below 1.
    """

    config_keys: ClassVar[tuple[str, ...]] = tuple(
        CONFIG_PREFIX + s for s in (*_SETTINGS, "enabled")
    )
    """The client settings these limits are read from (see :meth:`from_config`)."""

    max_headers: int = 1000
    max_key_bytes: int = 1024
    max_value_bytes: int = MIB
    max_total_bytes: int = MIB
    plain_budget: int = field(init=False, repr=False, compare=False)
    """Key plus value bytes of a record's headers that fit every limit, whatever their
    number and split (:func:`plain_fit`'s single comparison): at most ``max_key_bytes``,
    ``max_value_bytes`` and ``max_headers`` (keys are not empty), and ``max_total_bytes``
    less the most that counts and lengths take with ``max_headers`` headers."""

    def __post_init__(self) -> None:
        for name in ("max_headers", "max_key_bytes", "max_value_bytes", "max_total_bytes"):
            value = getattr(self, name)
            if type(value) is not int or value < 1:
                raise ValueError(f"{name} must be an int >= 1, got {value!r}")
        framing = _VARINT_MAX * (2 * self.max_headers + 1)
        budget = min(
            self.max_key_bytes,
            self.max_value_bytes,
            self.max_headers,
            self.max_total_bytes - framing,
        )
        object.__setattr__(self, "plain_budget", budget)

    def check(self, headers: Iterable[tuple[str, object]]) -> None:
        """Return when ``headers`` fit and every key follows the key rule; str values count
        as their UTF-8 bytes.

        Raises HeaderLimitError naming the limit, and the key and size at fault;
        InvalidNameError or TypeError for a key outside the rule (:mod:`kheaders._model.keys`).
        """
        items = headers if isinstance(headers, list | tuple) else list(headers)
        if plain_fit(items, self):
            return
        count = len(items)
        max_key, max_value = self.max_key_bytes, self.max_value_bytes
        if count > self.max_headers:
            raise _refused(
                "max_headers",
                f"{count} headers exceed max_headers={self.max_headers}"
                f" (first key {items[0][0]!r})",
            )
        total = varint_size(count)
        for key, value in items:
            klen = key_size(key)  # the key rule first: TypeError / InvalidNameError
            if klen > max_key:
                shown = repr(key) if len(key) <= 64 else f"{key[:64]!r}..."
                raise _refused(
                    "max_key_bytes",
                    f"header {shown}: key of {klen} bytes exceeds max_key_bytes={max_key}",
                )
            if value is None:
                total += varint_size(klen) + klen + 1
                continue
            if type(value) is bytes:
                vlen = len(value)
            elif isinstance(value, str):
                vlen = len(value.encode("utf-8", "surrogatepass"))
            elif isinstance(value, bytearray | memoryview):
                vlen = memoryview(value).nbytes
            else:
                continue  # not a header value: the headers model reports it, not a limit
            if vlen > max_value:
                raise _refused(
                    "max_value_bytes",
                    f"header {key!r}: value of {vlen} bytes exceeds max_value_bytes={max_value}",
                )
            total += varint_size(klen) + klen + varint_size(vlen) + vlen
        if total > self.max_total_bytes:
            raise _refused(
                "max_total_bytes",
                f"headers take {total} bytes encoded, exceeding"
                f" max_total_bytes={self.max_total_bytes} ({count} headers)",
            )

    @classmethod
    def from_config(cls, config: Mapping[str, object]) -> HeaderLimits | None:
        """Limits from ``kheaders.header.limits.*`` settings (defaults for the rest).

        ``None`` when ``kheaders.header.limits.enabled`` is false.
        Raises ConfigurationError naming the setting at fault.
        """
        if not config_bool(config.get(CONFIG_PREFIX + "enabled", True), CONFIG_PREFIX + "enabled"):
            return None
        values: dict[str, int] = {}
        for key, value in config.items():
            if not key.startswith(CONFIG_PREFIX) or key == CONFIG_PREFIX + "enabled":
                continue
            name = _SETTINGS.get(key[len(CONFIG_PREFIX) :])
            if name is None:
                known = ", ".join(cls.config_keys)
                raise ConfigurationError(f"unknown setting {key!r}; known: {known}")
            try:
                number = int(str(value))
            except ValueError:
                raise ConfigurationError(f"{key} must be an integer, got {value!r}") from None
            values[name] = number
        try:
            return cls(**values)
        except ValueError as exc:
            raise ConfigurationError(f"{CONFIG_PREFIX}*: {exc}") from exc


DEFAULT_LIMITS = HeaderLimits()
"""The limits every Producer applies unless configured otherwise."""


def check_sendable(items: Sequence[tuple[str, object]], limits: HeaderLimits | None) -> None:
    """The last check before headers go to librdkafka: the key rule, and ``limits`` if any.

    Every produce path (plain, interceptors, ``send``, wrapped, dead letter, state topics)
    calls this on the items it hands to librdkafka, whatever built them (``Headers`` decoded
    from bytes or wrapped from a ``Message`` were never checked). Known keys cost a lookup.

    Raises InvalidNameError/TypeError for a bad key, HeaderLimitError over a limit.
    """
    if limits is not None:
        limits.check(items)  # includes the key rule
    elif items:
        check_keys(items)
