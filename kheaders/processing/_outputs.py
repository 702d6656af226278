"""The records a handler of an exactly-once processor emits for the record in hand."""

from __future__ import annotations

from typing import NamedTuple

from kheaders._errors import ProcessingError
from kheaders._model.headers import Headers, HeaderTypes


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
