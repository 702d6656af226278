"""What the Producer and the Consumer share as wrappers of a confluent-kafka client."""

from __future__ import annotations

from types import TracebackType
from typing import Any, Self


class ClientWrapper:
    """Context manager that closes the client, and delegation of every public attribute.

    Subclasses set :attr:`_client_attr` to the slot holding the wrapped confluent client and
    define ``close()``. Private names are never delegated (a missing ``_x`` is a bug here).
    """

    __slots__ = ()
    _client_attr: str = ""

    def close(self) -> Any:  # overridden
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(getattr(self, self._client_attr), name)
