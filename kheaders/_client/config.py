"""The client settings kheaders understands, taken out of a config before librdkafka sees it.

=======================  =========================================================
``interceptor.classes``  comma-separated dotted paths (``pkg.mod.Class``), or a list
                         of classes / instances; each class is built with no
                         arguments, then each is given ``configure(full_config)``
``key.serializer``       dotted path, class (built with no arguments) or instance;
``value.serializer``     likewise for the other three
``key.deserializer``
``value.deserializer``
=======================  =========================================================

Interceptors from the config come first, then those passed as ``interceptors=``.

Besides these five, every key starting with ``kheaders.`` (settings of kheaders'
interceptors, e.g. ``kheaders.tracing.mode``) or ``compaction.strategy`` (KIP-280's
settings, read by the version-stamp interceptor) is kheaders', as is every key an
interceptor lists in its optional ``config_keys`` attribute (exact names, or prefixes ending
in ``.``). Interceptors see them in ``configure(config)``; librdkafka never does.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from kheaders._errors import ConfigurationError
from kheaders._model.keys import c_string_problem, shown

INTERCEPTOR_CLASSES = "interceptor.classes"
KEY_SERIALIZER = "key.serializer"
VALUE_SERIALIZER = "value.serializer"
KEY_DESERIALIZER = "key.deserializer"
VALUE_DESERIALIZER = "value.deserializer"
KHEADERS_KEYS: tuple[str, ...] = (
    INTERCEPTOR_CLASSES,
    KEY_SERIALIZER,
    VALUE_SERIALIZER,
    KEY_DESERIALIZER,
    VALUE_DESERIALIZER,
)
OWN_PREFIXES: tuple[str, ...] = ("kheaders.", "compaction.strategy")
"""Keys starting with these are kheaders' settings, never librdkafka's."""


def _declared_keys(interceptors: Iterable[object]) -> tuple[set[str], tuple[str, ...]]:
    """The exact keys and the prefixes (ending in ``.``) interceptors declare as theirs."""
    exact: set[str] = set()
    prefixes: list[str] = []
    for i in interceptors:
        keys = getattr(i, "config_keys", ())
        for key in [keys] if isinstance(keys, str) else keys:
            if not isinstance(key, str):
                continue
            if key.endswith("."):
                prefixes.append(key)
            else:
                exact.add(key)
    return exact, tuple(prefixes)


def librdkafka_config(
    config: Mapping[str, object], interceptors: Iterable[object] = ()
) -> dict[str, object]:
    """``config`` without kheaders' keys and those the ``interceptors`` declare.

    >>> librdkafka_config({"bootstrap.servers": "h:9092", "kheaders.tracing.mode": "span",
    ...                    "interceptor.classes": "a.B"})
    {'bootstrap.servers': 'h:9092'}
    """
    exact, prefixes = _declared_keys(interceptors)
    own = OWN_PREFIXES + prefixes
    return {
        k: v
        for k, v in config.items()
        if k not in KHEADERS_KEYS and k not in exact and not k.startswith(own)
    }


def check_c_strings(config: Mapping[str, object]) -> None:
    """Refuse settings librdkafka cannot take intact: it reads names and text values as C
    strings, so a lone surrogate crashes the interpreter (or fails an assertion) and a NUL
    silently cuts the text.

    Raises ConfigurationError naming the setting (never showing a value: it may be a secret).
    """
    for name, value in config.items():
        if isinstance(name, str) and (problem := c_string_problem(name)) is not None:
            raise ConfigurationError(f"setting {shown(name)} {problem}")
        if isinstance(value, str) and (problem := c_string_problem(value)) is not None:
            raise ConfigurationError(f"setting {name!r}: its value {problem}")


def load_dotted(path: str, setting: str) -> object:
    """Import ``pkg.mod.Name`` (or ``pkg.mod:Name``) and return the object.

    Raises ConfigurationError naming the setting and the path when it does not resolve.
    """
    path = path.strip()
    module_name, sep, attr = path.partition(":")
    if not sep:
        module_name, _, attr = path.rpartition(".")
    if not module_name or not attr:
        raise ConfigurationError(f"{setting}: {path!r} is not a dotted path like 'pkg.mod.Class'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigurationError(
            f"{setting}: cannot import module {module_name!r} for {path!r}: {exc}"
        ) from exc
    obj: object = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError as exc:
            raise ConfigurationError(
                f"{setting}: module {module_name!r} has no {attr!r} (from {path!r})"
            ) from exc
    return obj


def _instantiate(spec: object, setting: str) -> object:
    """A dotted path or class becomes an instance built with no arguments; instances pass.

    Raises ConfigurationError naming the setting and class when building fails.
    """
    obj = load_dotted(spec, setting) if isinstance(spec, str) else spec
    if isinstance(obj, type):
        try:
            return obj()
        except Exception as exc:
            raise ConfigurationError(
                f"{setting}: building {obj.__module__}.{obj.__qualname__}() failed: {exc}"
            ) from exc
    return obj


def _specs(value: object) -> list[object]:
    if value is None:
        return []
    if isinstance(value, str):
        return [p for p in (s.strip() for s in value.split(",")) if p]
    if isinstance(value, Iterable):
        return list(value)
    return [value]


def _close_quietly(objs: Iterable[object]) -> None:
    for obj in objs:
        close = getattr(obj, "close", None)
        if callable(close):
            with contextlib.suppress(Exception):  # already failing: the first error matters
                close()


def build_interceptors(value: object, config: Mapping[str, object]) -> list[object]:
    """Build the ``interceptor.classes`` entries in order and give each ``configure(config)``.

    Raises ConfigurationError naming the class that could not be loaded, built or configured;
    the interceptors already built are closed first.
    """
    built: list[object] = []
    for spec in _specs(value):
        label = spec if isinstance(spec, str) else getattr(spec, "__qualname__", repr(spec))
        try:
            obj = _instantiate(spec, INTERCEPTOR_CLASSES)
            configure = getattr(obj, "configure", None)
            if callable(configure):
                try:
                    configure(config)
                except Exception as exc:
                    raise ConfigurationError(
                        f"{INTERCEPTOR_CLASSES}: {type(obj).__module__}."
                        f"{type(obj).__qualname__}.configure() failed: {exc}"
                    ) from exc
        except ConfigurationError:
            _close_quietly(reversed(built))
            raise
        except Exception as exc:  # pragma: no cover - defensive: _instantiate wraps errors
            _close_quietly(reversed(built))
            raise ConfigurationError(f"{INTERCEPTOR_CLASSES}: {label}: {exc}") from exc
        built.append(obj)
    return built


def _serde(
    config_value: object, explicit: object, setting: str, method: str
) -> Callable[..., object] | None:
    if config_value is not None and explicit is not None:
        raise ConfigurationError(
            f"{setting} is set both in the config and as a keyword argument: keep one"
        )
    spec = explicit if explicit is not None else config_value
    if spec is None:
        return None
    obj = _instantiate(spec, setting)
    bound = getattr(obj, method, None)
    if not callable(bound):
        raise ConfigurationError(f"{setting}: {obj!r} has no {method}(topic, headers, data)")
    return bound  # type: ignore[no-any-return]


@dataclass(slots=True)
class ClientSetup:
    """What a config and keyword arguments resolve to: librdkafka's part and ours."""

    rdkafka: dict[str, object]
    interceptors: list[object] = field(default_factory=list)
    key: Callable[..., object] | None = None
    """The bound ``serialize``/``deserialize`` method of the key (de)serializer, if any."""
    value: Callable[..., object] | None = None


