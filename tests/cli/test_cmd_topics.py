"""``kheaders topics create|list|describe``, and ``create_topic`` on a topic that exists."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest

from kheaders import ConfigurationError
from kheaders.broker import create_topic
from kheaders.cli import main

pytestmark = pytest.mark.integration


def _name() -> str:
    return f"cli-topics-{uuid.uuid4().hex[:8]}"


def test_create_topic_on_a_topic_with_another_partition_count_says_so(
    bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory(partitions=1)
    with pytest.raises(ConfigurationError, match=r"exists with 1 partitions, asked for 2"):
        create_topic(bootstrap, topic, partitions=2, timeout=5)
    assert create_topic(bootstrap, topic, partitions=1) == topic  # the same count: nothing to do


def test_create_topic_refuses_zero_partitions_naming_the_argument(bootstrap: str) -> None:
    with pytest.raises(ConfigurationError, match="partitions: at least 1, got 0"):
        create_topic(bootstrap, _name(), partitions=0)


def test_create_list_and_describe(bootstrap: str, capsys: pytest.CaptureFixture[str]) -> None:
    name = _name()
    argv = ["--bootstrap", bootstrap]
    create = ["topics", "create", name, "--partitions", "3", "--config", "cleanup.policy=compact"]
    assert main([*create, *argv]) == 0
    assert capsys.readouterr().out == f"{name}: created, 3 partitions\n"
    assert main([*create, *argv]) == 0  # again: it exists, as asked
    assert capsys.readouterr().out == f"{name}: exists, 3 partitions\n"
    assert main(["topics", "list", *argv]) == 0
    assert f"{name}\t3 partitions\n" in capsys.readouterr().out
    assert main(["topics", "describe", name, *argv]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{name}: 3 partitions"
    assert [line.split(":")[0] for line in out[1:4]] == [f"  partition {p}" for p in range(3)]
    assert "  config cleanup.policy=compact (" in "\n".join(out[4:])


def test_create_with_another_partition_count_exits_2_naming_both(
    bootstrap: str, topic_factory: Callable[..., str], capsys: pytest.CaptureFixture[str]
) -> None:
    topic = topic_factory(partitions=2)
    code = main(["topics", "create", topic, "--partitions", "4", "--bootstrap", bootstrap])
    assert code == 2
    err = capsys.readouterr().err
    assert err == (
        f"kheaders topics create: partitions: topic {topic!r} exists with 2 partitions,"
        " asked for 4\n"
    )


def test_describe_names_the_topics_that_are_not_there(
    bootstrap: str, topic: str, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = _name()
    assert main(["topics", "describe", topic, missing, "--bootstrap", bootstrap]) == 2
    err = capsys.readouterr().err
    assert f"not on the cluster at {bootstrap}: {missing!r}" in err


@pytest.mark.parametrize(
    "argv",
    [["list"], ["describe", "orders"], ["create", "orders"]],
    ids=["list", "describe", "create"],
)
def test_an_unreachable_broker_is_named_with_the_cause(
    argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # the refusal is known at once; the command's own wait (10 s) is not what this tests
    monkeypatch.setattr("kheaders.cli._topics._TIMEOUT", 5.0)
    assert main(["topics", *argv, "--bootstrap", "127.0.0.1:1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"kheaders topics {argv[0]}: cannot ")
    assert "from 127.0.0.1:1: " in err
    assert "Broker transport failure" in err
    assert "KafkaError{" not in err
    assert len(err.splitlines()) == 1


def test_a_bad_config_setting_is_an_argument_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as excinfo:
        main(["topics", "create", "t", "--config", "cleanup.policy", "--bootstrap", "x:1"])
    assert excinfo.value.code == 2
    assert "expected KEY=VALUE, got 'cleanup.policy'" in capsys.readouterr().err
