"""Header and Headers: the KIP-82 model with Java RecordHeaders semantics, and its byte form."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kheaders import (
    DecodeError,
    Header,
    Headers,
    InvalidNameError,
    KHeadersError,
    ReadOnlyHeadersError,
)
from kheaders._model.headers import trusted

# the key rule: non-empty, UTF-8 encodable (no lone surrogate), no NUL
KEYS = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    min_size=1,
    max_size=12,
)
VALUES = st.one_of(st.none(), st.binary(max_size=300))
PAIRS = st.lists(st.tuples(KEYS, VALUES), max_size=12)


def _utf8_ok(pairs: list[tuple[str, bytes | None]]) -> bool:
    try:
        for k, _ in pairs:
            k.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# -- Header is a 2-tuple ------------------------------------------------------------------


def test_header_is_a_two_tuple_usable_as_confluent_pairs() -> None:
    h = Headers([("a", b"1")])
    assert list(h) == [("a", b"1")]
    assert dict(h) == {"a": b"1"}
    for k, v in h:
        assert (k, v) == ("a", b"1")
    header = h.last_header("a")
    assert header is not None
    assert (header.key, header.value) == ("a", b"1")
    assert isinstance(header, tuple)


# -- construction ---------------------------------------------------------------------------


def test_headers_accept_none_pairs_headers_and_dicts() -> None:
    assert len(Headers()) == 0
    assert len(Headers(None)) == 0
    pairs = Headers([("a", b"1"), Header("b", None)])
    assert list(pairs) == [Header("a", b"1"), Header("b", None)]
    assert Headers({"a": b"1", "b": None}) == pairs
    assert Headers(x for x in [("a", b"1"), ("b", None)]) == pairs


def test_copy_of_read_only_headers_is_writable_and_independent() -> None:
    source = Headers([("a", b"1")]).close()
    for copy in (Headers(source), source.copy()):
        assert not copy.read_only
        copy.add("b", b"2")
        assert len(source) == 1
        assert copy == Headers([("a", b"1"), ("b", b"2")])


def test_from_confluent_accepts_none_as_empty_and_copies_the_list() -> None:
    raw: list[tuple[str, bytes | None]] = [("a", b"1"), ("b", None)]
    assert Headers.from_confluent(None) == Headers()
    h = Headers.from_confluent(raw)
    h.add("c", b"3")
    assert raw == [("a", b"1"), ("b", None)]
    assert next(iter(h)) == Header("a", b"1")
    assert type(next(iter(h))) is Header
    received = Headers.from_confluent(raw, read_only=True)
    assert received.read_only
    with pytest.raises(TypeError):
        Headers.from_confluent({"a": b"1"})  # type: ignore[arg-type]


def test_values_are_stored_as_bytes_and_none_is_not_empty() -> None:
    h = Headers(
        [
            ("b", bytearray(b"x")),
            ("m", memoryview(b"y")),
            ("s", "é"),
            ("n", None),
            ("e", b""),
        ]
    )
    assert [type(v) for _, v in h] == [bytes, bytes, bytes, type(None), bytes]
    assert h.last_value("s") == "é".encode()
    assert h.last_header("n") == Header("n", None)
    assert h.last_header("e") == Header("e", b"")
    assert h.last_header("n") != h.last_header("e")


@pytest.mark.parametrize(
    ("key", "value", "error", "match"),
    [
        ("k", 1, TypeError, "'k'"),
        ("k", ["x"], TypeError, "'k'"),
        (b"k", b"v", TypeError, "got bytes"),  # named by type: it may be a misplaced value
        (1, b"v", TypeError, "got int"),
        ("", b"v", ValueError, "empty"),
        ("k", "\ud800", ValueError, "'k'"),
    ],
)
def test_bad_keys_and_values_are_rejected_naming_the_key(
    key: object, value: object, error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        Headers().add(key, value)  # type: ignore[call-overload]
    with pytest.raises(error, match=match):
        Headers([(key, value)])  # type: ignore[list-item]


def test_items_that_are_not_pairs_are_rejected() -> None:
    with pytest.raises(TypeError, match="pairs"):
        Headers(["abc"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"Headers\.from_bytes"):
        Headers(b"\x00")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="str"):
        Headers("ab")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="int"):
        Headers(5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Headers().add(("a", b"1", b"2"))  # type: ignore[call-overload]


# -- Java RecordHeaders behaviours ----------------------------------------------------------


def test_add_keeps_order_and_duplicates_and_returns_self() -> None:
    h = Headers()
    assert h.add("a", b"1") is h
    assert h.add(Header("b", b"2")) is h
    assert h.add(("a", b"3")) is h
    assert list(h) == [("a", b"1"), ("b", b"2"), ("a", b"3")]
    assert list(h.headers("a")) == [("a", b"1"), ("a", b"3")]
    assert h.last_header("a") == Header("a", b"3")
    assert h.last_header("missing") is None


def test_remove_removes_every_occurrence_and_absent_is_a_no_op() -> None:
    h = Headers([("a", b"1"), ("b", b"2"), ("a", b"3")])
    assert h.remove("a") is h
    assert list(h) == [("b", b"2")]
    assert h.remove("zzz") is h
    assert list(h) == [("b", b"2")]


def test_keys_are_distinct_in_first_seen_order() -> None:
    h = Headers([("b", b""), ("a", b""), ("b", b""), ("c", None)])
    assert h.keys() == ["b", "a", "c"]


def test_set_replaces_all_occurrences_at_the_first_position() -> None:
    h = Headers([("a", b"1"), ("b", b"2"), ("a", b"3")]).set("a", b"9")
    assert list(h) == [("a", b"9"), ("b", b"2")]
    assert list(h.set("c", None)) == [("a", b"9"), ("b", b"2"), ("c", None)]


def test_lookup_by_key_gives_the_last_value_and_dict_keeps_the_last() -> None:
    h = Headers([("a", b"1"), ("b", None), ("a", b"2")])
    assert h["a"] == b"2"
    assert h["b"] is None
    assert dict(h) == {"a": b"2", "b": None} == dict(h.to_list())
    with pytest.raises(KeyError):
        h["zzz"]
    with pytest.raises(TypeError, match="str key or int position"):
        h[b"a"]  # type: ignore[call-overload]


def test_headers_are_a_list_of_pairs_confluent_code_can_index() -> None:
    h = Headers([("a", b"1"), ("b", None)])
    assert isinstance(h, list)
    assert h[0] == ("a", b"1")
    assert type(h[0]) is Header
    assert h[-1] == Header("b", None)
    assert h[1:] == [("b", None)]
    assert type(h[1:]) is list
    assert h == [("a", b"1"), ("b", None)] == h.close()
    assert ("a", b"1") in h
    assert "a" in h
    assert ("a", b"2") not in h
    with pytest.raises(IndexError):
        h[2]


def test_len_truthiness_contains_and_to_dict() -> None:
    h = Headers()
    assert not h
    assert len(h) == 0
    h.add("a", b"1").add("a", b"2")
    assert h
    assert len(h) == 2
    assert "a" in h
    assert "b" not in h
    assert h.to_dict() == {"a": b"2"}


def test_equality_is_order_sensitive_and_ignores_read_only() -> None:
    a = Headers([("a", b"1"), ("b", b"2")])
    assert a == Headers([("a", b"1"), ("b", b"2")]).close()
    assert a != Headers([("b", b"2"), ("a", b"1")])
    assert a == [("a", b"1"), ("b", b"2")]  # a list of pairs, as confluent-kafka's


def test_repr_shows_pairs_and_read_only() -> None:
    h = Headers([("a", b"1"), ("n", None)])
    assert repr(h) == "Headers([('a', b'1'), ('n', None)])"
    assert repr(h.close()) == "Headers([('a', b'1'), ('n', None)], read_only=True)"


def test_to_list_is_confluents_form_and_a_new_list() -> None:
    h = Headers([("a", b"1"), ("n", None)])
    out = h.to_list()
    assert out == [("a", b"1"), ("n", None)]
    out.append(("x", b""))
    assert len(h) == 2


# -- read-only ------------------------------------------------------------------------------


def test_every_mutation_after_close_raises_read_only_with_copy_advice() -> None:
    h = Headers([("a", b"1")])
    assert h.close() is h
    assert h.read_only
    mutations = [
        lambda: h.add("b", b"2"),
        lambda: h.add(Header("b", b"2")),
        lambda: h.remove("a"),
        lambda: h.set("a", b"2"),
        h.clear,
    ]
    for mutate in mutations:
        with pytest.raises(ReadOnlyHeadersError) as info:
            mutate()
        assert isinstance(info.value, RuntimeError)
        assert isinstance(info.value, KHeadersError)
        assert "already sent" in str(info.value)
        assert "Headers(" in str(info.value)
    assert list(h) == [("a", b"1")]
    assert h.last_header("a") == Header("a", b"1")
    assert h.to_bytes() == Headers([("a", b"1")]).to_bytes()


def test_mutation_after_close_says_read_only_and_how_to_copy() -> None:
    h = Headers({"a": b"1"}).close()
    with pytest.raises(ReadOnlyHeadersError, match=r"Headers\(old_headers\)"):
        h.add("b", b"2")
    copy = Headers(h)
    copy.add("b", b"2")
    assert list(copy) == [Header("a", b"1"), Header("b", b"2")]


# -- the record-v2 byte form ----------------------------------------------------------------


def test_to_bytes_matches_kafka_default_record() -> None:
    h = Headers([("foo", b"value"), ("bar", None)])
    assert h.to_bytes().hex(" ") == "04 06 66 6f 6f 0a 76 61 6c 75 65 06 62 61 72 01"
    assert Headers().to_bytes() == b"\x00"
    assert Headers.from_bytes(h.to_bytes()) == h
    assert Headers([("k", b"")]).to_bytes().hex(" ") == "02 02 6b 00"
    assert Headers([("é", b"x" * 64)]).to_bytes()[:5].hex(" ") == "02 04 c3 a9 80"


def test_from_bytes_returns_writable_headers_and_accepts_any_buffer() -> None:
    data = Headers([("a", b"1"), ("b", None)]).to_bytes()
    for buf in (data, bytearray(data), memoryview(data)):
        h = Headers.from_bytes(buf)
        assert h == Headers([("a", b"1"), ("b", None)])
        assert not h.read_only
        assert all(type(x) is Header for x in h)


@pytest.mark.parametrize(
    ("hexed", "match", "offset"),
    [
        ("", "truncated", 0),
        ("01", "negative header count", 0),
        ("7e", "exceeds", 0),
        ("02 01 00", "header key length -1 is negative", 1),
        ("02 0a 61", "header key length 5 runs past the end", 1),
        ("02 02 ff 00", "not UTF-8", 2),
        ("02 02 61 03", "invalid length -2", 3),
        ("02 02 61 0a 00", "runs past the end", 3),
        ("02 02 61", "truncated", 3),
        ("02 02 61 00 00", "left after", 4),
        ("02 ff ff ff ff ff 01 00", "longer than", 1),
    ],
)
def test_malformed_bytes_raise_decode_error_with_offset(
    hexed: str, match: str, offset: int
) -> None:
    with pytest.raises(DecodeError, match=match) as info:
        Headers.from_bytes(bytes.fromhex(hexed))
    assert info.value.offset == offset


def test_key_that_cannot_be_utf8_fails_to_encode_naming_it() -> None:
    with pytest.raises(InvalidNameError, match=r"header key '\\ud800'"):
        Headers([("\ud800", b"")])
    h = Headers.from_confluent([("\ud800", b"")])  # wrapped unchecked, as received
    with pytest.raises(ValueError, match="header key"):
        h.to_bytes()


@given(PAIRS)
def test_bytes_round_trip_and_encoded_size_is_exact(pairs: list[tuple[str, bytes | None]]) -> None:
    h = Headers(pairs)
    if not _utf8_ok(pairs):
        with pytest.raises(ValueError, match="header key"):
            h.to_bytes()
        return
    data = h.to_bytes()
    assert h.encoded_size() == len(data)
    assert Headers.from_bytes(data) == h


@given(st.binary(max_size=60))
def test_from_bytes_only_raises_decode_error(data: bytes) -> None:
    try:
        h = Headers.from_bytes(data)
    except DecodeError:
        return
    # Kafka accepts non-minimal varints too, so only the decoded content must survive.
    assert Headers.from_bytes(h.to_bytes()) == h


@given(st.lists(st.tuples(KEYS, VALUES), max_size=5), st.binary(min_size=1, max_size=3))
def test_trailing_bytes_are_rejected(pairs: list[tuple[str, bytes | None]], extra: bytes) -> None:
    if not _utf8_ok(pairs):
        return
    with pytest.raises(DecodeError, match="left after"):
        Headers.from_bytes(Headers(pairs).to_bytes() + extra)


def test_headers_wrapping_raw_tuples_always_iterate_as_header() -> None:
    received = trusted([("a", b"1"), ("b", None)], read_only=True)
    assert [type(h) for h in received] == [Header, Header]
    assert received.last_header("b") == Header("b", None)
    writable = trusted([("a", b"1"), ("b", None)], read_only=False)
    writable.set("a", b"2").add("c", b"3")
    assert [type(h) for h in writable] == [Header, Header, Header]
    copy = received.copy().set("b", b"x")
    assert all(type(h) is Header for h in copy)
    assert list(copy) == [("a", b"1"), ("b", b"x")]


# -- an independent implementation as oracle: kafka-python's record-batch v2 builder ----------


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # kafka-python's own imports
@given(PAIRS)
def test_to_bytes_is_the_tail_of_a_kafka_python_record_and_reads_back(
    pairs: list[tuple[str, bytes | None]],
) -> None:
    from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

    if not _utf8_ok(pairs):
        return
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=0,
        is_transactional=False,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=1 << 20,
    )
    builder.append(0, timestamp=1, key=None, value=b"v", headers=pairs)
    batch = bytes(builder.build())
    ours = Headers(pairs).to_bytes()
    assert batch.endswith(ours)
    (record,) = list(DefaultRecordBatch(batch))
    assert Headers.from_bytes(ours) == Headers(record.headers)


def test_lists_own_mutators_check_pairs_and_refuse_once_closed() -> None:
    h = Headers()
    h.append(("a", "1"))
    h.extend([("b", b"2")])
    h += [("c", None)]
    h.insert(0, ("z", b"0"))
    h[1] = ("a", b"x")
    assert h == [("z", b"0"), ("a", b"x"), ("b", b"2"), ("c", None)]
    assert all(type(x) is Header for x in list.__iter__(h))
    with pytest.raises(TypeError, match="header key must be str"):
        h.append((b"k", b"v"))
    with pytest.raises(TypeError, match="header key must be str"):
        h.extend([("ok", b"1"), (1, b"v")])
    assert len(h) == 4  # all or nothing
    assert h.pop() == ("c", None)
    del h[0]
    h.close()
    for change in (
        lambda: h.append(("d", b"1")),
        lambda: h.extend([]),
        lambda: h.insert(0, ("d", b"1")),
        lambda: h.__setitem__(0, ("d", b"1")),
        lambda: h.__delitem__(0),
        h.pop,
        h.sort,
        h.reverse,
        lambda: h.__iadd__([]),
        lambda: h.__imul__(2),
    ):
        with pytest.raises(ReadOnlyHeadersError):
            change()
    assert h == [("a", b"x"), ("b", b"2")]


def test_read_only_survives_copy_and_pickle() -> None:
    import copy
    import pickle

    h = Headers([("a", b"1")]).close()
    for twin in (copy.copy(h), copy.deepcopy(h), pickle.loads(pickle.dumps(h))):
        assert twin == h
        assert twin.read_only
    assert not h.copy().read_only
