"""kheaders' own config keys: stripped before librdkafka, classes loaded by dotted path."""

from __future__ import annotations

import pytest

from kheaders import ConfigurationError, Consumer, Producer
from kheaders._client.config import load_dotted, resolve
from tests.support import interceptors as fx

BOOT = {"bootstrap.servers": "127.0.0.1:9", "log_level": 0}  # nothing listens there


pytestmark = pytest.mark.usefixtures("clean_recorders")


def test_kheaders_keys_are_removed_and_classes_built_in_order() -> None:
    config = {
        **BOOT,
        "interceptor.classes": "tests.support.interceptors.Recorder, "
        "tests.support.interceptors.SecondRecorder",
        "value.serializer": "tests.support.interceptors.Utf8Serializer",
        "linger.ms": 5,
    }
    setup = resolve(config, interceptors=[], key=None, value=None, producer=True)
    assert setup.rdkafka == {**BOOT, "linger.ms": 5}
    assert [type(i).__name__ for i in setup.interceptors] == ["Recorder", "SecondRecorder"]
    assert all(i.config is config for i in setup.interceptors)  # type: ignore[attr-defined]
    assert setup.value is not None
    assert setup.key is None


def test_producer_with_interceptor_classes_is_accepted_by_librdkafka() -> None:
    config = {**BOOT, "interceptor.classes": [fx.Recorder], "key.serializer": fx.Utf8Serializer}
    p = Producer(config)
    assert [type(i) for i in p.interceptors.interceptors] == [fx.Recorder]
    p.close(timeout=0)
    assert fx.Recorder.instances[0].closed == 1


def test_config_interceptors_come_before_explicit_ones() -> None:
    explicit = fx.Recorder("explicit")
    p = Producer(
        {**BOOT, "interceptor.classes": "tests.support.interceptors.SecondRecorder"},
        interceptors=[explicit],
    )
    assert [n for n, _ in p.interceptors.on_send] == ["SecondRecorder", "Recorder"]
    assert explicit.config is None  # explicit instances are the caller's: not configured
    p.close(timeout=0)


def test_configure_failure_closes_earlier_interceptors_and_names_the_class() -> None:
    config = {
        **BOOT,
        "interceptor.classes": "tests.support.interceptors.Recorder,"
        "tests.support.interceptors.BadConfigure,tests.support.interceptors.SecondRecorder",
    }
    with pytest.raises(ConfigurationError, match=r"support\.interceptors\.BadConfigure") as info:
        Producer(config)
    assert "missing setting x.y" in str(info.value)
    assert isinstance(info.value.__cause__, RuntimeError)
    assert fx.events == [("Recorder", "configure"), ("Recorder", "close")]


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("nosuch_module_xyz.Thing", "cannot import module 'nosuch_module_xyz'"),
        ("tests.support.interceptors.Nope", "has no 'Nope'"),
        ("Plain", "not a dotted path"),
    ],
)
def test_bad_dotted_path_names_the_setting(path: str, text: str) -> None:
    with pytest.raises(ConfigurationError, match=r"interceptor\.classes") as info:
        Producer({**BOOT, "interceptor.classes": path})
    assert text in str(info.value)


def test_colon_form_of_dotted_path_works() -> None:
    assert load_dotted("tests.support.interceptors:Recorder", "x") is fx.Recorder


def test_misspelled_hook_in_config_is_rejected_with_its_name() -> None:
    with pytest.raises(TypeError, match="on_sned"):
        Producer({**BOOT, "interceptor.classes": "tests.support.interceptors.Misspelled"})


def test_serializer_set_twice_is_an_error() -> None:
    with pytest.raises(ConfigurationError, match=r"value\.serializer is set both"):
        Producer(
            {**BOOT, "value.serializer": fx.Utf8Serializer},
            value_serializer=fx.Utf8Serializer(),
        )


def test_serializer_without_serialize_is_rejected() -> None:
    with pytest.raises(ConfigurationError, match=r"key\.serializer.*serialize"):
        Producer({**BOOT, "key.serializer": "tests.support.interceptors.Recorder"})


def test_deserializer_keys_have_no_meaning_for_a_producer() -> None:
    with pytest.raises(ConfigurationError, match=r"key\.deserializer is a consumer setting"):
        Producer({**BOOT, "key.deserializer": fx.Utf8Deserializer})


def test_consumer_strips_its_keys_and_builds_deserializers() -> None:
    c = Consumer(
        {
            **BOOT,
            "group.id": "g",
            "value.deserializer": "tests.support.interceptors.Utf8Deserializer",
            "interceptor.classes": [fx.Recorder()],
        }
    )
    assert c.group_id == "g"
    c.close()
    assert fx.Recorder.instances[0].closed == 1


def test_librdkafka_rejection_still_closes_built_interceptors() -> None:
    with pytest.raises(Exception, match=r"no\.such\.property"):
        Producer({**BOOT, "no.such.property": 1, "interceptor.classes": [fx.Recorder]})
    assert fx.Recorder.instances[0].closed == 1


def test_settings_of_kheaders_interceptors_never_reach_librdkafka() -> None:
    config = {
        **BOOT,
        "interceptor.classes": "kheaders.interceptors.tracing.TracingProducerInterceptor,"
        "kheaders.interceptors.versioning.VersionStampInterceptor",
        "kheaders.tracing.mode": "propagate",
        "compaction.strategy": "header",
        "compaction.strategy.header": "seq",
    }
    p = Producer(config)  # librdkafka would reject any of these keys
    stamp = p.interceptors.interceptors[1]
    assert stamp.header == "seq"  # type: ignore[attr-defined]
    p.close(timeout=0)


def test_keys_an_interceptor_declares_are_its_own() -> None:
    class Declares:
        config_keys = ("acme.audit.level", "acme.audit.")

        def configure(self, config: object) -> None:
            self.seen = config

        def on_send(self, record: object) -> object:
            return record

    config = {
        **BOOT,
        "interceptor.classes": [Declares],
        "acme.audit.level": "high",
        "acme.audit.sink.url": "x",
    }
    p = Producer(config)
    assert p.interceptors.interceptors[0].seen["acme.audit.level"] == "high"  # type: ignore[attr-defined]
    p.close(timeout=0)
    with pytest.raises(Exception, match=r"acme\.audit\.level"):
        Producer({**BOOT, "acme.audit.level": "high"})  # nobody claims it: librdkafka's
