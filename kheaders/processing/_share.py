"""ShareProcessor: a share-group (KIP-932) service loop on kheaders' ShareConsumer.

Many members, in as many processes as wanted, read the same partitions; the broker hands
each record to one member at a time under a lock. Per record: the handler returned, the
record is accepted; it raised a retryable error before its last attempt, it is released
(held ``Redelivery.delay`` seconds first) and the broker delivers it again, counting
``delivery_count()`` up; otherwise a dead letter is published and, once the broker
acknowledged it, the record is rejected (never delivered again). A dead letter that could
not be published leaves the record released, so it comes back rather than being lost.

Acknowledgements travel with the next fetch; a release or rejection is committed at once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from confluent_kafka import AcknowledgeType, KafkaError, KafkaException, Message, TopicPartition
from confluent_kafka.admin._config import ConfigResource

from kheaders._client.admin import admin_client
from kheaders._client.consumer import consumed_bytes
from kheaders._client.deadletter import dead_letter_headers
from kheaders._client.producer import Producer
from kheaders._client.share import ACKNOWLEDGEMENT_MODE, EXPLICIT, ShareConsumer
from kheaders._errors import ConfigurationError, DeserializationError, HeldFailuresError
from kheaders.processing import _validate as _v
from kheaders.processing._base import stop_on_signals
from kheaders.processing._core import consumed_headers
from kheaders.processing._failure import Pairs, describe_error, spring_headers
from kheaders.processing._observe import log
from kheaders.processing._redelivery import Redelivery
from kheaders.processing._retry import KHEADERS, DeadLetter
from kheaders.processing._setup import connection_config, prepare_topics
from kheaders.processing._setup import producer_config as _producer_config_for

Handler = Callable[[Message], Any]
ACCEPT, RELEASE, REJECT = AcknowledgeType.ACCEPT, AcknowledgeType.RELEASE, AcknowledgeType.REJECT
GROUP_TIMEOUT = 15.0
"""Seconds to wait for the group's settings at start."""


def group_settings(config: Mapping[str, object], group: str) -> dict[str, str]:
    """The share group's settings (``share.*``, the broker's defaults for those unset);
    empty when the cluster does not say (an older broker): Kafka's defaults apply then."""
    resource = ConfigResource(ConfigResource.Type.GROUP, group)
    try:
        with admin_client(connection_config(config)) as admin:
            entries = admin.describe_configs([resource])[resource].result(GROUP_TIMEOUT)
    except KafkaException as exc:
        log.warning("processing.share_group_settings_unknown", group=group, error=str(exc))
        return {}
    return {k: v.value for k, v in entries.items() if v.value is not None}


def _dead_letter_option(dead_letter: object) -> DeadLetter | None:
    """``dead_letter=`` checked: True is ``DeadLetter()``, False rejects without a copy."""
    if dead_letter is True:
        return DeadLetter()
    if dead_letter is False:
        return None
    if isinstance(dead_letter, DeadLetter):
        return dead_letter
    raise ConfigurationError(
        "dead_letter: expected DeadLetter(...), True (DeadLetter()) or False (reject without"
        f" a dead letter), got {_v.kind_of(dead_letter)}"
    )


