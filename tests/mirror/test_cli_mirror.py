"""``kheaders mirror --check``: the start-time errors from the command line, before any copy."""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient

from kheaders.broker import create_topic
from kheaders.cli import main
from kheaders.mirror import Mirror
from tests.mirror.conftest import CLUSTER_B

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.integration


def test_check_names_the_clusters_and_topics(
    bootstrap: str,
    cluster_b: str,
    both_topics: Callable[..., str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    topic = both_topics()
    code = main(
        ["mirror", "--source", bootstrap, "--target", cluster_b, "--topic", topic, "--check"]
    )
    assert code == 0
    assert f"-> {CLUSTER_B}: {topic}" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        ('[[routes]]\nwhen = { regoin = "eu" }\nto = "x"\n', "unknown header 'regoin'"),
        (
            '[[routes]]\nto = "x"\n[[routes]]\nwhen = { region = true }\nto = "y"\n',
            "can never match",
        ),
        ('[[routes]]\nwhen = { region = "eu" }\nto = "{topic}-missing"\n', "does not exist"),
    ],
)
def test_check_refuses_bad_rules_at_start(
    bootstrap: str,
    cluster_b: str,
    both_topics: Callable[..., str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    rules: str,
    message: str,
) -> None:
    topic = both_topics()
    path = tmp_path / "rules.toml"
    path.write_text('headers = ["region"]\n' + rules)
    argv = ["mirror", "--source", bootstrap, "--target", cluster_b, "--topic", topic]
    assert main([*argv, "--rules", str(path), "--check"]) == 2
    assert message in capsys.readouterr().err


def test_check_creates_a_missing_dead_letter_topic_with_the_source_partitions(
    bootstrap: str,
    cluster_b: str,
    both_topics: Callable[..., str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """As the processor and the publisher do (tests/deadletter/test_missing_topics.py)."""
    topic = both_topics(partitions=3, dlt=False)
    assert topic + "-dlt" not in _partitions(bootstrap)
    argv = ["mirror", "--source", bootstrap, "--target", cluster_b, "--topic", topic, "--check"]
    assert main(argv) == 0, capsys.readouterr().err
    assert _partitions(bootstrap).get(topic + "-dlt") == 3
    assert topic + "-dlt" not in _partitions(cluster_b)  # dead letters stay on the source


def test_check_refuses_a_dead_letter_topic_it_cannot_create_naming_it(
    bootstrap: str,
    cluster_b: str,
    both_topics: Callable[..., str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    topic = both_topics(dlt=False)
    argv = ["mirror", "--source", bootstrap, "--target", cluster_b, "--topic", topic, "--check"]
    assert main([*argv, "--dead-letter", "{topic}-dlt!"]) == 2  # a name the broker refuses
    err = capsys.readouterr().err
    assert f"'{topic}-dlt!'" in err
    assert "could not be created" in err


def test_the_old_dead_letter_topic_option_still_works_and_says_it_is_deprecated(
    bootstrap: str,
    cluster_b: str,
    both_topics: Callable[..., str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    topic = both_topics(dlt=False)
    create_topic(bootstrap, topic + ".dlt")
    argv = ["mirror", "--source", bootstrap, "--target", cluster_b, "--topic", topic, "--check"]
    assert main([*argv, "--dead-letter-topic", "{topic}.dlt"]) == 0
    assert "--dead-letter-topic is deprecated" in capsys.readouterr().err
    assert topic + "-dlt" not in _partitions(bootstrap)  # the old option's topic was used


def test_mirror_dead_letters_go_to_the_dead_letter_argument(
    bootstrap: str, cluster_b: str, both_topics: Callable[..., str]
) -> None:
    topic = both_topics(dlt=False)
    mirror = Mirror(bootstrap, cluster_b, [topic], dead_letter="{topic}.dlq")
    plan = mirror.check()
    assert plan.dead_letter == {topic: topic + ".dlq"}
    assert _partitions(bootstrap).get(topic + ".dlq") == 1


def test_check_refuses_the_same_cluster_on_both_sides(
    bootstrap: str, topic: str, capsys: pytest.CaptureFixture[str]
) -> None:
    create_topic(bootstrap, topic + "-dlt")
    argv = ["mirror", "--source", bootstrap, "--target", bootstrap, "--topic", topic, "--check"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "a mirror needs two clusters" in err
    assert "--source-name/--target-name" in err  # what to do when they really are two


def test_a_pattern_is_resolved_at_start_without_the_dead_letter_topics(
    bootstrap: str,
    cluster_b: str,
    both_topics: Callable[..., str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    first, second = both_topics(), both_topics()
    prefix = first[: first.rindex("-")]  # the test's name: both topics start with it
    argv = ["mirror", "--source", bootstrap, "--target", cluster_b, "--check"]
    assert main([*argv, "--pattern", f"^{prefix}"]) == 0
    assert f": {', '.join(sorted([first, second]))}\n" in capsys.readouterr().out


def _partitions(bootstrap: str) -> dict[str, int]:
    meta = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10)
    return {name: len(t.partitions) for name, t in meta.topics.items() if t.error is None}


def test_check_lists_every_problem_in_one_run(
    bootstrap: str,
    cluster_b: str,
    topic_factory: Callable[..., str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    first, second = topic_factory(), topic_factory()  # on the source only, no dead-letter topics
    absent = f"absent-{uuid.uuid4().hex[:8]}"
    argv = ["mirror", "--source", bootstrap, "--target", cluster_b, "--check"]
    assert main([*argv, "--topic", first, "--topic", second, "--topic", absent]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kheaders mirror: 6 problems:\n")
    for expected in (
        f"topics: not on the source cluster: {absent}",
        f"target topic {first!r} does not exist",
        f"target topic {second!r} does not exist",
        f"{first + '-dlt'!r} (for {first!r}) does not exist",
        f"{second + '-dlt'!r} (for {second!r}) does not exist",
        "--create-topics",
    ):
        assert expected in err
    assert first not in _partitions(cluster_b)  # a check creates nothing unless asked


def test_create_topics_creates_what_is_missing_with_the_source_partition_count(
    bootstrap: str,
    cluster_b: str,
    topic_factory: Callable[..., str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    topic = topic_factory(partitions=3)
    rules = tmp_path / "rules.toml"
    rules.write_text('[[routes]]\nwhen = { region = "eu" }\nto = "{topic}-eu"\n')
    argv = ["mirror", "--source", bootstrap, "--target", cluster_b, "--topic", topic]
    argv += ["--rules", str(rules), "--check"]
    assert main([*argv, "--create-topics"]) == 0
    assert f"-> {CLUSTER_B}: {topic}\n" in capsys.readouterr().out
    on_target = _partitions(cluster_b)
    assert (on_target.get(topic), on_target.get(topic + "-eu")) == (3, 3)
    assert _partitions(bootstrap).get(topic + "-dlt") == 3
    assert main(argv) == 0  # nothing missing any more


def test_create_topics_creates_nothing_when_the_clusters_look_wrong(
    bootstrap: str, topic: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["mirror", "--source", bootstrap, "--target", bootstrap, "--topic", topic, "--check"]
    assert main([*argv, "--create-topics"]) == 2
    assert "a mirror needs two clusters" in capsys.readouterr().err
    assert topic + "-dlt" not in _partitions(bootstrap)


@pytest.fixture
def two_cli_brokers() -> Iterator[tuple[str, str]]:
    """Two ``kheaders broker`` processes, started as a user would, with no options."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "kheaders.cli", "broker"],
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        for _ in range(2)
    ]
    try:
        addresses = []
        for proc in procs:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            assert line.startswith("bootstrap.servers="), line
            addresses.append(line.strip().split("=", 1)[1])
        yield addresses[0], addresses[1]
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(20)


def test_two_kheaders_brokers_are_two_clusters_to_a_mirror(
    two_cli_brokers: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = two_cli_brokers
    argv = ["mirror", "--source", a, "--target", b, "--topic", "orders", "--check"]
    create_topic(a, "orders")
    assert main([*argv, "--create-topics"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("mirror kheaders-")
    source_id, target_id = line.split(":")[0].removeprefix("mirror ").split(" -> ")
    assert source_id != target_id
    assert target_id.startswith("kheaders-")


def test_the_mirror_joins_its_group_with_a_short_session_unless_told_otherwise() -> None:
    mirror = Mirror("a:9092", "b:9092", ["orders"])
    config = mirror.consumer_config()
    # librdkafka's 45 s session: the first records came ~20 s after start on Tansu
    assert (config["session.timeout.ms"], config["heartbeat.interval.ms"]) == (10_000, 1_000)
    assert config["auto.offset.reset"] == "earliest"
    assert config["enable.auto.commit"] is False
    chosen = {"session.timeout.ms": 45_000, "auto.offset.reset": "latest"}
    mirror = Mirror({"bootstrap.servers": "a:9092", **chosen}, "b:9092", ["orders"])
    config = mirror.consumer_config()
    assert (config["session.timeout.ms"], config["heartbeat.interval.ms"]) == (45_000, 1_000)
    assert config["auto.offset.reset"] == "latest"


def test_an_unreachable_cluster_is_named_with_the_cause_in_one_line(cluster_b: str) -> None:
    argv = ["mirror", "--source", "127.0.0.1:1", "--target", cluster_b, "--topic", "orders"]
    done = subprocess.run(
        [sys.executable, "-m", "kheaders.cli", *argv, "--check"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    # one line, with the cause librdkafka gave error_cb (not "Broker transport failure")
    (line,) = done.stderr.splitlines()
    assert line.startswith("kheaders mirror: source cluster '127.0.0.1:1' did not answer: ")
    assert "127.0.0.1:1/bootstrap: Connect to ipv4#127.0.0.1:1 failed: Connection refused" in line
