"""``kheaders tail TOPIC``: print a topic's records with their headers, secrets redacted."""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
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

from kheaders._client.reach import cause_of, scrubbed, wait_for_metadata
from kheaders._errors import ConfigurationError, DeserializationError, InvalidNameError
from kheaders._model.keys import check_name
from kheaders._model.received import message_headers
from kheaders._model.redact import REDACTED, Redactor, printable, render_headers, render_value
from kheaders.cli import _protected
from kheaders.cli._reach import cannot, quiet, reason
from kheaders.deadletter._read import state_lines

_TIMESTAMP_TYPES = {1: "CreateTime", 2: "LogAppendTime"}
_LINES = re.compile(r"\r?\n")
_MOSTLY_TEXT = 10
"""A multi-line value is text when at most one character in this many is a control one."""


def register(subparsers: Any) -> None:
    """Add the ``tail`` subcommand."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "tail",
        help="print a topic's records with their headers (sensitive values redacted)",
        description=(
            "Consume TOPIC and print each record: partition, offset, timestamp, key, value and"
            " headers, as text where they are printable UTF-8, as indented lines where they are"
            " UTF-8 text of several lines (a stack trace), and as 0x-hex otherwise (control"
            " characters escaped in keys, topics and text lines). Retry and dead-letter headers"
            " are decoded: where the record came from, the exception with its message, and the"
            " next attempt (none for a dead letter). Values of sensitive headers"
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
    with control characters escaped; a multi-line UTF-8 value as indented lines, each
    escaped), so no record can move the cursor, ring the bell or forge a line.
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
    for (key, text), (_, value) in zip(pairs, raw or (), strict=True):
        block = None if text == REDACTED else text_block(value)
        if block is None:
            lines.append(f"    {key}: {text}")
        else:  # a stack trace, a JSON document: its lines, indented under the key
            lines.append(f"    {key}: |")
            lines.extend(f"      {line}" for line in block)
    state = state_lines(msg.topic() or "", raw or (), redactor)  # retry / dead-letter state
    lines.extend(f"  {line}" for line in state)
    return "\n".join(lines)


def text_block(value: bytes | None) -> list[str] | None:
    """The lines of a multi-line UTF-8 text value, each escaped (:func:`printable`: no
    control character reaches the terminal; tabs become spaces); None for a value on one
    line, not UTF-8, holding NUL, or more than one character in ten not printable (bytes
    that happen to decode: shown as text or hex on the key's line)."""
    if value is None or b"\n" not in value or b"\x00" in value:
        return None
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError:
        return None
    odd = sum(1 for c in text if not c.isprintable() and c not in "\n\r\t")
    if odd * _MOSTLY_TEXT > len(text):  # binary that happens to decode (an id, a hash)
        return None
    return [printable(line.expandtabs(4)) for line in _LINES.split(text.removesuffix("\n"))]


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
        print(f"kheaders tail: {printable(scrubbed(reason(exc), settings))}", file=sys.stderr)
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
    errors: list[KafkaError] = []
    # librdkafka's own log lines (one per failed connection attempt) would bury the output:
    # its errors come to error_cb instead, and the most telling one is reported once
    consumer = Consumer(quiet(config, errors))
    try:
        if group is not None:
            consumer.subscribe([topic])
        else:
            wait = 10.0 if timeout is None else max(min(timeout, 10.0), 0.1)
            try:
                meta = wait_for_metadata(consumer, errors, wait, topic).topics.get(topic)
            except KafkaException as exc:
                line = cannot("tail", f"read topic {topic!r}", bootstrap, exc, errors)
                print(scrubbed(line, config), file=sys.stderr)
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
        if not printed and errors:
            cause = printable(reason(cause_of(errors) or errors[-1]))
            line = f"kheaders tail: no record; last broker error: {cause}"
            print(scrubbed(line, config), file=sys.stderr)
    finally:
        consumer.close()
    return 0
