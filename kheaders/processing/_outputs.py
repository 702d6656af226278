"""The records a handler of an exactly-once processor emits for the record in hand:
:func:`emit`, and the :class:`Outputs` the processor collects them in."""

from __future__ import annotations

from typing import NamedTuple

from kheaders._errors import ProcessingError
from kheaders._model.headers import Headers, HeaderTypes
from kheaders.processing._delivery import RUNNING


class Output(NamedTuple):
    """One record to send in the transaction once the handler returned."""

    topic: str
    value: object
    key: object
    partition: int
    headers: Headers | None


class Outputs:
    """The current attempt's outputs: collected while the handler runs, taken when it ends.

    Only one record is in hand at a time (the driver calls one handler at a time), so one
    list serves every record: :meth:`begin` empties it for an attempt, :meth:`end` hands it
    over and closes it (an :meth:`add` outside an attempt is refused).
    """

    __slots__ = ("_open", "_records")

    def __init__(self) -> None:
        self._records: list[Output] = []
        self._open = False

    def begin(self) -> None:
        """An attempt starts: nothing emitted yet (a failed attempt's outputs are dropped)."""
        self._records = []
        self._open = True

    def end(self) -> list[Output]:
        """The attempt is over: what it emitted (to send only if it returned)."""
        self._open = False
        taken, self._records = self._records, []
        return taken

    def add(
        self, topic: str, value: object, key: object, headers: HeaderTypes, partition: int
    ) -> None:
        """Keep one output. Raises ProcessingError outside a handler's attempt, TypeError or
        ValueError for a bad topic, partition or headers (in the handler: its failure)."""
        if not self._open:
            raise ProcessingError(
                "emit() sends from inside a handler call (not after it returned, nor from"
                " another thread)"
            )
        if not isinstance(topic, str) or not topic:
            raise TypeError(f"emit(): topic must be a non-empty str, got {type(topic).__name__}")
        if not isinstance(partition, int) or isinstance(partition, bool) or partition < -1:
            raise TypeError(f"emit(): partition must be an int >= -1, got {partition!r}")
        copied = None if headers is None else Headers(headers)  # checked now, in the handler
        self._records.append(Output(topic, value, key, partition, copied))


def emit(
    topic: str,
    value: object = None,
    key: object = None,
    *,
    headers: HeaderTypes = None,
    partition: int = -1,
) -> None:
    """Send a record from a handler of an :class:`ExactlyOnceProcessor`, inside the
    transaction of the record in hand: it becomes visible to ``read_committed`` readers
    together with that record's offset commit, never twice.

    Nothing is sent until the handler returns: the outputs of an attempt that raised are
    dropped (an in-place attempt starts again with none). ``value`` and ``key`` go to the
    processor's producer as given (bytes, str, or what ``producer_config``'s serializers
    take); ``headers`` as for :meth:`kheaders.Producer.produce` (a consumed record's
    read-only Headers are copied).

    Raises ProcessingError outside such a handler, TypeError/ValueError for a topic that is
    not a non-empty str or headers that cannot be sent.
    """
    running = RUNNING.get()
    outputs = getattr(running, "_outputs", None)
    if not isinstance(outputs, Outputs):
        raise ProcessingError(
            "emit() sends from the handler of a running ExactlyOnceProcessor (an at-least-once"
            " processor has no transaction to put it in: produce with a Producer there)"
        )
    outputs.add(topic, value, key, headers, partition)
