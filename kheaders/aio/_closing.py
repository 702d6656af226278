"""``async with`` for the asyncio clients: leaving the block awaits ``close()``."""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, Self


class AsyncClosing:
    """Mixin: ``async with client:`` returns the client and awaits its ``close()`` on exit."""

    __slots__ = ()

    if TYPE_CHECKING:  # each client defines its own

        async def close(self) -> object: ...

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
