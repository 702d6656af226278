"""What the Producer and the Consumer share as wrappers of a confluent-kafka client.

* Every public method of the confluent class that the wrapper does not define itself is
  a real attribute of the wrapper class (:class:`Delegated`), generated once from the
  confluent class when the wrapper class is defined. So ``super().unassign()`` in a
  subclass, ``dir()``, ``hasattr`` and mocks all see them, as they see confluent's.
* Constructor shapes as confluent-kafka's (:func:`client_config`).
* Ownership: the wrapper owns the client it wraps, whether kheaders built it or not:
  ``close()`` and leaving a ``with`` block close the wrapped client too, as they would close
  the confluent client the wrapper stands in for.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import Any, Self


class Delegated:
    """A method of the wrapped confluent client, exposed on the wrapper class.

    ``wrapper.name`` (and ``super().name`` in a subclass) is the wrapped client's bound
    method itself: no extra call frame per use.
    """

    def __init__(self, name: str, doc: str | None) -> None:
        self._name = name
        self.__doc__ = doc

    def __get__(self, obj: ClientWrapper | None, owner: type | None = None) -> Any:
        if obj is None:
            return self
        return getattr(obj.wrapped, self._name)

    def __repr__(self) -> str:
        return f"<delegated method {self._name!r}>"


class ClientWrapper:
    """Context manager that closes the client; confluent's public methods, delegated.

    A subclass names the confluent class it stands for (``class Consumer(ClientWrapper,
    client=confluent_kafka.Consumer)``) and defines ``wrapped`` and ``close()``. Attributes a
    wrapped object has beyond its confluent class (a ``SerializingProducer``'s, say) are
    still reached through ``__getattr__``; private names never are.
    """

    __slots__ = ()

    def __init_subclass__(cls, client: type | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if client is None:
            return
        for name in dir(client):
            if name.startswith("_") or any(name in k.__dict__ for k in cls.__mro__[:-1]):
                continue
            setattr(cls, name, Delegated(name, getattr(client, name).__doc__))

    @property
    def wrapped(self) -> Any:  # overridden
        """The confluent-kafka client (or the object wrapped in its place)."""
        raise NotImplementedError

    def close(self) -> Any:  # overridden
        raise NotImplementedError

    def __bool__(self) -> bool:
        """Always true, as a confluent client is (a producer's ``len()`` may be 0)."""
        return True

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
        if name.startswith("_") or name == "wrapped":  # "wrapped": not set up (yet)
            if name in _fields(type(self)):
                # a subclass whose __init__ never called ours: as confluent's uninitialised client
                raise RuntimeError(
                    f"{self._closed_message} (or never set up: a subclass's __init__ must call"
                    " super().__init__(config))"
                )
            raise AttributeError(name)
        return getattr(self.wrapped, name)

    _closed_message = "Handle has been closed"
    """confluent-kafka's message for a closed (or never set up) client of this kind."""


def _fields(cls: type) -> frozenset[str]:
    """The slot names ``cls`` and its bases declare (the wrapper's own fields)."""
    return frozenset(
        name
        for klass in cls.__mro__
        for name in (klass.__dict__.get("__slots__", ()) if isinstance(klass, type) else ())
    )


def client_config(
    config: Mapping[str, object] | None, kwargs: Mapping[str, object], logger: object
) -> dict[str, object]:
    """One config from the shapes confluent-kafka accepts: a dict, keyword arguments, both
    (keywords win), and ``logger=``.

    Raises TypeError('expected configuration dict') when there is none, or ``config`` is not
    a mapping, as confluent-kafka does.
    """
    if (config is None and not kwargs) or (config is not None and not isinstance(config, Mapping)):
        raise TypeError("expected configuration dict")
    merged = {**(config or {}), **kwargs}
    if logger is not None:
        merged["logger"] = logger
    return merged


def refuse_async(client: object, wrapper: str) -> None:
    """Raise TypeError for a ``confluent_kafka.aio`` client given to a sync ``wrapper``."""
    module = type(client).__module__
    if module == "confluent_kafka.aio" or module.startswith("confluent_kafka.aio."):
        raise TypeError(
            f"{wrapper}() takes a synchronous confluent-kafka client, got the asyncio"
            f" {type(client).__name__}: use kheaders.aio (AIOProducer/AIOConsumer) instead"
        )
