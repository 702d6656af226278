"""kheaders.interceptors.versioning: the version-stamp producer interceptor and its hybrid clock."""

from __future__ import annotations

import itertools
import threading

import pytest

from kheaders import ConfigurationError, ProducerRecord
from kheaders.compaction import CompactionRules, decode_long, decode_varlong
from kheaders.interceptors.versioning import HybridClock, VersionStampInterceptor


class SteppingWall:
    """A wall clock the test moves by hand (also backwards)."""

    def __init__(self, ms: int) -> None:
        self.ms = ms

    def __call__(self) -> int:
        return self.ms


def _version(record: ProducerRecord, encoding: str = "long", header: str = "version") -> int:
    value = record.headers.last_value(header)
    assert isinstance(value, bytes)
    decoded = decode_long(value) if encoding == "long" else decode_varlong(value)
    assert decoded is not None
    return decoded


def test_default_stamps_increase_per_key_even_when_the_wall_clock_goes_back() -> None:
    wall = SteppingWall(1_700_000_000_000)
    stamp = VersionStampInterceptor(clock=HybridClock(wall))
    seen: dict[str, list[int]] = {"a": [], "b": []}
    for step in [0, 0, 5, -1000, 0, -1, 2000]:
        wall.ms += step
        for key in ("a", "b"):
            seen[key].append(_version(stamp.on_send(ProducerRecord("t", b"v", key=key))))
    for versions in seen.values():
        assert all(x < y for x, y in itertools.pairwise(versions))


def test_stamp_layout_is_wall_ms_shifted_16_plus_logical_counter() -> None:
    wall = SteppingWall(1_700_000_000_123)
    clock = HybridClock(wall)
    first, second = clock.now(), clock.now()
    assert HybridClock.physical_ms(first) == 1_700_000_000_123
    assert (HybridClock.logical(first), HybridClock.logical(second)) == (0, 1)
    wall.ms += 1
    third = clock.now()
    assert (HybridClock.physical_ms(third), HybridClock.logical(third)) == (wall.ms, 0)


def test_observe_moves_the_clock_past_a_foreign_version() -> None:
    clock = HybridClock(SteppingWall(10))
    foreign = (50 << 16) | 7
    clock.observe(foreign)
    assert clock.now() == foreign + 1


def test_stamps_are_unique_across_threads() -> None:
    clock = HybridClock(SteppingWall(1))
    out: list[int] = []
    lock = threading.Lock()

    def work() -> None:
        mine = [clock.now() for _ in range(500)]
        with lock:
            out.extend(mine)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(out)) == 2000


def test_existing_version_headers_are_replaced_by_one() -> None:
    stamp = VersionStampInterceptor(version_of=lambda r: 42)
    record = ProducerRecord(
        "t", b"v", headers=[("version", b"1"), ("other", b"x"), ("version", b"2")]
    )
    out = stamp.on_send(record)
    assert out.headers.values("version") == [(42).to_bytes(8, "big")]
    assert out.headers.values("other") == [b"x"]


@pytest.mark.parametrize("encoding", ["long", "varlong"])
def test_user_versions_are_encoded_as_configured_and_read_back_by_the_rules(
    encoding: str,
) -> None:
    stamp = VersionStampInterceptor(header="rev", encoding=encoding, version_of=lambda r: r.value)
    record = stamp.on_send(ProducerRecord("t", -12345))
    assert _version(record, encoding, "rev") == -12345
    rules = CompactionRules.create("header", header="rev", encoding=encoding)
    assert rules.version_of(record.headers) == -12345


def test_configure_reads_the_kip_header_setting_and_encoding() -> None:
    stamp = VersionStampInterceptor(version_of=lambda r: 300)
    stamp.configure(
        {
            "bootstrap.servers": "x",
            "compaction.strategy.header": "ver",
            "compaction.strategy.header.encoding": "VarLong",
        }
    )
    record = stamp.on_send(ProducerRecord("t", b""))
    assert (stamp.header, stamp.encoding) == ("ver", "varlong")
    assert decode_varlong(record.headers.last_value("ver")) == 300  # type: ignore[arg-type]


def test_configure_without_the_settings_keeps_the_constructor_values() -> None:
    stamp = VersionStampInterceptor(header="h", encoding="varlong")
    stamp.configure({"bootstrap.servers": "x"})
    assert (stamp.header, stamp.encoding) == ("h", "varlong")


@pytest.mark.parametrize(
    ("kwargs", "setting"),
    [
        ({"header": " "}, "compaction.strategy.header"),
        ({"encoding": "zigzag"}, "compaction.strategy.header.encoding"),
    ],
)
def test_bad_settings_raise_configuration_error_naming_them(
    kwargs: dict[str, str], setting: str
) -> None:
    with pytest.raises(ConfigurationError, match=setting.replace(".", r"\.")):
        VersionStampInterceptor(**kwargs)  # type: ignore[arg-type]


def test_out_of_range_user_version_is_a_value_error() -> None:
    stamp = VersionStampInterceptor(version_of=lambda r: 1 << 64)
    with pytest.raises(ValueError, match="64-bit"):
        stamp.on_send(ProducerRecord("t", b""))