class ShareProcessor:
    """Reads ``topics`` as share group ``config['group.id']`` and calls ``handler(msg)`` once
    per delivery; ``msg.delivery_count()`` is the attempt (1 first). See the module doc for
    what happens to a record after its handler returned or raised.

    ``config`` is a :class:`kheaders.ShareConsumer` config (interceptors, deserializers;
    ``share.acknowledgement.mode`` is explicit, the processor acknowledges). Its connection
    settings also build the dead-letter producer (``producer_config`` adds or overrides).
    ``redelivery`` says how many deliveries and how long a hold (:class:`Redelivery`; the
    group's own delivery limit by default). ``dead_letter`` names the dead-letter topic and
    header contract (``True``: ``DeadLetter()``, Spring's ``<topic>-dlt``; ``False``: a
    record out of attempts is rejected with no copy kept). ``run()`` blocks until ``stop()``
    (any thread) or, on the main thread, SIGTERM/SIGINT; the batch in hand is finished
    first, held records are released at once.

    Raises ConfigurationError for a bad argument or setting (naming it).
    """

    def __init__(
        self,
        config: Mapping[str, object],
        topics: Sequence[str],
        handler: Handler,
        *,
        redelivery: Redelivery | None = None,
        dead_letter: DeadLetter | bool = True,
        producer_config: Mapping[str, object] | None = None,
        poll_timeout: float = 0.5,
        shutdown_timeout: float = 10.0,
        handle_signals: bool = True,
    ) -> None:
        _v.mapping("config", config)
        _v.topics_list(topics)
        if not callable(handler):
            raise ConfigurationError(f"handler: expected a callable, got {_v.kind_of(handler)}")
        if redelivery is None:
            redelivery = Redelivery()
        elif not isinstance(redelivery, Redelivery):
            raise ConfigurationError(
                f"redelivery: expected Redelivery(...) or None, got {_v.kind_of(redelivery)}"
            )
        _v.mapping("producer_config", producer_config, optional=True)
        _v.number("poll_timeout", poll_timeout)
        _v.number("shutdown_timeout", shutdown_timeout)
        _v.flag("handle_signals", handle_signals)
        group = config.get("group.id")
        if not isinstance(group, str) or not group:
            raise ConfigurationError("group.id: give the share group's name")
        mode = config.get(ACKNOWLEDGEMENT_MODE, EXPLICIT)
        if mode != EXPLICIT:
            raise ConfigurationError(
                f"{ACKNOWLEDGEMENT_MODE}: the processor acknowledges each record; leave it out"
                f" (or 'explicit'), got {mode!r}"
            )
        self._dead_letter = _dead_letter_option(dead_letter)
        self._topics = list(topics)
        self._handler = handler
        self._redelivery = redelivery
        self._group = group
        self._config = {**config, ACKNOWLEDGEMENT_MODE: EXPLICIT}
        self._producer_config = _producer_config_for(config, producer_config)
        self.poll_timeout = poll_timeout
        self.shutdown_timeout = shutdown_timeout
        self.handle_signals = handle_signals
        self._last = 0
        self._stop = threading.Event()

    def stop(self) -> None:
        """Ask ``run()`` to finish its batch, release held records and return (any thread)."""
        self._stop.set()

    @property
    def stopping(self) -> bool:
        """Whether ``stop()`` was called (or a signal arrived)."""
        return self._stop.is_set()

    def run(self) -> None:
        """Process until stopped, then close the clients (acknowledgements committed).

        Raises ConfigurationError when ``redelivery`` does not fit the group's settings;
        BrokerUnavailableError when the cluster cannot be reached at start.
        """
        self._last = self._redelivery.last_attempt(group_settings(self._config, self._group))
        dead = self._dead_letter
        if dead is not None:
            prepare_topics(
                self._config, {t: [dead.topic_for(t)] for t in self._topics}, create=True
            )
        producer = Producer(self._producer_config) if dead is not None else None
        consumer = ShareConsumer(self._config)
        consumer.set_acknowledgement_commit_callback(_log_refused)
        try:
            consumer.subscribe(self._topics)
            with stop_on_signals(self.stop, self.handle_signals):
                while not self._stop.is_set():
                    self._round(consumer, producer)
        finally:
            self._close(consumer, producer)

    # -- one batch ---------------------------------------------------------------------------

    def _round(self, consumer: ShareConsumer, producer: Producer | None) -> None:
        """Fetch a batch (sending the last one's acknowledgements) and settle every record."""
        try:
            batch = consumer.poll(self.poll_timeout)
        except DeserializationError as exc:  # not retryable: straight to the dead letters
            self._settle(consumer, producer, [], [(exc.message, exc)])
            return
        handler = self._handler
        failed: list[tuple[Message, BaseException]] = []
        for msg in batch:
            if msg.error() is not None:
                log.warning("processing.share_fetch_error", error=str(msg.error()))
                continue
            try:
                handler(msg)
            except Exception as exc:
                failed.append((msg, exc))
            else:
                consumer.acknowledge(msg, ACCEPT)
        if failed:
            self._settle(consumer, producer, *self._split(failed))

    def _split(
        self, failed: list[tuple[Message, BaseException]]
    ) -> tuple[list[Message], list[tuple[Message, BaseException]]]:
        """The failures to release for another attempt, and those out of attempts."""
        again: list[Message] = []
        done: list[tuple[Message, BaseException]] = []
        for msg, exc in failed:
            attempt = msg.delivery_count() or 1
            log.info(
                "processing.share_failed",
                topic=msg.topic(),
                partition=msg.partition(),
                offset=msg.offset(),
                attempt=attempt,
                error=describe_error(exc),
            )
            if attempt < self._last and self._redelivery.retryable(exc):
                again.append(msg)
            else:
                done.append((msg, exc))
        return again, done

    def _settle(
        self,
        consumer: ShareConsumer,
        producer: Producer | None,
        again: list[Message],
        done: list[tuple[Message, BaseException]],
    ) -> None:
        """Dead-letter (then reject) what is done; hold, then release, what goes again."""
        for msg, accepted in self._dead_letters(producer, done):
            consumer.acknowledge(msg, REJECT if accepted else RELEASE)
        if again:
            self._hold(self._redelivery.delay)
            for msg in again:
                consumer.acknowledge(msg, RELEASE)
        consumer.commit_async()

    def _hold(self, seconds: float) -> None:
        """Wait ``seconds`` (under the records' locks), or less when ``stop()`` is called."""
        if seconds > 0:
            self._stop.wait(seconds)

    def _dead_letters(
        self, producer: Producer | None, done: list[tuple[Message, BaseException]]
    ) -> list[tuple[Message, bool]]:
        """Publish a dead letter per record and wait for the broker: (record, acknowledged).
        Without a dead-letter topic every record is given up (True)."""
        if not done:
            return []
        if producer is None or self._dead_letter is None:
            return [(msg, True) for msg, _ in done]
        results: dict[int, bool] = {}
        for i, (msg, exc) in enumerate(done):
            results[i] = False
            key, value = consumed_bytes(msg)
            topic = self._dead_letter.topic_for(msg.topic() or "")

            def report(
                err: KafkaError | None, _sent: Message, i: int = i, topic: str = topic
            ) -> None:
                results[i] = err is None
                if err is not None:
                    log.warning("processing.dead_letter_failed", topic=topic, error=err.str())

            try:
                producer.produce(
                    topic,
                    value=value,
                    key=key,
                    headers=self._headers(msg, exc),
                    on_delivery=report,
                )
            except Exception as err:  # refused before sending (size, header limit)
                log.warning("processing.dead_letter_failed", topic=topic, error=str(err))
        left = producer.flush(self.shutdown_timeout)
        if left:
            log.warning("processing.dead_letter_unacknowledged", records=left)
        return [(msg, results[i]) for i, (msg, _) in enumerate(done)]

    def _headers(self, msg: Message, error: BaseException) -> Pairs:
        """The dead letter's headers: the consumed ones plus the contract's."""
        assert self._dead_letter is not None
        if self._dead_letter.contract == KHEADERS:
            return dead_letter_headers(msg, error, group_id=self._group).to_list()
        attempt = msg.delivery_count() or 1
        return spring_headers(
            consumed_headers(msg),
            topic=msg.topic() or "",
            partition=msg.partition() or 0,
            offset=msg.offset() or 0,
            timestamp=msg.timestamp(),
            group=self._group,
            error=error,
            next_attempt=attempt + 1,
            due_ms=round(time.time() * 1000),
        )

    def _close(self, consumer: ShareConsumer, producer: Producer | None) -> None:
        try:
            consumer.close()  # commits the acknowledgements; unacknowledged records return
        except HeldFailuresError as exc:  # left unacknowledged: delivered again
            log.warning("processing.failures_left_at_close", records=len(exc.exceptions))
        finally:
            if producer is not None:
                producer.close(self.shutdown_timeout)


def _log_refused(offsets: dict[TopicPartition, set[int]], error: KafkaException | None) -> None:
    """Log acknowledgements the broker refused (a lock expired first: the record was, or
    will be, delivered again)."""
    if error is not None:
        parts = sorted(f"{tp.topic}[{tp.partition}]" for tp in offsets)
        log.warning("processing.share_acknowledgement_refused", partitions=parts, error=str(error))
