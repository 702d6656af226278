"""kheaders.compaction.latest() and the StateTable fold, driven by the shared rule table."""

from __future__ import annotations

import random
import warnings

import pytest
from confluent_kafka import Message
from hypothesis import given, settings
from hypothesis import strategies as st

from kheaders import ConfigurationError, Headers
from kheaders.compaction import (
    BlankHeaderKeyWarning,
    CompactionRules,
    CompactionStats,
    StateEntry,
    StateTable,
    diff_state,
    encode_version,
    latest,
)
from tests.support.compaction_cases import Case, CaseRecord, load_cases

CASES = load_cases()


def _message(topic: str, r: CaseRecord, headers_as: str = "list") -> Message:
    headers: object
    if headers_as == "headers":
        headers = Headers(r.headers).close()
    elif headers_as == "none" and not r.headers:
        headers = None
    else:
        headers = list(r.headers)
    return Message(
        topic=topic,
        partition=r.partition,
        offset=r.offset,
        key=r.key,
        value=r.value,
        headers=headers,
        timestamp=(1, r.timestamp),
    )


def _latest(case: Case, records: list[CaseRecord], headers_as: str = "list", **kw: object):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BlankHeaderKeyWarning)
        return latest(
            [_message("t", r, headers_as) for r in records],
            strategy=case.strategy,
            header=case.header,
            encoding=case.encoding,
            **kw,  # type: ignore[arg-type]
        )


def _positions(result: dict) -> dict[bytes, tuple[int, int]]:
    return {k: (m.partition(), m.offset()) for k, m in result.items()}


