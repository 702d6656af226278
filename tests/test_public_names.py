"""Public names only: every class a public module exports reports that module (the path a
user imports, as httpx does), so error messages, reprs, pickles and the dead-letter
``error.type`` header never name a private module; ``dir()`` of a package lists its API."""

from __future__ import annotations

import importlib
import pickle
import pkgutil
import re
from types import ModuleType

import pytest
from confluent_kafka import Message

import kheaders
from kheaders import ConfigurationError, DecodeError, Headers
from kheaders.deadletter import dead_letter_headers

DEPRECATED = {"kheaders.processing.spring_headers"}
"""Old names of moved modules (tests/test_moved_names.py): importing one warns."""
PUBLIC = sorted(
    info.name
    for info in pkgutil.walk_packages(kheaders.__path__, "kheaders.")
    if not any(part.startswith("_") for part in info.name.split("."))
    and info.name not in DEPRECATED
)
MODULES = ["kheaders", *PUBLIC]
"""The deprecated top-level ``interceptors`` package is left out: its modules re-export
``kheaders.interceptors``' classes, which name their new home (tests/test_moved_names.py)."""


def _private(module: str) -> bool:
    return any(part.startswith("_") for part in module.split("."))


def _public_classes() -> list[tuple[str, str, type]]:
    out = []
    for name in MODULES:
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", ()):
            obj = getattr(module, attr)
            if isinstance(obj, type):
                out.append((name, attr, obj))
    return out


def test_the_walk_covers_every_public_package() -> None:
    exported = {module for module, _, _ in _public_classes()}
    assert {"kheaders", "kheaders.aio", "kheaders.broker", "kheaders.compaction"} <= exported
    assert {
        "kheaders.deadletter",
        "kheaders.spark",
        "kheaders.interceptors.tracing",
        "kheaders.interceptors.metrics",
        "kheaders.tracecontext",
        "kheaders.redaction",
        "kheaders.hooks",
    } <= exported


@pytest.mark.parametrize(("module", "name", "cls"), _public_classes())
def test_every_exported_class_names_a_public_module_that_exports_it(
    module: str, name: str, cls: type
) -> None:
    assert not _private(cls.__module__), f"{module}.{name} reports {cls.__module__}"
    home = importlib.import_module(cls.__module__)
    assert getattr(home, cls.__qualname__) is cls  # pickle and dotted lookups find it there


def _packages() -> list[ModuleType]:
    return [
        m
        for m in map(importlib.import_module, MODULES)
        if hasattr(m, "__all__") and hasattr(m, "__path__")
    ]


@pytest.mark.parametrize("package", _packages(), ids=lambda m: m.__name__)
def test_dir_of_a_package_lists_its_api_and_submodules_only(package: ModuleType) -> None:
    stray = [
        n
        for n in dir(package)
        if not n.startswith("_")
        and n not in package.__all__
        and not isinstance(getattr(package, n), ModuleType)
    ]
    assert not stray, f"dir({package.__name__}) lists {stray}"  # e.g. ``annotations``


def test_an_error_names_the_public_class() -> None:
    err = DecodeError("truncated", 3)
    assert type(err).__module__ == "kheaders"
    assert pickle.loads(pickle.dumps(err)).args == err.args
    assert repr(pickle.loads(pickle.dumps(Headers([("a", b"1")])))) == "Headers([('a', b'1')])"


def test_the_dead_letter_error_type_header_is_a_public_name() -> None:
    msg = Message(topic="orders", partition=0, offset=5, key=b"k", value=b"v", headers=[])
    headers = dead_letter_headers(msg, DecodeError("truncated", 3))
    assert headers.last_value("kheaders.dlt.error.type") == b"kheaders.DecodeError"


def test_an_interceptor_of_the_wrong_kind_is_named_by_its_public_path() -> None:
    with pytest.raises(ConfigurationError) as caught:
        kheaders.Consumer(
            {
                "group.id": "g",
                "interceptor.classes": "kheaders.interceptors.tracing.TracingProducerInterceptor",
            }
        )
    assert "kheaders.interceptors.tracing.TracingProducerInterceptor is a producer" in str(
        caught.value
    )
    assert "_tracing_producer" not in str(caught.value)


