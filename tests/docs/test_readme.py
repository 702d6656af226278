"""The README's self-contained example runs as written."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def test_headers_in_thirty_seconds_runs_and_ends_read_only() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    namespace: dict[str, object] = {}
    exec(blocks[0], namespace)
    headers = namespace["h"]
    assert headers.read_only  # type: ignore[attr-defined]
    assert headers.values("trace") == [b"abc", b"def"]  # type: ignore[attr-defined]


def test_readme_names_the_ci_test_command() -> None:
    command = (
        "python3 -m venv .venv && .venv/bin/pip install -e '.[dev]' && .venv/bin/python -m pytest"
    )
    assert command in (README.parent / ".ci" / "run").read_text()
    assert command in README.read_text()


def test_where_a_first_consumer_is_written_the_fast_group_join_is_named() -> None:
    """A subscribing consumer waits ~23 s for its group join on the embedded broker with
    librdkafka's defaults: the pages that show a first consumer say what joins fast."""
    from kheaders.broker import fast_consumer_config

    for page in (README, README.parent / "docs" / "clients.md", README.parent / "docs" / "aio.md"):
        text = " ".join(page.read_text().split())
        assert "kheaders.broker.fast_consumer_config(bootstrap, group_id" in text or (
            "from kheaders.broker import fast_consumer_config" in text
        ), page.name
        assert "23 s" in text, page.name
    config = fast_consumer_config("b:9092", "g")  # what the pages say it sets
    assert (config["session.timeout.ms"], config["heartbeat.interval.ms"]) == (6000, 500)
