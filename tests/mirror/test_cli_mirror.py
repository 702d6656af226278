"""``kheaders mirror --check``: the start-time errors from the command line, before any copy."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kheaders.broker import create_topic
from kheaders.cli import main
from tests.mirror.conftest import CLUSTER_B

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


def test_check_refuses_a_missing_dead_letter_topic(
    bootstrap: str,
    cluster_b: str,
    both_topics: Callable[..., str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    topic = both_topics(dlt=False)
    argv = ["mirror", "--source", bootstrap, "--target", cluster_b, "--topic", topic, "--check"]
    assert main(argv) == 2
    assert f"'{topic}.dlt'" in capsys.readouterr().err


def test_check_refuses_the_same_cluster_on_both_sides(
    bootstrap: str, topic: str, capsys: pytest.CaptureFixture[str]
) -> None:
    create_topic(bootstrap, topic + ".dlt")
    argv = ["mirror", "--source", bootstrap, "--target", bootstrap, "--topic", topic, "--check"]
    assert main(argv) == 2
    assert "a mirror needs two clusters" in capsys.readouterr().err


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
