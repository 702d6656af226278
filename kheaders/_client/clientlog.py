"""librdkafka's log lines, through kheaders' logger instead of the process's stderr.

Every confluent-kafka client kheaders builds gets a :class:`LibrdkafkaLog` as its ``logger``
(:func:`route_client_log`), unless the config already names one: the caller's logger is left
alone, and so is everything else about its log. confluent-kafka hands the lines over during
``poll``/``consume``/``flush``/``close`` (as it does for any ``logger``), so a client nobody
polls keeps them queued.

Each line becomes a ``librdkafka.log`` event of the logger ``kheaders.librdkafka`` at the
line's own level, with ``client``, ``facility`` and ``message``. A line repeated within
:data:`WINDOW` seconds is logged once; the repeats are counted and logged as one event with
``repeats`` when the window has passed (at the next line) or when the client closes. A line
librdkafka says of every client alike (:data:`ONCE_PER_PROCESS`: the share consumer's
"Preview" notice) is logged by the first client of the process only.

A connection to a broker that never comes up (refused, timed out, closed during the
handshake, TLS or SASL refused; not an idle connection the broker closed) logs one
``broker.unreachable`` warning naming the broker and the reason; that broker's lines then go
at info level while it stays down (counted all the same). When librdkafka next has the broker
up, one ``broker.reachable`` warning follows, with the failures seen and the seconds it was
down: logged at the outage's level, so a log that shows one shows the other.

librdkafka logs nothing at its usual levels when a broker comes back: only its ``broker``
debug context tells (``Broker changed state ... -> UP``; connection states only, a few lines
per connection, none per record). kheaders turns that context on for the consumers it builds,
where librdkafka serves log lines inside ``poll``/``consume`` without changing what they
return, and reads those lines without logging them (unless the config set ``debug`` itself).
Not for producers: there each line served counts in ``poll()``'s result and ``len()``, which
stay confluent-kafka's; a producer's config that sets ``debug`` to include ``broker`` gets the
``broker.reachable`` event too.

Secrets: the values of the config's secret settings (:data:`SECRET_SETTINGS` and any whose
name looks sensitive, :func:`kheaders._model.redact.is_sensitive`) are replaced by
``[redacted]`` in every line before anything else sees it.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kheaders._log import get_logger
from kheaders._model.redact import is_sensitive

_log = get_logger("kheaders.librdkafka")

ONCE_PER_PROCESS: frozenset[tuple[str, str]] = frozenset(
    {
        # every ShareConsumer says it at creation; it is about the library, not the client
        (
            "SHARECONSUMER",
            'The share consumer is in "Preview" and is not recommended for production use',
        ),
    }
)
"""(facility, text) of librdkafka lines that say the same of every client: logged by the
first client of the process only (read, counted in ``lines``, by the others). Exact texts:
a line worded otherwise is logged as any other."""
_said_once: set[tuple[str, str]] = set()
_once_lock = threading.Lock()


def _first_time(facility: str, text: str) -> bool:
    """Whether this process has not said this :data:`ONCE_PER_PROCESS` line yet (now it has)."""
    with _once_lock:
        if (facility, text) in _said_once:
            return False
        _said_once.add((facility, text))
        return True


WINDOW = 30.0
"""Seconds within which a repeated line is counted instead of logged."""
SECRET_SETTINGS: frozenset[str] = frozenset(
    {
        "sasl.password",
        "sasl.oauthbearer.config",
        "sasl.oauthbearer.client.secret",
        "sasl.oauthbearer.assertion.private.key.passphrase",
        "sasl.oauthbearer.assertion.private.key.pem",
        "ssl.key.password",
        "ssl.key.pem",
        "ssl_key",
        "ssl.keystore.password",
    }
)
"""librdkafka settings whose values are secrets (its own sensitive list, less the names,
paths and public certificates)."""
REDACTED = "[redacted]"
_MAX_KEYS = 512
"""Distinct lines remembered for counting repeats (the oldest are logged and forgotten)."""

_THREAD = re.compile(r"^\[thrd:([^\]]*)\]: ")
_BROKER = re.compile(r"^((?:[A-Za-z_]+://)?[^\s/]+:\d+)/(?:bootstrap|-?\d+): ")
"""A broker's own name (``host:port/id``); logical ones (``GroupCoordinator``) tell the same
connection again."""
_UP = re.compile(r"Broker changed state \S+ -> UP$")
_DURATION = re.compile(r"\d+ms\b")
_FAILED_IN = re.compile(r"in state ([A-Z_]+)\)(?: \((_?[A-Z_]+)\))?")


def _connect_failed(text: str) -> bool:
    """Whether a ``FAIL`` line tells of a connection that never came up (refused, timed out,
    closed during the handshake, TLS or SASL refused): one that dropped in state ``UP`` (an
    idle connection the broker closed) or that librdkafka itself retired is not.

    >>> _connect_failed("Connect to ipv4#10.0.0.1:9092 failed: Connection refused"
    ...                 " (after 0ms in state CONNECT) (_TRANSPORT)")
    True
    >>> _connect_failed("Disconnected (after 600000ms in state UP)")
    False
    """
    found = _FAILED_IN.search(text)
    if found is None:
        return False
    state, error = found.group(1), found.group(2) or ""
    return state != "UP" and not error.startswith("_DESTROY")


def secrets_of(config: Mapping[str, object]) -> tuple[str, ...]:
    """The text values of ``config``'s secret settings, longest first (so a secret that
    contains another is replaced whole), with each line of a multi-line value (a PEM key)."""
    found: set[str] = set()
    for key, value in config.items():
        if not isinstance(key, str) or not isinstance(value, str) or not value:
            continue
        if key in SECRET_SETTINGS or is_sensitive(key):
            found.add(value)
            found.update(line.strip() for line in value.splitlines() if len(line.strip()) > 3)
    return tuple(sorted(found, key=len, reverse=True))


def _split(fmt: str, args: tuple[object, ...]) -> tuple[str, str, str]:
    """``(facility, client, text)`` from confluent-kafka's ``("%s [%s] %s", fac, name, buf)``."""
    if len(args) == 3 and fmt == "%s [%s] %s":
        return str(args[0]), str(args[1]), str(args[2])
    try:
        return "", "", fmt % args
    except (TypeError, ValueError):
        return "", "", " ".join(map(str, (fmt, *args)))


