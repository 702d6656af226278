"""Many members of one share group on one partition, each in its own process, on the Apache
Kafka broker: records are spread over them, each handled once when all succeed, and the
records of a member killed with SIGKILL go to another once their locks expire."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.share.conftest import produce

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def members(n: int, *args: str) -> Iterator[list[subprocess.Popen[bytes]]]:
    """``n`` member processes (tests/share/member.py), each with ``args``; stopped after."""
    procs = [
        subprocess.Popen([sys.executable, "-m", "tests.share.member", *args], cwd=ROOT)
        for _ in range(n)
    ]
    try:
        yield procs
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def lines(out: Path) -> list[list[str]]:
    return [ln.split() for ln in out.read_text().splitlines()] if out.exists() else []


def wait_for(condition: Callable[[], bool], what: str, deadline: float = 90.0) -> None:
    end = time.monotonic() + deadline
    while not condition():
        assert time.monotonic() < end, f"not within {deadline} s: {what}"
        time.sleep(0.1)


def handled(out: Path) -> list[tuple[int, int, int]]:
    """(pid, offset, delivery count) per handled record."""
    return [(int(r[0]), int(r[1]), int(r[2])) for r in lines(out) if r[0].isdigit()]


def test_members_in_several_processes_share_one_partition_and_handle_each_record_once(
    bootstrap: str, topic: str, share_group: Callable[..., str], tmp_path: Path
) -> None:
    out = tmp_path / "handled.txt"
    produced = 0
    with members(3, bootstrap, topic, share_group(), str(out)) as procs:
        wait_for(lambda: sum(r[0] == "STARTED" for r in lines(out)) == 3, "3 members started")
        end = time.monotonic() + 90
        # waves over some seconds (members join meanwhile), until 400 records went out and
        # at least two members have handled some
        while produced < 400 or len({pid for pid, _, _ in handled(out)}) < 2:
            assert time.monotonic() < end, "the records were not shared between members"
            produce(
                bootstrap, topic, [(None, b"r%d" % i, []) for i in range(produced, produced + 40)]
            )
            produced += 40
            time.sleep(0.5)
        wait_for(lambda: len(handled(out)) >= produced, f"{produced} records handled")
        assert all(p.poll() is None for p in procs)
    got = handled(out)
    assert sorted(o for _, o, _ in got) == list(range(produced))  # every record, none twice
    assert {c for _, _, c in got} == {1}  # each on its first delivery
    assert len({pid for pid, _, _ in got}) >= 2


def test_a_member_killed_mid_record_loses_it_to_another_member_after_its_lock_expires(
    bootstrap: str, topic: str, share_group: Callable[..., str], tmp_path: Path
) -> None:
    out = tmp_path / "handled.txt"
    group = share_group(lock_ms=2000)
    with members(2, bootstrap, topic, group, str(out), "hold") as procs:
        wait_for(lambda: sum(r[0] == "STARTED" for r in lines(out)) == 2, "2 members started")
        produce(bootstrap, topic, [(None, b"a", []), (None, b"hold", []), (None, b"b", [])])
        wait_for(lambda: any(r[0] == "HOLD" for r in lines(out)), "a member holding a record")
        (_, holder, offset) = next(r for r in lines(out) if r[0] == "HOLD")
        os.kill(int(holder), signal.SIGKILL)
        wait_for(
            lambda: any(o == int(offset) for _, o, _ in handled(out)), "the held record handled"
        )
        victim = next(p for p in procs if p.pid == int(holder))
        assert victim.wait(10) == -signal.SIGKILL
    got = handled(out)
    (taker, _, count) = next(h for h in got if h[1] == int(offset))
    assert taker != int(holder)
    assert count >= 2  # the broker counted the killed member's delivery
    assert {o for _, o, _ in got} == {0, 1, 2}  # nothing lost (a or b may come twice)
