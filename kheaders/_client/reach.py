"""Why a cluster did not answer: the client's own error (a refused password, a certificate
that did not verify), quoted with the bootstrap servers, never a secret.

librdkafka answers a failed metadata request with "Broker transport failure" and reports the
cause (``_AUTHENTICATION``, ``_SSL``, connection refused) only to ``error_cb``, which runs from
``poll()``. :func:`cluster_metadata` asks for metadata collecting those errors and, when no
broker answers, raises BrokerUnavailableError quoting the most telling error.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from confluent_kafka import KafkaError, KafkaException

from kheaders._errors import BrokerUnavailableError

SECRET_SETTINGS: tuple[str, ...] = (
    "sasl.password",
    "sasl.oauthbearer.client.secret",
    "sasl.oauthbearer.assertion.private.key.passphrase",
    "ssl.key.password",
    "ssl.key.pem",
    "ssl.keystore.password",
    "ssl.truststore.password",
)
"""librdkafka settings whose values are secrets: never quoted in an error message."""

_TELLING = (KafkaError._AUTHENTICATION, KafkaError._SSL)  # the cause, said plainly
_QUIET = (KafkaError._ALL_BROKERS_DOWN,)  # "1/1 brokers are down" says nothing


def scrubbed(text: str, config: Mapping[str, object]) -> str:
    """``text`` with the value of every secret setting of ``config`` replaced by ``***``.

    >>> scrubbed("login as bob:hunter22 failed", {"sasl.password": "hunter22"})
    'login as bob:*** failed'
    """
    for key in SECRET_SETTINGS:
        value = config.get(key)
        if isinstance(value, str) and value:
            text = text.replace(value, "***")
    return text


def refused(errors: Sequence[KafkaError]) -> bool:
    """Whether the cluster refused the client (authentication or TLS handshake failed)."""
    return any(err.code() in _TELLING for err in errors)


def cause_of(errors: Sequence[KafkaError]) -> KafkaError | None:
    """The most telling of a client's errors: the last authentication or TLS error, else the
    last one that says more than "brokers are down", else None."""
    for err in reversed(errors):
        if err.code() in _TELLING:
            return err
    for err in reversed(errors):
        if err.code() not in _QUIET:
            return err
    return None


def collector(errors: list[KafkaError], user: object = None) -> Callable[[KafkaError], None]:
    """An ``error_cb`` appending to ``errors``, then calling ``user`` (a config's own
    ``error_cb``) when it is callable."""
    passed: Callable[[KafkaError], object] | None = user if callable(user) else None

    def error_cb(err: KafkaError) -> None:
        errors.append(err)
        if passed is not None:
            passed(err)

    return error_cb


def unreachable(
    what: str, config: Mapping[str, object], exc: KafkaException, errors: Sequence[KafkaError]
) -> BrokerUnavailableError:
    """The error for a cluster that did not answer: ``what`` (e.g. ``"source cluster"``),
    its bootstrap servers and the cause (:func:`cause_of` ``errors``, else ``exc``'s text),
    secrets scrubbed."""
    err = cause_of(errors) or (exc.args[0] if exc.args else exc)
    reason = err.str() if isinstance(err, KafkaError) else str(err)
    bootstrap = config.get("bootstrap.servers")
    return BrokerUnavailableError(
        scrubbed(f"{what} {bootstrap!r} did not answer: {reason}", config)
    )


def wait_for_metadata(
    client: Any, errors: Sequence[KafkaError], timeout: float, topic: str | None = None
) -> Any:
    """``client.list_topics(topic)`` (a client whose ``error_cb`` collects ``errors``), asked in
    growing slices for up to ``timeout`` seconds, so a slow broker still answers.

    A refused login or a certificate that did not verify ends the wait at once, as Java's
    clients treat an AuthenticationException as not retriable. Raises the last
    KafkaException when no broker answered.
    """
    deadline = time.monotonic() + timeout
    wait = 0.5
    while True:
        left = deadline - time.monotonic()
        try:
            return client.list_topics(topic, timeout=max(min(wait, left), 0.01))
        except KafkaException:
            client.poll(0)  # serves the errors librdkafka queued for error_cb
            if refused(errors) or time.monotonic() >= deadline:
                raise
        wait *= 2


def cluster_metadata(
    config: Mapping[str, object], what: str, timeout: float, topic: str | None = None
) -> Any:
    """The metadata of the cluster ``config`` (a librdkafka config) reaches, from a
    short-lived AdminClient (``topic``: that topic's only), waited for as
    :func:`wait_for_metadata` waits.

    Raises BrokerUnavailableError naming ``what``, the bootstrap servers and why no broker
    answered (a refused password, an unverified certificate, ...), never a secret.
    """
    from confluent_kafka.admin import AdminClient

    errors: list[KafkaError] = []
    settings: dict[str, Any] = {**config, "error_cb": collector(errors, config.get("error_cb"))}
    admin = AdminClient(settings)
    try:
        return wait_for_metadata(admin, errors, timeout, topic)
    except KafkaException as exc:
        raise unreachable(what, config, exc, errors) from exc