def resolve(
    config: Mapping[str, object],
    *,
    interceptors: Iterable[object],
    key: object,
    value: object,
    producer: bool,
) -> ClientSetup:
    """Split ``config`` into librdkafka settings and kheaders' own (see the module doc),
    building what they name.

    Interceptors from ``interceptor.classes`` come first, then ``interceptors``.
    Raises ConfigurationError naming the setting (and class) at fault; a setting meant for
    the other side (e.g. ``key.deserializer`` in a producer config) is an error too.
    """
    check_c_strings(config)
    if producer:
        mine, theirs, method = (KEY_SERIALIZER, VALUE_SERIALIZER), "deserializer", "serialize"
    else:
        mine, theirs, method = (KEY_DESERIALIZER, VALUE_DESERIALIZER), "serializer", "deserialize"
    for wrong in (f"key.{theirs}", f"value.{theirs}"):
        if config.get(wrong) is not None:
            raise ConfigurationError(
                f"{wrong} is a {'consumer' if producer else 'producer'} setting"
                f" and has no meaning for a {'producer' if producer else 'consumer'}"
            )
    key_fn = _serde(config.get(mine[0]), key, mine[0], method)
    value_fn = _serde(config.get(mine[1]), value, mine[1], method)
    built = build_interceptors(config.get(INTERCEPTOR_CLASSES), config)
    everyone = [*built, *interceptors]
    return ClientSetup(librdkafka_config(config, everyone), everyone, key_fn, value_fn)
