"""Reading interceptor settings from a client config dict (values may be text or typed)."""

from __future__ import annotations

from collections.abc import Mapping

from kheaders import ConfigurationError, config_bool

Config = Mapping[str, object]
"""A client configuration as interceptors receive it in ``configure``."""


def get_bool(config: Config, key: str, default: bool) -> bool:
    """``config[key]`` as a bool (:func:`kheaders.config_bool`'s spellings), else ``default``.

    Raises ConfigurationError naming ``key`` for any other value.
    """
    value = config.get(key)
    return default if value is None else config_bool(value, key)


def get_int(config: Config, key: str, default: int, minimum: int = 0) -> int:
    """``config[key]`` as an int >= ``minimum``, else ``default``.

    Raises ConfigurationError naming ``key`` when it is not such an int.
    """
    value = config.get(key)
    if value is None:
        return default
    try:
        number = int(str(value).strip()) if not isinstance(value, int) else value
    except ValueError as exc:
        raise ConfigurationError(f"{key}: expected an integer, got {value!r}") from exc
    if number < minimum:
        raise ConfigurationError(f"{key}: must be >= {minimum}, got {number}")
    return number


def get_str(config: Config, key: str, default: str | None = None) -> str | None:
    """``config[key]`` as text (stripped; empty counts as absent), else ``default``."""
    value = config.get(key)
    if value is None:
        return default
    text = str(value).strip()
    return text or default


def get_choice(config: Config, key: str, default: str, choices: tuple[str, ...]) -> str:
    """``config[key]`` (lowercased) if it is one of ``choices``, else ``default``.

    Raises ConfigurationError naming ``key`` and the choices for any other value.
    """
    text = get_str(config, key)
    if text is None:
        return default
    text = text.lower()
    if text not in choices:
        raise ConfigurationError(f"{key}: expected one of {', '.join(choices)}, got {text!r}")
    return text


def get_list(config: Config, key: str) -> tuple[str, ...] | None:
    """``config[key]`` as names: a comma-separated string or a list; ``None`` when absent."""
    value = config.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        return tuple(p.strip() for p in value.split(",") if p.strip())
    if isinstance(value, list | tuple | set | frozenset):
        return tuple(str(p).strip() for p in value if str(p).strip())
    raise ConfigurationError(f"{key}: expected a comma-separated string or a list")


SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"


def server_address(config: Config) -> tuple[str, int | None] | None:
    """The first ``bootstrap.servers`` entry as ``(host, port)`` (port ``None`` if absent)."""
    servers = get_str(config, "bootstrap.servers")
    if not servers:
        return None
    first = servers.split(",")[0].strip()
    if "://" in first:
        first = first.split("://", 1)[1]
    host, sep, port = first.rpartition(":")
    if not sep:
        return (first, None) if first else None
    host = host.strip("[]")
    try:
        return host, int(port)
    except ValueError:
        return host or first, None


def server_attributes(config: Config) -> dict[str, str | int]:
    """OpenTelemetry's ``server.address`` and ``server.port`` for the first
    ``bootstrap.servers`` entry (no port when it names none; empty when there is none).

    >>> server_attributes({"bootstrap.servers": "SSL://[::1]:9093,kafka-2:9092"})
    {'server.address': '::1', 'server.port': 9093}
    >>> server_attributes({"bootstrap.servers": "kafka-1"}), server_attributes({})
    ({'server.address': 'kafka-1'}, {})
    """
    server = server_address(config)
    if server is None:
        return {}
    host, port = server
    return {SERVER_ADDRESS: host} if port is None else {SERVER_ADDRESS: host, SERVER_PORT: port}