@dataclass(slots=True)
class _Outage:
    since: float
    failures: int = 1


@dataclass(slots=True)
class _Seen:
    since: float
    level: int
    fields: dict[str, str]
    repeats: int = 0


@dataclass(slots=True)
class LibrdkafkaLog:
    """A ``logger`` for a confluent-kafka client (see the module doc).

    ``secrets``: text never to log; ``debug_asked``: whether the config set ``debug`` (else
    debug lines, asked for by kheaders, are read but not logged); ``broker_debug``: whether
    librdkafka's ``broker`` debug context is on (its lines then tell failures and returns);
    ``quietest``: the least severe level to log (from the config's ``log_level``);
    ``clock``: seconds, monotonic.
    """

    secrets: tuple[str, ...] = ()
    debug_asked: bool = False
    broker_debug: bool = False
    quietest: int = logging.DEBUG
    window: float = WINDOW
    clock: Callable[[], float] = time.monotonic
    lines: int = 0
    """Lines received (every one: logged, counted as a repeat, or read only)."""
    dropped: int = 0
    """Lines (or counts) that could not be logged: the log's own output failed."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _seen: dict[tuple[int, str, str], _Seen] = field(default_factory=dict)
    _down: dict[str, _Outage] = field(default_factory=dict)

    def log(self, level: int, fmt: str, *args: object) -> None:
        """Called by confluent-kafka for each librdkafka line, on the thread that polls.

        Never raises (an exception here would come out of the client's ``poll``): a line
        that cannot be logged is counted in :attr:`dropped`.
        """
        with self._lock:
            try:
                self._line(level, fmt, args)
            except Exception:
                self.dropped += 1

    def _line(self, level: int, fmt: str, args: tuple[object, ...]) -> None:
        self.lines += 1
        facility, client, text = _split(fmt, args)
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        thread = ""
        if (found := _THREAD.match(text)) is not None:
            thread, text = found.group(1), text[found.end() :]
        now = self.clock()
        level = self._reach(level, facility, client, text, now)
        self._expire(now)
        if level < self.quietest or (level < logging.INFO and not self.debug_asked):
            return
        if (facility, text) in ONCE_PER_PROCESS and not _first_time(facility, text):
            return
        fields = {"client": client, "facility": facility, "message": text, "thread": thread}
        key = (level, facility, _DURATION.sub("…ms", text))
        seen = self._seen.get(key)
        if seen is not None:
            seen.repeats += 1
            return
        if len(self._seen) >= _MAX_KEYS:
            oldest = next(iter(self._seen))
            self._report(self._seen.pop(oldest), now)
        self._seen[key] = _Seen(now, level, fields)
        _log.log(level, "librdkafka.log", **fields)

    def _reach(self, level: int, facility: str, client: str, text: str, now: float) -> int:
        """Note a broker going down or coming up; the level to log ``text`` at."""
        found = _BROKER.match(text)
        if found is None:
            return level
        broker = found.group(1)
        if facility == "FAIL":
            # with the broker context, its debug line tells every failure once (whatever
            # log_level says); without, the line librdkafka logs for it
            telling = level == logging.DEBUG if self.broker_debug else level >= logging.INFO
            if telling and _connect_failed(text):
                outage = self._down.get(broker)
                if outage is None:
                    self._down[broker] = _Outage(now)
                    self._warn(
                        "broker.unreachable",
                        broker=broker,
                        client=client,
                        reason=text[found.end() :],
                    )
                else:
                    outage.failures += 1
            if broker in self._down:
                return min(level, logging.INFO)
            return level
        if facility == "STATE" and _UP.search(text) and (outage := self._down.pop(broker, None)):
            self._warn(
                "broker.reachable",
                broker=broker,
                client=client,
                failures=outage.failures,
                seconds=round(now - outage.since, 3),
            )
        return level

    def _warn(self, event: str, **fields: object) -> None:
        """A broker event: a warning, unless the config's ``log_level`` keeps warnings out
        (``log_level: 0`` silences librdkafka and what kheaders reads from it alike)."""
        if self.quietest <= logging.WARNING:
            _log.warning(event, **fields)

    def _expire(self, now: float) -> None:
        """Log the repeats of lines whose window has passed, and forget those lines."""
        if not self._seen:
            return
        done = [k for k, s in self._seen.items() if now - s.since >= self.window]
        for key in done:
            self._report(self._seen.pop(key), now)

    def _report(self, seen: _Seen, now: float) -> None:
        if seen.repeats:
            _log.log(
                seen.level,
                "librdkafka.log",
                **seen.fields,
                repeats=seen.repeats,
                seconds=round(now - seen.since, 3),
            )

    def flush(self) -> None:
        """Log every repeat counted so far (a closing client's last word); never raises."""
        with self._lock:
            now = self.clock()
            seen, self._seen = self._seen, {}
            for entry in seen.values():
                try:
                    self._report(entry, now)
                except Exception:
                    self.dropped += 1


def _quietest(config: Mapping[str, object]) -> int:
    """The least severe stdlib level librdkafka's ``log_level`` (syslog, 0-7) lets through."""
    raw = config.get("log_level", config.get("log.level"))
    try:
        syslog = int(str(raw)) if raw is not None else 6
    except ValueError:
        return logging.DEBUG  # librdkafka refuses it at construction
    table = (50, 50, 50, 40, 30, 20, 20, 10)
    return table[min(max(syslog, 0), 7)] if syslog >= 0 else logging.CRITICAL + 1


def _debug_contexts(config: Mapping[str, object], watch_brokers: bool) -> str:
    asked = config.get("debug")
    contexts = [c.strip() for c in str(asked or "").split(",") if c.strip()]
    if watch_brokers and "all" not in contexts and "broker" not in contexts:
        contexts.append("broker")
    return ",".join(contexts)


def route_client_log(
    config: Mapping[str, object], *, watch_brokers: bool = False
) -> dict[str, object]:
    """``config`` with a fresh :class:`LibrdkafkaLog` as its ``logger``, or unchanged (a copy)
    when it names a ``logger``. ``watch_brokers`` adds librdkafka's ``broker`` debug context
    (for a consumer: its lines are served inside ``poll``/``consume`` and change no count; a
    producer's would count in ``poll()``'s result and ``len()``, which kheaders keeps as
    confluent-kafka's).

    >>> conf = route_client_log({"bootstrap.servers": "h:9092", "sasl.password": "s3cret!"})
    >>> type(conf["logger"]).__name__, "debug" in conf, conf["logger"].secrets
    ('LibrdkafkaLog', False, ('s3cret!',))
    >>> route_client_log({"bootstrap.servers": "h:9092"}, watch_brokers=True)["debug"]
    'broker'
    >>> route_client_log({"logger": logging.getLogger("mine")})["logger"].name
    'mine'
    """
    if config.get("logger") is not None:
        return dict(config)
    debug_asked = bool(str(config.get("debug") or "").strip())
    contexts = _debug_contexts(config, watch_brokers)
    log = LibrdkafkaLog(
        secrets=secrets_of(config),
        debug_asked=debug_asked,
        broker_debug=bool({"broker", "all"} & set(contexts.split(","))),
        # with debug set, librdkafka logs at debug level whatever log_level says
        quietest=logging.DEBUG if debug_asked else _quietest(config),
    )
    routed: dict[str, object] = {**config, "logger": log}
    if contexts:
        routed["debug"] = contexts
    return routed


def client_log(config: Mapping[str, object]) -> LibrdkafkaLog | None:
    """The :class:`LibrdkafkaLog` :func:`route_client_log` put in ``config``, if any."""
    found: Any = config.get("logger")
    return found if isinstance(found, LibrdkafkaLog) else None
