"""Config keys are declared by what reads them; unknown and misplaced settings are errors."""

from __future__ import annotations

import inspect

import pytest

import kheaders.interceptors.client_id
import kheaders.interceptors.correlation
import kheaders.interceptors.logging
import kheaders.interceptors.metrics
import kheaders.interceptors.tracing
import kheaders.interceptors.versioning
from kheaders import ConfigurationError, Consumer, HeaderLimits, Producer
from kheaders._client.config import resolve
from kheaders.compaction import CompactionRules
from tests.support import interceptors as fx

BOOT = {"bootstrap.servers": "127.0.0.1:9", "log_level": 0}  # nothing listens there
TRACING_PRODUCER = "kheaders.interceptors.tracing.TracingProducerInterceptor"
TRACING_CONSUMER = "kheaders.interceptors.tracing.TracingConsumerInterceptor"

INTERCEPTOR_CLASSES = sorted(
    {
        cls
        for module in (
            kheaders.interceptors.client_id,
            kheaders.interceptors.correlation,
            kheaders.interceptors.logging,
            kheaders.interceptors.metrics,
            kheaders.interceptors.tracing,
            kheaders.interceptors.versioning,
        )
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if cls.__module__.startswith("kheaders.interceptors")
        and callable(getattr(cls, "configure", None))
    },
    key=lambda c: c.__qualname__,
)


pytestmark = pytest.mark.usefixtures("clean_recorders")


def test_every_interceptor_of_the_package_declares_the_keys_it_reads() -> None:
    assert len(INTERCEPTOR_CLASSES) >= 8
    for cls in INTERCEPTOR_CLASSES:
        keys = cls.config_keys  # type: ignore[attr-defined]
        assert keys, cls
        assert all(isinstance(k, str) and k for k in keys), cls
        # every kheaders.* key constant its module defines or imports is declared
        named = vars(inspect.getmodule(cls))
        found = {v for n, v in named.items() if n.endswith("_KEY") and isinstance(v, str)}
        assert {k for k in found if k.startswith("kheaders.")} <= set(keys), cls


def test_a_misspelt_kheaders_setting_names_the_closest_known_one() -> None:
    config = {**BOOT, "interceptor.classes": TRACING_PRODUCER, "kheaders.tracing.mdoe": "span"}
    with pytest.raises(
        ConfigurationError,
        match=r"'kheaders\.tracing\.mdoe'; did you mean 'kheaders\.tracing\.mode'",
    ):
        Producer(config)


def test_a_kheaders_setting_nothing_declares_is_an_error() -> None:
    with pytest.raises(
        ConfigurationError, match=r"'kheaders\.tracing\.mode'.*nothing in this consumer"
    ):
        Consumer({**BOOT, "group.id": "g", "kheaders.tracing.mode": "span"})


def test_a_misspelt_interceptor_setting_outside_the_namespace_is_caught_too() -> None:
    config = {
        **BOOT,
        "interceptor.classes": "kheaders.interceptors.versioning.VersionStampInterceptor",
        "compaction.strategy.heder": "rev",
    }
    with pytest.raises(ConfigurationError, match=r"did you mean 'compaction\.strategy\.header'"):
        Producer(config)


def test_a_misspelt_client_setting_is_caught_before_librdkafka() -> None:
    with pytest.raises(ConfigurationError, match=r"did you mean 'value\.serializer'"):
        Producer({**BOOT, "value.serialiser": fx.Utf8Serializer})


def test_a_config_can_serve_both_tracing_interceptors() -> None:
    shared = {
        **BOOT,
        "kheaders.tracing.mode": "span",
        "kheaders.tracing.link.only": "true",
    }
    for cls, producer in ((TRACING_PRODUCER, True), (TRACING_CONSUMER, False)):
        setup = resolve(
            {**shared, "interceptor.classes": cls},
            interceptors=[],
            key=None,
            value=None,
            producer=producer,
        )
        assert setup.rdkafka == BOOT
        assert len(setup.interceptors) == 1


def test_header_limits_are_a_producer_setting() -> None:
    key = "kheaders.header.limits.max.headers"
    assert key in HeaderLimits.config_keys
    Producer({**BOOT, key: "5"}).close(timeout=0)
    with pytest.raises(ConfigurationError, match=rf"{key} is a producer setting"):
        Consumer({**BOOT, "group.id": "g", key: "5"})


def test_compaction_keys_belong_to_what_reads_them() -> None:
    assert set(CompactionRules.config_keys) == {
        "compaction.strategy",
        "compaction.strategy.header",
        "compaction.strategy.header.encoding",
    }
    assert (
        kheaders.interceptors.versioning.VersionStampInterceptor.config_keys
        == CompactionRules.config_keys
    )


def test_a_consumer_interceptor_given_to_a_producer_is_a_configuration_error() -> None:
    class OnlyConsume:
        def on_consume(self, messages: list[object]) -> list[object]:
            return messages

    with pytest.raises(ConfigurationError, match=r"interceptors: .*OnlyConsume is a consumer"):
        Producer(BOOT, interceptors=[OnlyConsume()])
    config = {
        **BOOT,
        "interceptor.classes": f"tests.support.interceptors.Recorder,{TRACING_CONSUMER}",
    }
    with pytest.raises(ConfigurationError, match=r"interceptor\.classes: .*TracingConsumer"):
        Producer(config)
    assert fx.Recorder.instances[0].closed == 1  # what was built is closed


def test_a_producer_interceptor_given_to_a_consumer_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match=r"TracingProducerInterceptor is a producer"):
        Consumer({**BOOT, "group.id": "g", "interceptor.classes": TRACING_PRODUCER})


def test_an_interceptor_with_hooks_of_both_kinds_fits_either_client() -> None:
    config = {**BOOT, "interceptor.classes": [fx.Recorder]}
    Producer(config).close(timeout=0)
    Consumer({**config, "group.id": "g"}).close()
