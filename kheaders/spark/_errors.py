"""Errors of the Spark source and sink (leaves of the kheaders exception tree)."""

from __future__ import annotations

import re

from kheaders._errors import ConfigurationError, KHeadersError


class DataLossError(KHeadersError, RuntimeError):
    """Offsets a query needs are no longer in the log; ``failOnDataLoss=false`` skips them."""


class DeliveryError(KHeadersError, RuntimeError):
    """A write task could not deliver every record to Kafka; the task (and query) fails."""


class TopicNotFoundError(ConfigurationError):
    """A topic (or partition) the read names does not exist; the message names it."""


class WorkerSetupError(KHeadersError, RuntimeError):
    """Spark's Python workers cannot import kheaders (or confluent-kafka, pyarrow)."""


_RAISED = re.compile(r"(?P<name>[A-Za-z_][\w.]*): (?P<message>.*)", re.S)
_SPARK_TAIL = ("SQLSTATE", "JVM stacktrace", "at org.", "at java.", "at scala.")


def python_cause(exc: BaseException) -> str | None:
    """The Python error a Spark exception carries from a Python worker or data source (the
    last traceback's exception line and its continuation), without Spark's wrapping and the
    traceback; a kheaders error as its message alone, any other as ``Name: message``.

    None when the exception holds no Python traceback. What Spark appends after the
    exception (``SQLSTATE``, a JVM stack trace) is left out.
    """
    text = str(exc)
    start = text.rfind("Traceback (most recent call last):")
    if start < 0:
        return None
    lines = text[start:].splitlines()[1:]
    first = next((i for i, line in enumerate(lines) if line and not line[0].isspace()), None)
    if first is None:
        return None
    raised = [lines[first]]
    for line in lines[first + 1 :]:
        if line.strip().startswith(_SPARK_TAIL):
            break
        raised.append(line)
    found = _RAISED.fullmatch("\n".join(raised).strip())
    if found is None:
        return "\n".join(raised).strip()
    name, message = found["name"], found["message"]
    if name.startswith("kheaders."):
        return str(message)
    return f"{name.rsplit('.', 1)[-1]}: {message}"
