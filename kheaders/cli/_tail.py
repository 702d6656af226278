"""``kheaders tail TOPIC``: print a topic's records with their headers, secrets redacted."""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
import uuid
from collections.abc import Mapping
from typing import Any, TextIO

from confluent_kafka import (
    OFFSET_BEGINNING,
    OFFSET_END,
    KafkaError,
    KafkaException,
    Message,
    TopicPartition,
)

from kheaders._client.reach import ErrorTrail, scrubbed, wait_for_metadata
from kheaders._errors import ConfigurationError, DeserializationError, InvalidNameError
from kheaders._model.keys import check_name
from kheaders._model.received import message_headers
from kheaders._model.redact import Redactor, printable, render_headers, render_value
from kheaders.cli import _protected

_TIMESTAMP_TYPES = {1: "CreateTime", 2: "LogAppendTime"}


def register(subparsers: Any) -> None:
    """Add the ``tail`` subcommand."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "tail",
        help="print a topic's records with their headers (sensitive values redacted)",
        description=(
            "Consume TOPIC and print each record: partition, offset, timestamp, key, value and"
            " headers, as text where they are printable UTF-8 and as 0x-hex otherwise (header"
            " keys and topics with control characters escaped). Values of sensitive headers"
            " (authorization, cookie, *token*, *secret*, *password*, *credential*, *apikey*,"
            " *key) and credential-shaped values (JWTs, Bearer/Basic credentials, token"
            " prefixes) are shown as <redacted>. Reads every partition by assign() (no consumer"
            " group) unless --group is given."
        ),
    )
    parser.add_argument("topic", metavar="TOPIC", help="the topic to read")
    parser.add_argument(
        "--bootstrap",
        default=None,
        help="bootstrap servers (default: $KHEADERS_BOOTSTRAP)",
    )
    parser.add_argument(
        "--from-beginning", action="store_true", help="start at the oldest record (default: new)"
    )
    parser.add_argument("--max", type=int, default=None, metavar="N", help="stop after N records")
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="stop after this long without a record (default: run until interrupted)",
    )
    parser.add_argument("--group", default=None, help="join this consumer group (subscribe)")
    parser.add_argument(
        "-X", dest="settings", action="append", type=_setting, default=[], metavar="KEY=VALUE",
        help="a librdkafka consumer setting, e.g. security.protocol=SASL_SSL (repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--config",
        default=None,
        metavar="FILE",
        help="librdkafka consumer settings, one KEY=VALUE a line (# comments): keeps a"
        " password off the command line; -X settings win",
    )
    parser.add_argument("--no-redact", action="store_true", help="show sensitive header values too")
    parser.add_argument(
        "--redact-key",
        action="append",
        default=[],
        metavar="KEY",
        help="also redact this header key (case-insensitive; repeatable)",
    )
    _protected.add_arguments(parser)
    parser.set_defaults(handler=run)


def _setting(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError("expected KEY=VALUE")  # never echo: it may be a secret
    return key.strip(), value


def read_settings(path: str) -> dict[str, str]:
    """The ``KEY=VALUE`` lines of ``path`` (blank lines and ``#`` comments skipped).

    Raises ConfigurationError naming the file and line number (never the line: it may hold a
    password), OSError when the file cannot be read.
    """
    settings: dict[str, str] = {}
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            key, sep, value = text.partition("=")
            if not sep or not key.strip():
                raise ConfigurationError(f"--config {path}: line {number} is not KEY=VALUE")
            settings[key.strip()] = value.strip()
    return settings


def format_record(msg: Message, redactor: Redactor, check: _protected.Checker | None = None) -> str:
    """One record as text: a title line, the value, then one line per header.

    Everything a peer supplied is rendered safely: keys, values and record keys as text only
    when printable (values and record keys as ``0x`` hex otherwise, header keys and the topic
    with control characters escaped), so no record can move the cursor, ring the bell or
    forge a line.
    """
    ts_type, ts = msg.timestamp()
    when = "-"
    if ts_type in _TIMESTAMP_TYPES:
        stamp = dt.datetime.fromtimestamp(ts / 1000, dt.UTC).isoformat(timespec="milliseconds")
        when = f"{stamp.replace('+00:00', 'Z')} ({_TIMESTAMP_TYPES[ts_type]})"
    topic = printable(msg.topic() or "")
    lines = [
        f"{topic}[{msg.partition()}]@{msg.offset()}  {when}  key={_render(msg.key())}",
        f"  value: {_render(msg.value())}",
    ]
    try:
        raw = message_headers(msg)
    except DeserializationError:
        lines.append("  headers: <unreadable: a header key is not UTF-8>")
        return "\n".join(lines)
    _protected.protected_lines(msg, raw or (), lines, check)  # kheaders.protect records
    pairs = render_headers(raw or (), redactor)  # keys escaped, secrets redacted
    lines.append(f"  headers ({len(pairs)}):")
    lines.extend(f"    {key}: {text}" for key, text in pairs)
    from kheaders.processing import describe  # lazily: `kheaders --help` stays light

    lines.extend(f"  {line}" for line in describe(raw or ()))  # retry / dead-letter state
    return "\n".join(lines)


def _render(data: object) -> str:
    if data is None or isinstance(data, bytes):
        return render_value(data)
    return render_value(str(data).encode("utf-8"))


def run(args: argparse.Namespace) -> int:
    """Tail the topic; 0 when stopped by --max, --timeout or Ctrl-C, 2 on a setup error."""
    bootstrap = args.bootstrap or os.environ.get("KHEADERS_BOOTSTRAP", "").strip()
    if not bootstrap:
        print("kheaders tail: pass --bootstrap or set KHEADERS_BOOTSTRAP", file=sys.stderr)
        return 2
    try:
        check_name(args.topic)  # argv may hold undecodable bytes (as lone surrogates)
    except InvalidNameError as exc:
        print(f"kheaders tail: {printable(str(exc))}", file=sys.stderr)
        return 2
    redactor = Redactor(extra=tuple(args.redact_key), enabled=not args.no_redact)
    try:
        check = _protected.checker(args)
        settings = read_settings(args.config) if args.config else {}
    except (ConfigurationError, OSError) as exc:
        print(f"kheaders tail: {printable(str(exc))}", file=sys.stderr)
        return 2
    settings.update(args.settings)
    try:
        return tail(
            bootstrap,
            args.topic,
            sys.stdout,
            redactor=redactor,
            from_beginning=args.from_beginning,
            limit=args.max,
            timeout=args.timeout,
            group=args.group,
            check=check,
            settings=settings,
        )
    except ConfigurationError as exc:  # a setting kheaders' Consumer refused (named, no value)
        print(f"kheaders tail: {printable(str(exc))}", file=sys.stderr)
        return 2
    except KafkaException as exc:  # a setting librdkafka refused (its text quotes the value)
        reason = scrubbed(_reason(exc.args[0] if exc.args else exc), settings)
        print(f"kheaders tail: {printable(reason)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0
    except BrokenPipeError:  # `kheaders tail ... | head`
        return 0


def tail(
    bootstrap: str,
    topic: str,
    out: TextIO,
    *,
    redactor: Redactor,
    from_beginning: bool = False,
    limit: int | None = None,
    timeout: float | None = None,
    group: str | None = None,
    check: _protected.Checker | None = None,
    settings: Mapping[str, object] | None = None,
) -> int:
    """Print ``topic``'s records to ``out`` until ``limit`` records or ``timeout`` idle seconds.

    ``settings`` are librdkafka consumer settings (``security.protocol``, ``ssl.*``,
    ``sasl.*``, ...); ``bootstrap`` and the settings tail needs win over them. A cluster that
    does not answer is reported with ``bootstrap`` and its cause (a refused password, an
    unverified certificate), never a secret.
    """
    from kheaders._client.consumer import Consumer

    config: dict[str, object] = {
        **(settings or {}),
        "bootstrap.servers": bootstrap,
        "group.id": group or f"kheaders-tail-{uuid.uuid4().hex[:8]}",
        "enable.auto.commit": group is not None,
        "auto.offset.reset": "earliest" if from_beginning else "latest",
    }
    if group is not None:
        config.update({"session.timeout.ms": 6000, "heartbeat.interval.ms": 500})
    errors = ErrorTrail()
    # librdkafka's own log lines (one per failed connection attempt) would bury the output:
    # its errors come to error_cb instead, and the most telling one is reported once
    config.update({"log_level": 0, "error_cb": errors})
    consumer = Consumer(config)
    try:
        if group is not None:
            consumer.subscribe([topic])
        else:
            wait = 10.0 if timeout is None else max(min(timeout, 10.0), 0.1)
            try:
                meta = wait_for_metadata(consumer, errors, wait, topic).topics.get(topic)
            except KafkaException as exc:
                reason = errors.cause() or _reason(exc.args[0])
                text = f"cannot read topic {topic!r} from {bootstrap}: {reason}"
                print(f"kheaders tail: {scrubbed(text, config)}", file=sys.stderr)
                return 2
            if meta is None or meta.error is not None or not meta.partitions:
                print(f"kheaders tail: topic {topic!r} not found", file=sys.stderr)
                return 2
            start = OFFSET_BEGINNING if from_beginning else OFFSET_END
            consumer.assign([TopicPartition(topic, p, start) for p in sorted(meta.partitions)])
        printed = 0
        last = time.monotonic()
        while limit is None or printed < limit:
            if timeout is not None and time.monotonic() - last > timeout:
                break
            try:
                msg = consumer.poll(0.2)
            except DeserializationError as exc:  # e.g. a header key that is not UTF-8
                print(f"kheaders tail: {printable(str(exc))}", file=sys.stderr)
                msg = exc.message  # printed all the same: key and value are intact
            if msg is None:
                continue
            if msg.error() is not None:
                print(f"kheaders tail: {printable(str(msg.error()))}", file=sys.stderr)
                continue
            last = time.monotonic()
            print(format_record(msg, redactor, check), file=out, flush=True)
            printed += 1
        if not printed and errors.errors:
            consumer.poll(0)
            reason = errors.cause() or _reason(errors.errors[-1])
            text = f"no record; last broker error: {reason}"
            print(f"kheaders tail: {scrubbed(text, config)}", file=sys.stderr)
    finally:
        consumer.close()
    return 0


def _reason(err: object) -> str:
    """librdkafka's error text without the ``KafkaError{code=...}`` wrapping."""
    return err.str() if isinstance(err, KafkaError) else str(err)
