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
from dataclasses import dataclass
from typing import ClassVar

from kheaders import _telemetry
from kheaders._codec.varint import varint_size
from kheaders._errors import ConfigurationError, HeaderLimitError
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


def plain_fit(
    items: list[tuple[str, object]] | tuple[tuple[str, object], ...],
    max_headers: int,
    max_key: int,
    max_value: int,
    max_total: int,
) -> bool:
    """True for the usual headers, accepted without a closer look: ``(key, value)`` pairs
    with a key already known valid (:data:`~kheaders._model.keys.KEY_SIZES`: one lookup gives
    its UTF-8 size) and a ``bytes`` value, all within the limits (the total by an upper bound
    of its encoded size).

    False says only "look closer": a key not seen yet, a header of another form, or one near
    a limit.
    """
    if len(items) > max_headers:
        return False
    total = _VARINT_MAX * (2 * len(items) + 1)
    sizes = KEY_SIZES
    try:
        for key, value in items:
            if type(value) is not bytes:
                return False
            klen = sizes.get(key)
            vlen = len(value)
            if klen is None or klen > max_key or vlen > max_value:
                return False
            total += klen + vlen
    except (TypeError, ValueError):  # an item that is not a pair, an unhashable key
        return False
    return total <= max_total


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
    kheaders._errors.HeaderLimitError: header 'id': value of 4 bytes exceeds max_value_bytes=3

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

    def __post_init__(self) -> None:
        for name in ("max_headers", "max_key_bytes", "max_value_bytes", "max_total_bytes"):
            value = getattr(self, name)
            if type(value) is not int or value < 1:
                raise ValueError(f"{name} must be an int >= 1, got {value!r}")

    def check(self, headers: Iterable[tuple[str, object]]) -> None:
        """Return when ``headers`` fit and every key follows the key rule; str values count
        as their UTF-8 bytes.

        Raises HeaderLimitError naming the limit, and the key and size at fault;
        InvalidNameError or TypeError for a key outside the rule (:mod:`kheaders._model.keys`).
        """
        items = headers if isinstance(headers, list | tuple) else list(headers)
        if plain_fit(
            items, self.max_headers, self.max_key_bytes, self.max_value_bytes, self.max_total_bytes
        ):
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
