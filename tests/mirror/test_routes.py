"""Routing rules, rule files, hops and the Deduplicator: the cases docs/mirror.md shows."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kheaders import ConfigurationError
from kheaders.mirror import (
    HOPS,
    MAX_HOPS,
    Deduplicator,
    Route,
    RoutingTable,
    load_rules,
    read_hops,
    table_from_mapping,
    uuid7_bytes,
)
from kheaders.mirror._copy import Copier
from kheaders.mirror._provenance import RefusedHopsError, next_hops

DOC = Path(__file__).resolve().parents[2] / "docs" / "mirror.md"


def _doc_table() -> RoutingTable:
    code = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)[0]
    namespace: dict[str, object] = {}
    exec(code, namespace)  # the doc's first example, as a reader runs it
    table = namespace["table"]
    assert isinstance(table, RoutingTable)
    return table


def _doc_toml() -> str:
    return str(re.findall(r"```toml\n(.*?)```", DOC.read_text(), re.S)[0])


def _cell_headers(cell: str) -> list[tuple[str, bytes | None]]:
    if cell.strip() == "(none)":
        return []
    out: list[tuple[str, bytes | None]] = []
    for item in re.findall(r"`([^`]*)`", cell):
        key, _, value = item.partition(": ")
        out.append((key, None if value == "null" else value.encode()))
    return out


def _cases() -> list[tuple[str, list[tuple[str, bytes | None]], tuple[str, ...]]]:
    text = DOC.read_text()
    section = text[text.index("| source topic | headers |") :].split("\n\n")[0]
    rows = [r for r in section.splitlines()[2:] if r.startswith("|")]
    cases = []
    for row in rows:
        topic, headers, goes, _ = (c.strip() for c in row.strip("|").split("|"))
        targets = tuple(re.findall(r"`([^`]*)`", goes))
        cases.append((topic.strip("`"), _cell_headers(headers), targets))
    return cases


CASES = _cases()


def test_the_docs_list_the_cases() -> None:
    assert len(CASES) == 9


@pytest.mark.parametrize(("topic", "headers", "targets"), CASES)
def test_routing_cases_from_the_docs(
    topic: str, headers: list[tuple[str, bytes | None]], targets: tuple[str, ...]
) -> None:
    assert _doc_table().targets(topic, headers) == targets


@pytest.mark.parametrize(("topic", "headers", "targets"), CASES)
def test_the_docs_toml_file_routes_the_same(
    tmp_path: Path, topic: str, headers: list[tuple[str, bytes | None]], targets: tuple[str, ...]
) -> None:
    path = tmp_path / "rules.toml"
    path.write_text(_doc_toml())
    assert load_rules(path).targets(topic, headers) == targets


def test_a_json_file_takes_the_same_keys(tmp_path: Path) -> None:
    path = tmp_path / "rules.json"
    path.write_text(json.dumps({"default": False, "routes": [{"when": {"a": True}, "to": "x"}]}))
    table = load_rules(path)
    assert table.targets("t", [("a", None)]) == ("x",)
    assert table.targets("t", []) == ()


@pytest.mark.parametrize(
    ("routes", "known", "message"),
    [
        ([Route({"regoin": "eu"}, to="x")], ["region"], "unknown header 'regoin'"),
        (
            [Route({"region": ["eu", "uk"]}, to="a"), Route({"region": "eu"}, to="b")],
            None,
            "can never match",
        ),
        ([Route(to="a"), Route({"k": True}, to="b")], None, "can never match"),
        ([Route({"k": True}, to="a"), Route({"k": "v", "j": False}, to="b")], None, "never"),
        ([Route({"k": []}, to="a")], None, "can never match"),
        ([Route(topics=[], to="a")], None, "matches no source topic"),
        ([Route({"k": 3}, to="a")], None, "a condition is text"),  # type: ignore[dict-item]
        ([Route({"a\x00b": "v"}, to="a")], None, "NUL"),
        ([Route({"k": "v"}, to="{other}")], None, "the only placeholder"),
        ([Route({"k": "v"}, to=[])], None, "names no target"),
    ],
)
def test_bad_rules_are_refused_when_the_table_is_built(
    routes: list[Route], known: list[str] | None, message: str
) -> None:
    with pytest.raises(ConfigurationError, match=message):
        RoutingTable(routes, known_headers=known)


def test_rules_that_only_look_alike_are_accepted() -> None:
    RoutingTable([Route({"region": "eu"}, to="a"), Route({"region": ["eu", "uk"]}, to="b")])
    RoutingTable([Route({"k": "v"}, to="a", topics=["x"]), Route({"k": "v"}, to="b")])
    RoutingTable([Route({"k": False}, to="a"), Route({"k": True}, to="b")])


def test_a_rule_for_a_topic_that_is_not_mirrored_can_never_match() -> None:
    table = RoutingTable([Route({"k": "v"}, to="a", topics=["payments"], name="p")])
    with pytest.raises(ConfigurationError, match="'p' can never match"):
        table.check_topics(["orders"])


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"routes": [{"when": {"k": "v"}}]}, "'to' is required"),
        ({"routes": [{"to": "a", "wen": {}}]}, "unknown keys"),
        ({"rules": []}, "unknown keys"),
        ({"routes": [{"to": 3}]}, "'to' is a topic name"),
        ({"headers": "k"}, "'headers' is a list"),
    ],
)
def test_bad_rule_files_name_the_entry(data: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        table_from_mapping(data)


def test_a_file_that_does_not_parse_names_itself(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text("routes = [")
    with pytest.raises(ConfigurationError, match=r"bad\.toml"):
        load_rules(path)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ([b"a", b"b"], "2 kheaders.hops headers"),
        ([None], "null value"),
        ([b"a" * 2000], "2000 bytes"),
        ([b"a,,b"], "hop 1 is not a cluster id"),
        ([b"a,b\xff"], "hop 1 is not a cluster id"),
        ([b"a b"], "hop 0"),
        ([b","], "hop 0"),
        ([",".join(["c"] * (MAX_HOPS + 1)).encode()], "holds 17 hops"),
    ],
)
def test_hostile_hops_headers_are_refused_with_a_reason(
    values: list[bytes | None], message: str
) -> None:
    with pytest.raises(RefusedHopsError, match=message) as info:
        read_hops(values)
    assert "aaaa" not in str(info.value)  # the value is never echoed


def test_hops_grow_by_one_cluster_per_hop_and_stop_at_the_limit() -> None:
    assert read_hops([b"us-east,eu_west.1"]) == ("us-east", "eu_west.1")
    assert next_hops(("a",), "a", "b") == b"a,b"
    full = tuple(f"c{i}" for i in range(MAX_HOPS - 1))
    assert next_hops(full, full[-1], "z").count(b",") == MAX_HOPS - 1
    with pytest.raises(RefusedHopsError, match="exceed"):
        next_hops(full, "other", "z")


def test_a_copy_appends_origin_once_and_extends_hops_in_place() -> None:
    table = RoutingTable()
    first = Copier(table, "a", "b").prepare("t", 3, 42, [("x", b"1"), ("x", None)])
    assert first[1] == ("t",)
    assert first[2] == [
        ("x", b"1"),
        ("x", None),
        ("kheaders.origin.cluster", b"a"),
        ("kheaders.origin.topic", b"t"),
        ("kheaders.origin.partition", b"3"),
        ("kheaders.origin.offset", b"42"),
        (HOPS, b"a,b"),
    ]
    second = Copier(table, "b", "c").prepare("t", 0, 7, first[2])
    assert second[2] == [*first[2][:-1], (HOPS, b"a,b,c")]
    back = Copier(table, "b", "a").prepare("t", 0, 7, first[2])
    assert back[:2] == ("loop", ())


def test_the_deduplicator_window_is_bounded_by_count_and_time() -> None:
    now = [0.0]
    dedup = Deduplicator(max_ids=3, window_seconds=10, clock=lambda: now[0])

    def admit(i: int) -> bool:
        return dedup.admit_headers([("kheaders.message.id", bytes([i]) * 16)])

    assert [admit(i) for i in (1, 2, 3, 1)] == [True, True, True, False]
    assert admit(4)  # evicts 1 (count)
    assert admit(1)
    assert len(dedup) == 3
    now[0] = 11.0
    assert admit(3)  # older than the window: forgotten
    assert len(dedup) == 1
    assert dedup.admit_headers([])
    assert dedup.without_id == 1
    assert dedup.duplicates == 1


def test_message_ids_are_uuid7_and_unique() -> None:
    ids = {uuid7_bytes() for _ in range(10_000)}
    assert len(ids) == 10_000
    one = next(iter(ids))
    assert one[6] >> 4 == 7
    assert one[8] >> 6 == 0b10
