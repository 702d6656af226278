"""What a failure says about itself: the exception to name, its root cause, a log line."""

from __future__ import annotations

from kheaders._errors import DeserializationError
from kheaders._model.redact import printable

MAX_LOGGED = 500
"""Characters of an exception's message kept in ``ProcessingError`` and log events."""


def failing_exception(error: BaseException) -> tuple[BaseException, str | None]:
    """The exception that says why (a deserializer's own, for a DeserializationError) and
    the field it concerns (``key``/``value`` for a deserialization failure, else None)."""
    if isinstance(error, DeserializationError):
        return (error.__cause__ or error), error.field
    return error, None


def root_cause(error: BaseException) -> BaseException:
    """The last exception of ``error``'s ``__cause__`` chain (``error`` itself without one)."""
    seen = {id(error)}
    while error.__cause__ is not None and id(error.__cause__) not in seen:
        error = error.__cause__
        seen.add(id(error))
    return error


def describe_error(error: BaseException, limit: int = MAX_LOGGED) -> str:
    """``Type: message`` of a handler's exception, the message cut to ``limit`` characters
    and escaped (no newline or terminal control reaches a log line). The message is the one
    the handler's own exception carries: kheaders adds no key or value to it. A
    DeserializationError shows kheaders' own message (topic, partition, offset, field and
    the deserializer's exception type), never the deserializer's, which may quote the bytes.

    >>> describe_error(ValueError("card\\nexpired")), describe_error(KeyError("x" * 9), 4)
    ('ValueError: card\\\\nexpired', "KeyError: 'xxx...")
    """
    name = type(error).__qualname__
    text = str(error)
    if not text:
        return name
    if len(text) > limit:
        text = text[:limit] + "..."
    return f"{name}: {printable(text)}"
