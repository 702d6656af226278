"""The graceful-shutdown recipes of docs/clients.md and docs/aio.md, run as written in a
process of their own: SIGTERM stops them with exit status 0, the group's committed offset is
the one after the last record they printed, and started again they go on from there."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import confluent_kafka
import pytest
from confluent_kafka import TopicPartition

from kheaders.broker import BOOTSTRAP_ENV, create_topic

ROOT = Path(__file__).resolve().parents[2]
RECIPES = {"docs/clients.md": ("orders", "billing"), "docs/aio.md": ("aio-orders", "aio-billing")}
"""Each page's recipe, with the topic and group names it uses (made unique per run)."""
READ_TIMEOUT = 60.0
"""Seconds to wait for a record to be printed (a group join on a busy machine included)."""


def recipe(doc: str) -> str:
    (code,) = [
        c
        for c in re.findall(r"```python\n(.*?)```", (ROOT / doc).read_text(), re.S)
        if "signal.SIGTERM" in c
    ]
    return code


class Running:
    """The recipe as a child process; its printed lines are read by a thread."""

    def __init__(self, script: Path, bootstrap: str) -> None:
        env = {**os.environ, BOOTSTRAP_ENV: bootstrap, "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen(
            [sys.executable, str(script)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))

    def printed(self, count: int) -> list[str]:
        out: list[str] = []
        deadline = time.monotonic() + READ_TIMEOUT
        while len(out) < count:
            left = deadline - time.monotonic()
            try:
                out.append(self.lines.get(timeout=max(left, 0.01)))
            except queue.Empty:
                self.proc.kill()
                _, err = self.proc.communicate(timeout=10)
                pytest.fail(f"printed {out}, expected {count} lines; stderr: {err[-2000:]}")
        return out

    def terminate(self) -> tuple[int, str]:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            pytest.fail("the recipe did not stop within 60 s of SIGTERM")
        assert self.proc.stderr is not None
        return self.proc.returncode, self.proc.stderr.read()


def committed(bootstrap: str, group: str, topic: str) -> int:
    reader = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        (tp,) = reader.committed([TopicPartition(topic, 0)], timeout=10)
        return int(tp.offset)
    finally:
        reader.close()


def produce(bootstrap: str, topic: str, values: range) -> None:
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap})
    for n in values:
        producer.produce(topic, b"r%d" % n)
    assert producer.flush(10) == 0


@pytest.mark.integration
@pytest.mark.parametrize("doc", sorted(RECIPES))
def test_recipe_stops_on_sigterm_having_committed_what_it_printed(
    doc: str, bootstrap: str, tmp_path: Path
) -> None:
    suffix = uuid.uuid4().hex[:8]
    code = recipe(doc)
    topic, group = (f"{name}-{suffix}" for name in RECIPES[doc])
    for name, unique in zip(RECIPES[doc], (topic, group), strict=True):
        assert f'"{name}"' in code, f"{doc}'s recipe no longer uses {name!r}"
        code = code.replace(f'"{name}"', f'"{unique}"')
    script = tmp_path / "recipe.py"
    script.write_text(code)
    create_topic(bootstrap, topic)
    produce(bootstrap, topic, range(20))

    first = Running(script, bootstrap)
    assert first.printed(20) == [f"{n} r{n}" for n in range(20)]
    status, err = first.terminate()
    assert status == 0, err
    assert committed(bootstrap, group, topic) == 20  # the offset after the last one printed

    produce(bootstrap, topic, range(20, 25))
    again = Running(script, bootstrap)
    assert again.printed(5) == [f"{n} r{n}" for n in range(20, 25)]  # nothing repeated
    status, err = again.terminate()
    assert status == 0, err
    assert committed(bootstrap, group, topic) == 25
    assert again.lines.empty()  # nothing printed after the last record
