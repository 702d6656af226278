"""Old import paths keep working for a release, with a DeprecationWarning, and give the same
objects as the new ones: the top-level ``interceptors`` package is now ``kheaders.interceptors``;
trace-context parsing, redaction helpers and the hook protocols left the top level for
``kheaders.tracecontext``, ``kheaders.redaction`` and ``kheaders.hooks``.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

import kheaders
import kheaders.interceptors
from kheaders import Producer, ProducerRecord

ROOT = Path(__file__).resolve().parents[1]
MOVED = sorted(
    info.name
    for info in pkgutil.iter_modules(kheaders.interceptors.__path__)
    if not info.name.startswith("_")
)


@pytest.fixture
def fresh() -> Iterator[None]:
    """No ``interceptors`` module imported yet (the warning comes with the first import in a
    process); whatever was imported before is put back afterwards."""
    saved = {n: m for n, m in sys.modules.items() if n.partition(".")[0] == "interceptors"}
    for name in saved:
        del sys.modules[name]
    try:
        yield
    finally:
        for name in [n for n in sys.modules if n.partition(".")[0] == "interceptors"]:
            del sys.modules[name]
        sys.modules.update(saved)


def test_every_public_module_keeps_its_old_name() -> None:
    shims = sorted(p.stem for p in (ROOT / "interceptors").glob("*.py") if p.stem[0] != "_")
    assert "tracing" in MOVED
    assert shims == MOVED


@pytest.mark.usefixtures("fresh")
def test_the_old_import_warns_at_the_importing_line() -> None:
    with pytest.warns(DeprecationWarning, match=r"import 'kheaders\.interceptors'") as caught:
        import interceptors.tracing
    assert [w.filename for w in caught] == [__file__]
    assert interceptors.tracing.TracingProducerInterceptor is (
        kheaders.interceptors.tracing.TracingProducerInterceptor
    )


@pytest.mark.usefixtures("fresh")
@pytest.mark.parametrize("name", MOVED)
def test_the_old_module_gives_the_same_objects(name: str) -> None:
    with pytest.warns(DeprecationWarning, match="top-level .interceptors. package"):
        old = importlib.import_module(f"interceptors.{name}")
    new = importlib.import_module(f"kheaders.interceptors.{name}")
    public = [n for n in vars(new) if not n.startswith("_")]
    assert public
    assert all(getattr(old, n) is getattr(new, n) for n in public)
    helpers = [n for n in vars(new) if n.startswith("_") and not n.startswith("__")]
    assert all(getattr(old, n) is getattr(new, n) for n in helpers)  # as before the move
    with pytest.raises(AttributeError):
        _ = old.no_such_name


@pytest.mark.usefixtures("fresh")
def test_an_old_dotted_name_in_config_resolves_and_warns_at_the_client() -> None:
    config = {
        "bootstrap.servers": "127.0.0.1:9",  # nothing listens: nothing is sent
        "client.id": "svc",
        "interceptor.classes": "interceptors.client_id.ClientIdInterceptor",
    }
    with pytest.warns(DeprecationWarning, match="kheaders.interceptors") as caught:
        producer = Producer(config)
    try:
        assert [w.filename for w in caught] == [__file__]  # the line building the client
        (built,) = producer.interceptors.interceptors
        sent = producer.interceptors.send(ProducerRecord("t", b"v"))
    finally:
        producer.close(timeout=0)
    assert type(built) is kheaders.interceptors.client_id.ClientIdInterceptor
    assert sent.headers.last_value("client.id") == b"svc"


@pytest.mark.usefixtures("fresh")
def test_the_new_names_never_warn() -> None:
    config = {
        "bootstrap.servers": "127.0.0.1:9",
        "interceptor.classes": "kheaders.interceptors.client_id.ClientIdInterceptor",
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        importlib.reload(kheaders.interceptors.tracing)
        Producer(config).close(timeout=0)
    assert "interceptors" not in sys.modules


# Names that left the top level for their own public modules in 0.2.
MOVED_FROM_TOP = {
    "kheaders.hooks": [
        "Closeable",
        "Configurable",
        "InterceptorChain",
        "OnAcknowledgement",
        "OnCommit",
        "OnConsume",
        "OnSend",
    ],
    "kheaders.redaction": [
        "Redactor",
        "is_sensitive",
        "printable",
        "render_headers",
        "render_value",
    ],
    "kheaders.tracecontext": [
        "TraceParent",
        "extract_trace_parent",
        "extract_trace_state",
        "format_tracestate",
        "parse_traceparent",
        "parse_tracestate",
    ],
}
TOP_MOVES = [(home, name) for home, names in MOVED_FROM_TOP.items() for name in names]


def test_each_new_module_exports_exactly_the_moved_names() -> None:
    for home, names in MOVED_FROM_TOP.items():
        assert sorted(importlib.import_module(home).__all__) == sorted(names)


@pytest.mark.parametrize(("home", "name"), TOP_MOVES)
def test_a_moved_top_level_name_warns_at_the_using_line_and_is_the_same_object(
    home: str, name: str
) -> None:
    with pytest.warns(
        DeprecationWarning, match=rf"kheaders\.{name} is {home}\.{name} since 0\.2"
    ) as caught:
        old = getattr(kheaders, name)
    assert [w.filename for w in caught] == [__file__]
    assert old is getattr(importlib.import_module(home), name)
    assert name not in kheaders.__all__
    assert name not in dir(kheaders)


def test_a_from_import_of_a_moved_name_warns_at_the_importing_line() -> None:
    with pytest.warns(DeprecationWarning, match="kheaders.tracecontext") as caught:
        from kheaders import TraceParent
    assert {w.filename for w in caught} == {__file__}
    assert TraceParent is kheaders.tracecontext.TraceParent


def test_a_moved_class_names_its_new_module() -> None:
    assert kheaders.tracecontext.TraceParent.__module__ == "kheaders.tracecontext"
    assert kheaders.redaction.Redactor.__module__ == "kheaders.redaction"
    assert kheaders.hooks.InterceptorChain.__module__ == "kheaders.hooks"


def test_an_unknown_top_level_name_is_still_an_attribute_error() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError, match="no_such_name"):
            _ = kheaders.no_such_name
        assert not hasattr(kheaders, "TraceParnet")  # a typo is no moved name


def test_the_new_homes_never_warn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        for home, names in MOVED_FROM_TOP.items():
            module = importlib.import_module(home)
            for name in names:
                getattr(module, name)


RENAMED_SERDE = {
    "ProtectingSerializer": "ProtectedSerializer",
    "UnprotectingDeserializer": "ProtectedDeserializer",
}


@pytest.mark.parametrize(("old", "new"), sorted(RENAMED_SERDE.items()))
def test_a_renamed_serializer_warns_and_is_the_same_class(old: str, new: str) -> None:
    protect = importlib.import_module("kheaders.protect")
    with pytest.warns(DeprecationWarning, match=rf"kheaders\.protect\.{old} is") as caught:
        cls = getattr(protect, old)
    assert [w.filename for w in caught] == [__file__]
    assert cls is getattr(protect, new)
    assert cls.__name__ == new
    assert old not in protect.__all__


def test_an_old_serializer_name_in_config_still_resolves() -> None:
    """``value.serializer`` names a class by its dotted path: the old path still finds the
    class (which, without keys in the environment, refuses to build, naming its new name)."""
    config = {
        "bootstrap.servers": "127.0.0.1:9",  # nothing listens: nothing is sent
        "value.serializer": "kheaders.protect.ProtectingSerializer",
    }
    with (
        pytest.warns(DeprecationWarning, match="ProtectedSerializer"),
        pytest.raises(
            kheaders.ConfigurationError,
            match=r"value\.serializer: building kheaders\.protect\.ProtectedSerializer\(\)",
        ),
    ):
        Producer(config)


# -- dead letters: one home, kheaders.deadletter ----------------------------------------------

PROCESSING_MOVED = ["DeadLetter", "KHEADERS", "SPRING", "describe", "without_retry_state"]
TOP_MOVED = ["DeadLetterPublisher", "dead_letter_headers"]


@pytest.fixture
def no_spring_headers() -> Iterator[None]:
    """``kheaders.processing.spring_headers`` not imported yet (it warns when first imported)."""
    import kheaders.processing

    name = "kheaders.processing.spring_headers"
    saved = sys.modules.pop(name, None)
    attr = vars(kheaders.processing).pop("spring_headers", None)
    try:
        yield
    finally:
        sys.modules.pop(name, None)
        vars(kheaders.processing).pop("spring_headers", None)
        if saved is not None:
            sys.modules[name] = saved
        if attr is not None:
            kheaders.processing.spring_headers = attr


@pytest.mark.usefixtures("no_spring_headers")
def test_the_old_spring_headers_module_warns_at_the_importing_line_and_is_the_same() -> None:
    import kheaders.deadletter.spring as new

    with pytest.warns(DeprecationWarning, match=r"kheaders\.deadletter\.spring") as caught:
        from kheaders.processing.spring_headers import ATTEMPTS, decode_attempts
    assert [w.filename for w in caught] == [__file__]
    assert (ATTEMPTS, decode_attempts) == (new.ATTEMPTS, new.decode_attempts)
    old = importlib.import_module("kheaders.processing.spring_headers")
    assert all(getattr(old, n) is getattr(new, n) for n in new.__all__)
    assert old.__all__ == new.__all__


@pytest.mark.usefixtures("no_spring_headers")
def test_the_old_spring_headers_module_as_a_package_attribute_warns() -> None:
    import kheaders.deadletter.spring
    import kheaders.processing

    with pytest.warns(DeprecationWarning, match=r"kheaders\.deadletter\.spring") as caught:
        from kheaders.processing import spring_headers
    assert {w.filename for w in caught} == {__file__}  # the import's line (asked twice by it)
    assert spring_headers.EXCEPTION_FQCN == "kafka_exception-fqcn"
    vars(kheaders.processing).pop("spring_headers", None)
    with pytest.warns(DeprecationWarning, match=r"kheaders\.deadletter\.spring") as caught:
        decode = kheaders.processing.spring_headers.decode_attempts  # never imported by name
    assert [w.filename for w in caught] == [__file__]
    assert decode is kheaders.deadletter.spring.decode_attempts


@pytest.mark.parametrize("name", PROCESSING_MOVED)
def test_a_dead_letter_name_of_processing_warns_and_is_the_same_object(name: str) -> None:
    import kheaders.deadletter
    import kheaders.processing

    with pytest.warns(DeprecationWarning, match=rf"kheaders\.deadletter\.{name}") as caught:
        old = getattr(kheaders.processing, name)
    assert [w.filename for w in caught] == [__file__]
    assert old is getattr(kheaders.deadletter, name)
    assert name not in kheaders.processing.__all__
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = kheaders.processing.no_such_name


@pytest.mark.parametrize("name", TOP_MOVED)
def test_the_publisher_at_the_top_level_warns_and_is_the_same_object(name: str) -> None:
    import kheaders.deadletter

    with pytest.warns(DeprecationWarning, match=rf"kheaders\.deadletter\.{name}") as caught:
        old = getattr(kheaders, name)
    assert [w.filename for w in caught] == [__file__]
    assert old is getattr(kheaders.deadletter, name)
    assert name not in kheaders.__all__
    with pytest.warns(DeprecationWarning, match=rf"kheaders\.deadletter\.{name}"):
        exec(f"from kheaders import {name}", {})  # the import statement itself


def test_the_old_keywords_of_the_dead_letter_topic_warn_and_still_work() -> None:
    from kheaders.deadletter import DeadLetterPublisher
    from kheaders.mirror import Mirror

    producer = Producer({"bootstrap.servers": "127.0.0.1:9"})
    try:
        with pytest.warns(DeprecationWarning, match="dead_letter=") as caught:
            suffixed = DeadLetterPublisher(producer, topic_suffix=".dlt")
        assert [w.filename for w in caught] == [__file__]
        with pytest.warns(DeprecationWarning, match="dead_letter="):
            named = DeadLetterPublisher(producer, topic="all-dead")
    finally:
        producer.close(timeout=0)
    assert suffixed.topic_for("orders") == "orders.dlt"
    assert named.topic_for("orders") == "all-dead"
    with pytest.warns(DeprecationWarning, match="dead_letter=") as caught:
        mirror = Mirror("127.0.0.1:9", "127.0.0.1:8", ["orders"], dead_letter_topic="{topic}.dlq")
    assert [w.filename for w in caught] == [__file__]
    assert mirror.dead_letter.topic_for("orders") == "orders.dlq"


def test_the_new_dead_letter_names_never_warn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        from kheaders.deadletter import DeadLetter, DeadLetterPublisher, spring
        from kheaders.mirror import Mirror

        producer = Producer({"bootstrap.servers": "127.0.0.1:9"})
        try:
            publisher = DeadLetterPublisher(producer, "{topic}.dlq")
            default = DeadLetterPublisher(producer)
        finally:
            producer.close(timeout=0)
        mirror = Mirror("127.0.0.1:9", "127.0.0.1:8", ["orders"], dead_letter=DeadLetter())
    assert spring.ATTEMPTS == "retry_topic-attempts"
    assert publisher.topic_for("orders") == "orders.dlq"
    assert default.topic_for("orders") == "orders-dlt"  # Spring's rule, everywhere
    assert mirror.dead_letter.topic_for("orders") == "orders-dlt"
