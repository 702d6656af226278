"""The deliberate differences between kheaders and confluent-kafka, each with its reason.

A check of the compatibility suite that plain confluent-kafka passes must pass through
kheaders in both modes, unless ``(check, flavour)`` is listed here. A listed check is still
run, and asserted to *differ*: when kheaders starts to behave like confluent-kafka there,
the suite fails until the entry is removed, so the list cannot rot. docs/clients.md
("Migrating from confluent-kafka") lists the same differences; a test holds the two equal.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

_BOTH = ("kheaders", "wrapped", "acknowledging", "intercepted")

REASONS: dict[str, str] = {
    "header_key_bytes_is_str_converted": (
        "confluent-kafka turns a bytes header key into its repr (b'k' becomes the key \"b'k'\")"
        " silently; kheaders raises TypeError naming the key instead of sending a key nobody"
        " meant"
    ),
    "headers_of_a_record_without_headers_is_none": (
        "a received record's headers() is an empty, read-only Headers rather than None, so"
        " code never needs a None check; `if msg.headers():` behaves the same"
    ),
    "received_headers_are_mutable": (
        "a received record's headers are read-only (Kafka's RecordHeaders after send/receive);"
        " mutating them raises ReadOnlyHeadersError, whose message says how to copy them"
    ),
    "produce_batch_drops_headers": (
        "confluent-kafka's produce_batch() silently drops every message's headers (its issue"
        " 2320); kheaders' produce_batch() sends each message through produce(), headers,"
        " interceptors and serializers included"
    ),
    "delivery_report_headers_is_none": (
        "in on_delivery, msg.headers() is the record's read-only Headers; confluent-kafka"
        " returns None there (its issue 574)"
    ),
}
"""Why each listed check differs, by check name."""

DIFFERENCES: dict[tuple[str, str], str] = {
    (check, flavour): reason for check, reason in REASONS.items() for flavour in _BOTH
}
"""``(check, flavour) -> reason``: where kheaders deliberately does not do what confluent does."""


_FAILURES = (Exception, pytest.fail.Exception)  # pytest.raises' DID NOT RAISE is the latter

_K = ("kheaders",)
_AWAITED: dict[str, tuple[str, tuple[str, ...]]] = {}
AWAITING: dict[tuple[str, str], str] = {
    (check, flavour): f"issue 12 {why} (the clients engineer's fix, not landed yet)"
    for check, (why, flavours) in _AWAITED.items()
    for flavour in flavours
}
"""Checks kheaders fails today and the ``clients`` branch is fixing: expected to fail
(non-strict) until it lands, then removed from here. Empty once issue 12 is closed."""


@contextmanager
def contract(check: str, flavour: str) -> Iterator[None]:
    """Run the body of ``check``: it must hold, or, when listed, must fail (differ)."""
    reason = DIFFERENCES.get((check, flavour))
    if reason is None:
        awaited = AWAITING.get((check, flavour))
        if awaited is None:
            yield
            return
        try:
            yield
        except _FAILURES:
            pytest.xfail(awaited)
        return
    try:
        yield
    except Exception:
        return
    pytest.fail(
        f"{check!r} is listed as a deliberate difference for {flavour!r} ({reason}) but now"
        " behaves as confluent-kafka: remove it from tests/compat/differences.py and the docs"
    )
