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

Whatever reads settings from a client config declares them in a ``config_keys`` attribute:
exact names, or prefixes ending in ``.`` that claim every key below them. The clients
declare the five keys above; the Producer's header limits declare theirs
(:attr:`HeaderLimits.config_keys`); each interceptor declares its own (as
``VersionStampInterceptor`` declares KIP-280's ``compaction.strategy*``). Declared keys reach
interceptors in ``configure(config)`` and never librdkafka.

``kheaders.`` is kheaders' namespace: a key in it that no part of the client declares is an
error naming the closest declared key (the Java client warns about unknown configs; a typo
here would silently turn a feature off). So is a key declared for the other kind of client
(``key.deserializer`` or ``kheaders.header.limits.*`` for a consumer), a key that looks like
a misspelt declared one, and an interceptor of the other kind (a consumer interceptor given
to a producer).
"""

from __future__ import annotations

import contextlib
import difflib
import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from kheaders._client.chain import CONSUMER_HOOKS, PRODUCER_HOOKS, InterceptorChain, implements
from kheaders._client.deserializing import in_context
from kheaders._errors import ConfigurationError
from kheaders._model.keys import c_string_problem, shown
from kheaders._model.limits import HeaderLimits

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
NAMESPACE = "kheaders."
"""kheaders' own settings: each key in it must be declared by a part of the client."""
_LOOKALIKE = 0.9
"""How alike (difflib's ratio) an undeclared key must be to a declared one to be a typo."""


@dataclass(frozen=True, slots=True)
class DeclaredKeys:
    """The ``config_keys`` of a client's parts: exact keys and prefixes ending in ``.``.

    >>> class Audit:
    ...     config_keys = ("acme.audit.level", "acme.audit.sink.")
    >>> keys = DeclaredKeys.of([Audit()])
    >>> keys.claims("acme.audit.sink.url"), keys.claims("acme.other")
    (True, False)
    """

    exact: frozenset[str]
    prefixes: tuple[str, ...]

    @classmethod
    def of(cls, owners: Iterable[object]) -> DeclaredKeys:
        """The keys ``owners`` declare (a ``str`` or an iterable of them; others ignored)."""
        exact: set[str] = set()
        prefixes: list[str] = []
        for owner in owners:
            keys = getattr(owner, "config_keys", ())
            for key in [keys] if isinstance(keys, str) else keys:
                if isinstance(key, str):
                    (prefixes.append if key.endswith(".") else exact.add)(key)
        return cls(frozenset(exact), tuple(prefixes))

    def claims(self, key: str) -> bool:
        """Whether ``key`` is declared (exactly, or below a declared prefix)."""
        return key in self.exact or key.startswith(self.prefixes)


class _Keys:
    """A part of a client that only declares keys (the clients' own, header limits)."""

    __slots__ = ("config_keys",)

    def __init__(self, *keys: str) -> None:
        self.config_keys = keys


def _closest(key: str, known: Iterable[str], cutoff: float) -> str | None:
    found = difflib.get_close_matches(key, sorted(known), n=1, cutoff=cutoff)
    return found[0] if found else None


def check_keys(
    config: Mapping[str, object], declared: DeclaredKeys, elsewhere: Mapping[str, str], kind: str
) -> None:
    """Refuse the settings of ``config`` that no part of this ``kind`` of client declares.

    ``elsewhere`` maps the keys of the other kind of client to its name (``"consumer"``).
    Raises ConfigurationError naming the key, and the closest declared key when there is one,
    for: a key declared for the other kind; a ``kheaders.*`` key nobody declares; any other
    undeclared key that looks like a misspelt declared one (librdkafka would get it).
    """
    for key in config:
        if not isinstance(key, str) or declared.claims(key):
            continue  # a key that is not text is librdkafka's to refuse
        if key in elsewhere:
            if config[key] is None:
                continue
            raise ConfigurationError(
                f"{key} is a {elsewhere[key]} setting and has no meaning for a {kind}"
            )
        lookalike = _closest(key, declared.exact, _LOOKALIKE)
        if lookalike is None and not key.startswith(NAMESPACE):
            continue
        closest = lookalike or _closest(key, [*declared.exact, *elsewhere], 0.6)
        hint = (
            f"; did you mean {closest!r}?"
            if closest
            else f": nothing in this {kind} (its interceptors included) declares it"
        )
        raise ConfigurationError(f"unknown setting {key!r}{hint}")


def librdkafka_config(
    config: Mapping[str, object], interceptors: Iterable[object] = ()
) -> dict[str, object]:
    """``config`` without kheaders' keys (its namespace included) and those the
    ``interceptors`` declare.

    >>> librdkafka_config({"bootstrap.servers": "h:9092", "kheaders.tracing.mode": "span",
    ...                    "interceptor.classes": "a.B"})
    {'bootstrap.servers': 'h:9092'}
    """
    declared = DeclaredKeys.of([_Keys(*KHEADERS_KEYS, NAMESPACE), *interceptors])
    return {k: v for k, v in config.items() if not declared.claims(k)}


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
    chain: InterceptorChain
    interceptors: list[object]
    """Every interceptor built or given, in order (the chain leaves out idle ones)."""
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
    strict: bool = False,
) -> ClientSetup:
    """Split ``config`` into librdkafka settings and kheaders' own (see the module doc),
    building what they name, the interceptor chain included.

    Interceptors from ``interceptor.classes`` come first, then ``interceptors``; whatever
    was built is closed again when a later step fails.
    Raises ConfigurationError naming the setting (and class) at fault; a setting meant for
    the other side (e.g. ``key.deserializer`` in a producer config) is an error too.
    """
    check_c_strings(config)
    serde = (KEY_SERIALIZER, VALUE_SERIALIZER)
    deserde = (KEY_DESERIALIZER, VALUE_DESERIALIZER)
    limits = HeaderLimits.config_keys
    if producer:
        kind, mine, method = "producer", serde, "serialize"
        own, theirs = (
            _Keys(INTERCEPTOR_CLASSES, *serde, *limits),
            dict.fromkeys(deserde, "consumer"),
        )
    else:
        kind, mine, method = "consumer", deserde, "deserialize"
        own = _Keys(INTERCEPTOR_CLASSES, *deserde)
        theirs = dict.fromkeys((*serde, *limits), "producer")
    for wrong, other in theirs.items():  # early: before anything is built
        if config.get(wrong) is not None:
            raise ConfigurationError(
                f"{wrong} is a {other} setting and has no meaning for a {kind}"
            )
    key_fn = _serde(config.get(mine[0]), key, mine[0], method)
    value_fn = _serde(config.get(mine[1]), value, mine[1], method)
    if not producer:  # a deserializer that takes context= gets the consumed key
        key_fn, value_fn = in_context("key", key_fn), in_context("value", value_fn)
    explicit = list(interceptors)
    built = build_interceptors(config.get(INTERCEPTOR_CLASSES), config)
    everyone = [*built, *explicit]
    try:
        _check_kinds(built, INTERCEPTOR_CLASSES, producer)
        _check_kinds(explicit, "interceptors", producer)
        check_keys(config, DeclaredKeys.of([own, *everyone]), theirs, kind)
    except ConfigurationError:
        _close_quietly(reversed(built))
        raise
    hooks = PRODUCER_HOOKS if producer else CONSUMER_HOOKS
    try:
        chain = InterceptorChain(everyone, strict=strict, hooks=hooks)
    except BaseException:
        _close_quietly(everyone)
        raise
    return ClientSetup(librdkafka_config(config, everyone), chain, everyone, key_fn, value_fn)


def _check_kinds(interceptors: Iterable[object], setting: str, producer: bool) -> None:
    """Raise ConfigurationError (naming ``setting``) for an interceptor of the other kind:
    one with consumer hooks only given to a producer, or the reverse.
    """
    mine, theirs = (
        (PRODUCER_HOOKS, CONSUMER_HOOKS) if producer else (CONSUMER_HOOKS, PRODUCER_HOOKS)
    )
    kind, other = ("producer", "consumer") if producer else ("consumer", "producer")
    for i in interceptors:
        if not isinstance(i, type) and not implements(i, mine) and implements(i, theirs):
            raise ConfigurationError(
                f"{setting}: {type(i).__module__}.{type(i).__qualname__} is a {other}"
                f" interceptor ({', '.join(theirs)}); a {kind} runs {', '.join(mine)}"
            )
