"""The KIP-280 comparison (kheaders.compaction._rules) against the shared rule table."""

from __future__ import annotations

import random
import warnings

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kheaders import ConfigurationError, Headers
from kheaders._codec.varint import read_varlong, write_varlong
from kheaders.compaction._rules import (
    BlankHeaderKeyWarning,
    CompactionRules,
    RecordKey,
    decode_long,
    decode_varlong,
    encode_version,
)
from tests.support.compaction_cases import Case, CaseRecord, load_cases

CASES = load_cases()


def _rules(case: Case) -> CompactionRules:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BlankHeaderKeyWarning)
        return CompactionRules.create(case.strategy, header=case.header, encoding=case.encoding)


def _rk(rules: CompactionRules, r: CaseRecord) -> RecordKey:
    return (rules.version_of(r.headers), r.timestamp, r.partition, r.offset)


def two_stage(rules: CompactionRules, records: list[CaseRecord]) -> dict[bytes, tuple[int, int]]:
    """The definition written in the module docstring, by sorting (no folding)."""
    per_partition: dict[tuple[bytes, int], CaseRecord] = {}
    for r in records:
        cur = per_partition.get((r.key, r.partition))
        if cur is None or rules.partition_key(_rk(rules, r)) > rules.partition_key(_rk(rules, cur)):
            per_partition[(r.key, r.partition)] = r
    winners: dict[bytes, CaseRecord] = {}
    for (key, _p), r in sorted(per_partition.items()):
        cur = winners.get(key)
        if cur is None or rules.cross_key(_rk(rules, r)) > rules.cross_key(_rk(rules, cur)):
            winners[key] = r
    return {k: (r.partition, r.offset) for k, r in winners.items() if r.value is not None}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_rule_table_two_stage_definition_gives_expected_state(case: Case) -> None:
    assert two_stage(_rules(case), case.records) == case.expected


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_rule_table_counters_match_the_rules(case: Case) -> None:
    rules = _rules(case)
    undecodable = sum(1 for r in case.records if rules.lookup(r.headers)[1])
    partitions: dict[bytes, set[int]] = {}
    for r in case.records:
        partitions.setdefault(r.key, set()).add(r.partition)
    counts = {
        "undecodable_versions": undecodable,
        "cross_partition_keys": sum(1 for p in partitions.values() if len(p) > 1),
    }
    for name, value in case.counters.items():
        assert counts[name] == value, name


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_wins_agrees_with_partition_and_cross_keys(case: Case) -> None:
    rules = _rules(case)
    keys = [_rk(rules, r) for r in case.records]
    for a in keys:
        for b in keys:
            if a[2] == b[2]:
                expected = rules.partition_key(a) > rules.partition_key(b)
            else:
                expected = rules.cross_key(a) > rules.cross_key(b)
            assert rules.wins(a, b) is expected


def test_single_partition_fold_with_wins_is_order_independent() -> None:
    rng = random.Random(7)
    for case in CASES:
        rules = _rules(case)
        if len({r.partition for r in case.records}) > 1:
            continue
        for _ in range(20):
            records = case.records[:]
            rng.shuffle(records)
            best: dict[bytes, CaseRecord] = {}
            for r in records:
                cur = best.get(r.key)
                if cur is None or rules.wins(_rk(rules, r), _rk(rules, cur)):
                    best[r.key] = r
            got = {k: (r.partition, r.offset) for k, r in best.items() if r.value is not None}
            assert got == case.expected, case.name


def test_strategy_defaults_to_offset_when_absent_or_empty() -> None:
    assert CompactionRules.create(None).strategy == "offset"
    assert CompactionRules.create("").strategy == "offset"
    assert CompactionRules.from_config({}).strategy == "offset"
    assert CompactionRules.from_config({"compaction.strategy": ""}).strategy == "offset"


def test_unknown_strategy_raises_configuration_error_naming_the_setting() -> None:
    with pytest.raises(ConfigurationError, match=r"compaction\.strategy.*'newest'"):
        CompactionRules.from_config({"compaction.strategy": "newest"})
    with pytest.raises(ConfigurationError, match=r"compaction\.strategy\.header\.encoding"):
        CompactionRules.create("header", header="v", encoding="zigzag")


def test_blank_header_key_warns_and_falls_back_to_offset() -> None:
    with pytest.warns(BlankHeaderKeyWarning, match=r"compaction\.strategy\.header"):
        rules = CompactionRules.from_config(
            {"compaction.strategy": "header", "compaction.strategy.header": " "}
        )
    assert rules.strategy == "offset"
    assert rules.requested == "header"


def test_from_config_reads_header_and_encoding() -> None:
    rules = CompactionRules.from_config(
        {
            "compaction.strategy": "header",
            "compaction.strategy.header": "ver",
            "compaction.strategy.header.encoding": "varlong",
        }
    )
    assert (rules.strategy, rules.header, rules.encoding) == ("header", "ver", "varlong")
    assert rules.version_of([("ver", write_varlong(-3))]) == -3


def test_version_of_accepts_headers_pairs_and_none() -> None:
    rules = CompactionRules.create("header", header="v")
    value = encode_version(42)
    assert rules.version_of(Headers([("v", value)])) == 42
    assert rules.version_of([("v", value)]) == 42
    assert rules.version_of((("v", value),)) == 42
    assert rules.version_of(iter([("v", value)])) == 42
    assert rules.version_of(None) is None
    assert rules.lookup([("v", None)]) == (None, True)
    assert rules.lookup([("w", value)]) == (None, False)


@given(st.integers(min_value=-(1 << 63), max_value=(1 << 63) - 1))
def test_versions_round_trip_in_both_encodings(n: int) -> None:
    assert decode_long(encode_version(n, "long")) == n
    assert decode_varlong(encode_version(n, "varlong")) == n


@given(st.binary(max_size=12))
def test_version_decoding_never_raises(data: bytes) -> None:
    long_v = decode_long(data)
    var_v = decode_varlong(data)
    assert long_v is None or len(data) == 8
    assert var_v is None or read_varlong(data) == (var_v, len(data))


def test_encode_version_out_of_range_is_value_error() -> None:
    with pytest.raises(ValueError, match="64-bit"):
        encode_version(1 << 63)
    with pytest.raises(ValueError, match="64-bit"):
        encode_version(1 << 63, "varlong")