@pytest.mark.parametrize(("value", "codec"), [(7, "LONG"), (True, "BOOL")])
def test_a_number_as_a_header_value_points_at_the_typed_values(value: object, codec: str) -> None:
    with pytest.raises(TypeError, match=r"got (int|bool)") as caught:
        Headers().add("version", value)  # type: ignore[arg-type]
    assert f"Headers.add_value('version', v, kheaders.{codec})" in str(caught.value)
    with pytest.raises(TypeError, match="add_value"):
        Headers([("version", value)])  # type: ignore[list-item]


TOP_LEVEL = {
    "clients": {
        "Consumer",
        "Producer",
        "ProducerRecord",
        "RecordMetadata",
        "ShareConsumer",
        "wrap_consumer",
        "wrap_producer",
        "wrap_share_consumer",
    },
    "headers and typed values": {
        "BOOL",
        "JSON",
        "LONG",
        "TEXT",
        "TEXT_LENIENT",
        "UUID",
        "VARLONG",
        "Header",
        "HeaderLimits",
        "HeaderTypes",
        "HeaderValue",
        "Headers",
        "TaggedStruct",
        "ValueCodec",
    },
    "serde": {
        "CONTENT_TYPE",
        "BytesDeserializer",
        "BytesSerializer",
        "ContentTypeDeserializer",
        "Deserializer",
        "DoubleDeserializer",
        "DoubleSerializer",
        "FromConfluentDeserializer",
        "FromConfluentSerializer",
        "IntegerDeserializer",
        "IntegerSerializer",
        "JsonDeserializer",
        "JsonSerializer",
        "LongDeserializer",
        "LongSerializer",
        "SerializationContext",
        "Serializer",
        "StringDeserializer",
        "StringSerializer",
        "ToConfluentDeserializer",
        "ToConfluentSerializer",
        "from_confluent",
        "media_type",
        "to_confluent",
    },
    "setup": {"COMPILED", "__version__", "config_bool", "configure_logging"},
}
"""What ``import kheaders`` offers, by concept: the names most users need. Trace-context
parsing, redaction and the hook protocols have their own modules (``kheaders.tracecontext``,
``kheaders.redaction``, ``kheaders.hooks``); runners live in their packages."""


def test_the_top_level_holds_the_names_users_need_and_every_error() -> None:
    errors = {n for n in kheaders.__all__ if n.endswith("Error")}
    assert all(issubclass(getattr(kheaders, n), kheaders.KHeadersError) for n in errors)
    expected = set().union(*TOP_LEVEL.values())
    assert set(kheaders.__all__) - errors == expected


def test_no_trace_context_redaction_or_hook_name_is_at_the_top_level() -> None:
    for module in ("kheaders.tracecontext", "kheaders.redaction", "kheaders.hooks"):
        assert not set(importlib.import_module(module).__all__) & set(kheaders.__all__)


VERB = re.compile(r"[a-z]{3,}ing$")
"""A stem ending in a present participle (``Protecting``; ``String`` is a noun)."""


def _serde_classes() -> list[tuple[str, str]]:
    """(module, name) of every public class with a ``serialize`` or ``deserialize`` method
    (the protocols themselves left out)."""
    protocols = {kheaders.Serializer, kheaders.Deserializer}
    return sorted(
        {
            (module, name)
            for module, name, cls in _public_classes()
            if cls not in protocols
            and (
                callable(getattr(cls, "serialize", None))
                or callable(getattr(cls, "deserialize", None))
            )
        }
    )


def test_every_serializer_is_named_for_its_format() -> None:
    """One pattern: ``<Format>Serializer`` / ``<Format>Deserializer``, the stem a noun for
    what the bytes are (``Json``, ``Protected``, ``CloudEvent``), never a verb
    (``ProtectingSerializer`` was renamed); a pair shares its stem."""
    found = _serde_classes()
    assert ("kheaders.protect", "ProtectedSerializer") in found
    wrong = []
    for module, name in found:
        cls = getattr(importlib.import_module(module), name)
        suffix = "Deserializer" if callable(getattr(cls, "deserialize", None)) else "Serializer"
        stem = name.removesuffix(suffix)
        if stem == name or not stem or VERB.search(stem):
            wrong.append(f"{module}.{name}")
    assert not wrong, wrong