@pytest.mark.parametrize("headers_as", ["list", "headers", "none"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_latest_gives_the_rule_table_state(case: Case, headers_as: str) -> None:
    result = _latest(case, case.records, headers_as)
    assert _positions(result) == case.expected


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_latest_is_independent_of_arrival_order(case: Case) -> None:
    rng = random.Random(case.name)
    for _ in range(25):
        records = case.records[:]
        rng.shuffle(records)
        assert _positions(_latest(case, records)) == case.expected


@pytest.mark.parametrize("case", [c for c in CASES if c.counters], ids=lambda c: c.name)
def test_latest_counts_what_the_table_pins(case: Case) -> None:
    stats = CompactionStats()
    _latest(case, case.records, stats=stats)
    for name, value in case.counters.items():
        assert getattr(stats, name) == value, name
    assert stats.records == len(case.records)


def test_latest_returns_the_consumed_message_objects() -> None:
    msgs = [
        Message(topic="t", partition=0, offset=i, key=b"k", value=b"v%d" % i, timestamp=(1, i))
        for i in range(3)
    ]
    assert latest(msgs)[b"k"] is msgs[2]


def test_unknown_strategy_raises_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match=r"compaction\.strategy"):
        latest([], strategy="lexicographic")


def test_blank_header_falls_back_to_offset_with_a_warning() -> None:
    msgs = [
        Message(
            topic="t",
            partition=0,
            offset=o,
            key=b"k",
            value=v,
            headers=[("version", encode_version(n))],
            timestamp=(1, 0),
        )
        for o, (v, n) in enumerate([(b"new", 2), (b"old", 1)])
    ]
    with pytest.warns(BlankHeaderKeyWarning):
        result = latest(msgs, strategy="header", header="")
    assert result[b"k"].value() == b"old"


def test_stats_count_replaced_rejected_anomalies_and_tombstones() -> None:
    rules = CompactionRules.create("header", header="v")
    table = StateTable(rules)
    v = encode_version
    table.offer(b"a", b"1", [("v", v(5))], 0, 0, 10)  # first
    table.offer(b"a", b"2", [("v", v(4))], 0, 1, 11)  # rejected (older)
    table.offer(b"a", b"3", None, 0, 2, 12)  # rejected, anomalous (no version)
    table.offer(b"a", None, [("v", v(6))], 0, 3, 13)  # replaced by a tombstone
    table.offer(b"a", b"4", [("v", b"x")], 0, 4, 14)  # rejected, undecodable, anomalous
    s = table.stats
    assert (s.records, s.replaced, s.rejected, s.anomalies) == (5, 1, 3, 2)
    assert (s.tombstones, s.undecodable_versions, s.unversioned) == (1, 1, 2)
    assert table.live == 0
    assert table.get_live(b"a") is None


def test_keyless_records_and_error_events_are_counted_not_folded() -> None:
    stats = CompactionStats()
    msgs = [
        Message(topic="t", partition=0, offset=0, key=None, value=b"x", timestamp=(1, 0)),
        Message(topic="t", partition=0, offset=1, key=b"k", value=b"y", timestamp=(1, 0)),
    ]
    result = latest(msgs, stats=stats)
    assert list(result) == [b"k"]
    assert (stats.records, stats.keyless) == (2, 1)


def test_cross_partition_key_is_counted_once() -> None:
    stats = CompactionStats()
    msgs = [
        Message(topic="t", partition=p, offset=o, key=b"k", value=b"v", timestamp=(1, o))
        for p, o in [(0, 0), (1, 1), (0, 2), (2, 3), (1, 4)]
    ]
    result = latest(msgs, stats=stats)
    assert (result[b"k"].partition(), result[b"k"].offset()) == (1, 4)
    assert stats.cross_partition_keys == 1


def test_state_entry_header_view_is_read_only_headers() -> None:
    entry = StateEntry(b"k", b"v", [("a", b"1")], None, 0, 0, 0)
    view = entry.header_view()
    assert view.read_only
    assert view.to_list() == [("a", b"1")]
    assert StateEntry(b"k", b"v", None, None, 0, 0, 0).header_view().to_list() == []


def test_diff_state_reports_value_header_and_membership_differences() -> None:
    def e(value: bytes, headers: list[tuple[str, bytes | None]]) -> StateEntry:
        return StateEntry(b"", value, headers, None, 0, 0, 0)

    left = {
        b"same": e(b"1", [("h", b"x")]),
        b"val": e(b"1", []),
        b"hdr": e(b"1", []),
        b"l": e(b"1", []),
    }
    right = {
        b"same": e(b"1", [("h", b"x")]),
        b"val": e(b"2", []),
        b"hdr": e(b"1", [("h", None)]),
        b"r": e(b"1", []),
    }
    assert diff_state(left, right) == {b"val", b"hdr", b"l", b"r"}


_record = st.builds(
    CaseRecord,
    key=st.sampled_from([b"a", b"b", b"c"]),
    value=st.one_of(st.none(), st.just(b"v")),
    partition=st.integers(0, 2),
    offset=st.just(0),
    timestamp=st.integers(0, 5),
    headers=st.lists(
        st.tuples(
            st.sampled_from(["v", "w"]),
            st.one_of(
                st.none(),
                st.integers(-3, 3).map(encode_version),
                st.binary(max_size=3),
            ),
        ),
        max_size=3,
    ),
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(_record, max_size=30),
    st.sampled_from(["offset", "timestamp", "header"]),
    st.randoms(use_true_random=False),
)
def test_fold_equals_the_two_stage_definition(
    raw: list[CaseRecord], strategy: str, rng: random.Random
) -> None:
    records = [r._replace(offset=i) for i, r in enumerate(raw)]  # unique per partition
    rules = CompactionRules.create(strategy, header="v")

    def rk(r: CaseRecord) -> tuple[int | None, int, int, int]:
        return (rules.version_of(r.headers), r.timestamp, r.partition, r.offset)

    part: dict[tuple[bytes, int], CaseRecord] = {}
    for r in records:
        cur = part.get((r.key, r.partition))
        if cur is None or rules.partition_key(rk(r)) > rules.partition_key(rk(cur)):
            part[(r.key, r.partition)] = r
    best: dict[bytes, CaseRecord] = {}
    for (k, _), r in part.items():
        if k not in best or rules.cross_key(rk(r)) > rules.cross_key(rk(best[k])):
            best[k] = r
    expected = {k: (r.partition, r.offset) for k, r in best.items() if r.value is not None}
    rng.shuffle(records)
    case = Case("h", strategy, "v", "long", records, expected)
    assert _positions(_latest(case, records)) == expected


@pytest.mark.parametrize(
    "module",
    [
        "kheaders.compaction._rules",
        "kheaders.compaction._latest",
        "kheaders.compaction._state_topic",
        "kheaders.interceptors.versioning",
    ],
)
def test_docstring_examples_run(module: str) -> None:
    import importlib

    from tests.support.doctests import run_doctests

    result = run_doctests(importlib.import_module(module))
    assert result.failed == 0
    assert result.attempted > 0


def test_diff_state_compares_latest_messages_with_state_entries() -> None:
    msgs = {
        b"k": Message(
            topic="t",
            partition=0,
            offset=3,
            key=b"k",
            value=b"v",
            headers=[("h", b"1")],
            timestamp=(1, 5),
        ),
        b"n": Message(topic="t", partition=0, offset=4, key=b"n", value=b"w", timestamp=(1, 5)),
    }
    entries = {
        b"k": StateEntry(b"k", b"v", Headers([("h", b"1")]).close(), None, 9, 1, 0),
        b"n": StateEntry(b"n", b"w", [("h", None)], None, 9, 1, 1),
    }
    assert diff_state(msgs, entries) == {b"n"}
