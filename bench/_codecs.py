"""Codec groups: kheaders' wire functions vs the ``kio`` package's on the same inputs (MB/s).

kio's readers are native (a compiled ``_kio_native`` module); its writers are Python and write
into a stream (``io.BytesIO``), as its record writer does. Both sides get their inputs in their
own model (kheaders ``Headers`` / kio ``RecordHeader`` tuples) built before the clock starts.
The rate counts the bytes of the wire form encoded or decoded. Decoded values are dropped
as soon as they are made (on both sides), so that whichever run happens to trigger a full
garbage collection over retained results does not decide the ratio.
"""

from __future__ import annotations

import gc
import io
import random
import time
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from bench._model import Contender, Env, Group, PeakRss, Sample, Target
from bench._workload import POOL, workload

Op = Callable[[Any], object]
"""Does the whole timed work on prepared inputs."""


# -- inputs -------------------------------------------------------------------------------------


@lru_cache(maxsize=8)
def _ints(n: int, bits: int, signed: bool) -> list[int]:
    """Mostly small numbers (lengths, counts), some large, as real protocol fields are."""
    rng = random.Random(482)
    top = (1 << (bits - 1)) - 1
    out = []
    for _ in range(n):
        r = rng.random()
        v = (
            rng.randrange(64)
            if r < 0.7
            else rng.randrange(16384)
            if r < 0.9
            else rng.randrange(top)
        )
        out.append(-v if signed and rng.random() < 0.2 else v)
    return out


@lru_cache(maxsize=4)
def _strings(n: int) -> list[str]:
    rng = random.Random(482)
    words = ["orders", "payments", "bench-client", "eu-west-1", "trace", "crème-brûlée", "k"]
    return [f"{rng.choice(words)}-{rng.randrange(10 ** rng.randrange(1, 8))}" for _ in range(n)]


@lru_cache(maxsize=4)
def _tagged(n: int) -> list[dict[int, bytes]]:
    rng = random.Random(482)
    pool = [
        {0: b"eu-west-1", 1: rng.randbytes(8), 3: rng.randbytes(16)},
        {0: b"us-east-2"},
        {2: rng.randbytes(4), 7: b"rack-a", 130: rng.randbytes(32)},
    ]
    return [pool[i % len(pool)] for i in range(n)]


def _header_lists(n: int) -> list[list[tuple[str, bytes]]]:
    w = workload(min(n, POOL))
    return [w.headers[i % len(w)] for i in range(n)]


# -- kio compositions (kio has no single call for these; this is how its record code does it) --


def _kio() -> Any:
    import kio.records.readers as rr
    import kio.records.schema as rs
    import kio.records.writers as rw
    import kio.serial.readers as sr
    import kio.serial.writers as sw

    return rr, rs, rw, sr, sw


def _kio_write_raw(buffer: io.BytesIO, value: bytes) -> None:
    buffer.write(value)


def _kio_encode_headers(items: list[tuple[Any, ...]]) -> list[bytes]:
    _, _, rw, _, sw = _kio()
    write_header = rw.write_header
    write_count = sw.write_signed_varint
    out = []
    for headers in items:
        buf = io.BytesIO()
        write_count(buf, len(headers))
        for h in headers:
            write_header(buf, h)
        out.append(buf.getvalue())
    return out


def _kio_decode_headers(blobs: list[bytes]) -> int:
    rr, _, _, sr, _ = _kio()
    read_header = rr.read_header
    read_count = sr.read_signed_varint
    decoded = 0
    for data in blobs:
        count, pos = read_count(data, 0)
        headers = []
        for _ in range(count):
            h, size = read_header(data, pos)
            pos += size
            headers.append(h)
        tuple(headers)  # the decoded record's headers, dropped: see the module doc
        decoded += 1
    return decoded


def _stream_encoder(write: Callable[[io.BytesIO, Any], None]) -> Callable[[list[Any]], bytes]:
    def encode(values: list[Any]) -> bytes:
        buf = io.BytesIO()
        for v in values:
            write(buf, v)
        return buf.getvalue()

    return encode


def _kio_decoder(read: Callable[[bytes, int], tuple[Any, int]]) -> Op:
    def decode(data: bytes) -> int:
        decoded = 0
        pos, end = 0, len(data)
        while pos < end:
            _value, size = read(data, pos)
            pos += size
            decoded += 1
        return decoded

    return decode


def _kio_encode_tagged(sections: list[dict[int, bytes]]) -> bytes:
    _, _, _, _, sw = _kio()
    write_count = sw.write_unsigned_varint
    write_field = sw.write_tagged_field
    buf = io.BytesIO()
    for fields in sections:
        write_count(buf, len(fields))
        for tag in sorted(fields):
            write_field(buf, tag, _kio_write_raw, fields[tag])
    return buf.getvalue()


def _kio_decode_tagged(data: bytes) -> int:
    _, _, _, sr, _ = _kio()
    read_uv = sr.read_unsigned_varint
    decoded = 0
    pos, end = 0, len(data)
    while pos < end:
        count, size = read_uv(data, pos)
        pos += size
        fields: dict[int, bytes] = {}
        for _ in range(count):
            tag, size = read_uv(data, pos)
            pos += size
            length, size = read_uv(data, pos)
            pos += size
            fields[tag] = data[pos : pos + length]
            pos += length
        decoded += 1
    return decoded


# -- kheaders side ------------------------------------------------------------------------------


def _kh_decoder(read: Callable[[bytes, int], tuple[Any, int]]) -> Op:
    def decode(data: bytes) -> int:
        decoded = 0
        pos, end = 0, len(data)
        while pos < end:
            _value, pos = read(data, pos)
            decoded += 1
        return decoded

    return decode


def _kh_joiner(write: Callable[[Any], bytes]) -> Op:
    def encode(values: list[Any]) -> bytes:
        return b"".join([write(v) for v in values])

    return encode


def _kh_decode_tagged(data: bytes) -> int:
    from kheaders.wire import read_tagged_fields

    decoded = 0
    pos, end = 0, len(data)
    while pos < end:
        _fields, pos = read_tagged_fields(data, pos)
        decoded += 1
    return decoded


# -- the groups ---------------------------------------------------------------------------------


Prepare = Callable[[int], tuple[Any, int]]
"""``n`` -> (inputs, bytes of wire form)"""


def _contender(prepare: Prepare, op: Op) -> Callable[[int], Sample]:
    def run(n: int) -> Sample:
        inputs, nbytes = prepare(n)
        gc.collect()
        with PeakRss() as mem:
            t0 = time.perf_counter()
            op(inputs)
            seconds = time.perf_counter() - t0
        return Sample(seconds, nbytes, mem.growth_mb, {"items": n, **mem.gc_extra(n)})

    return run


def _group(
    name: str, title: str, n: int, kh: tuple[Prepare, Op] | None, kio: tuple[Prepare, Op]
) -> Group:
    return Group(
        name=f"codec:{name}",
        title=title,
        baseline="kio",
        contenders=[
            Contender("kio", _contender(*kio)),
            Contender(
                "kheaders",
                _contender(*kh) if kh else None,
                "" if kh else "unavailable: kheaders.wire is not in this checkout yet",
            ),
        ],
        targets=[Target(f"5. {name} faster than kio", "kheaders", "kio", ">=", 1.0)],
        count=n,
        unit="MB/s",
        warmup=max(n // 10, 1000),
    )


def _wire() -> Any:
    try:
        import kheaders.wire as wire
    except ImportError:
        return None
    return wire


def codec_groups(env: Env) -> list[Group]:
    """One group per encoding and direction."""
    from kheaders import Headers

    _, rs, _, sr, sw = _kio()
    wire = _wire()
    n = min(env.records, 20_000) if env.quick else 200_000  # --records below that: smaller

    # headers (record-v2 header section)
    def kh_headers(n: int) -> tuple[Any, int]:
        hs = [Headers(h) for h in _header_lists(n)]
        return hs, sum(len(h.to_bytes()) for h in hs)

    def kio_headers(n: int) -> tuple[Any, int]:
        record_header = rs.RecordHeader
        items = [
            tuple(record_header(key=k.encode(), value=v) for k, v in h) for h in _header_lists(n)
        ]
        return items, sum(len(b) for b in _kio_encode_headers(items))

    def header_blobs(n: int) -> tuple[Any, int]:
        blobs = [Headers(h).to_bytes() for h in _header_lists(n)]
        return blobs, sum(map(len, blobs))

    def kh_encode_headers(hs: list[Any]) -> list[bytes]:
        return [h.to_bytes() for h in hs]

    def kh_decode_headers(blobs: list[bytes]) -> int:
        from_bytes = Headers.from_bytes
        decoded = 0
        for b in blobs:
            from_bytes(b)  # dropped, as kio's are: see the module doc
            decoded += 1
        return decoded

    out = [
        _group(
            "headers-encode",
            "Headers.to_bytes vs kio write_header",
            n,
            (kh_headers, kh_encode_headers),
            (kio_headers, _kio_encode_headers),
        ),
        _group(
            "headers-decode",
            "Headers.from_bytes vs kio read_header",
            n,
            (header_blobs, kh_decode_headers),
            (header_blobs, _kio_decode_headers),
        ),
    ]

    # varints: (name, kheaders writer/reader names, kio writer/reader, bits, signed)
    from kheaders._codec import varint as _varint

    varints = [
        (
            "varint",
            "write_varint",
            "read_varint",
            sw.write_signed_varint,
            sr.read_signed_varint,
            32,
            True,
        ),
        (
            "unsigned-varint",
            "write_unsigned_varint",
            "read_unsigned_varint",
            sw.write_unsigned_varint,
            sr.read_unsigned_varint,
            32,
            False,
        ),
        (
            "varlong",
            "write_varlong",
            "read_varlong",
            sw.write_signed_varlong,
            sr.read_signed_varlong,
            64,
            True,
        ),
    ]
    m = n * 3
    for name, kw, kr, kio_w, kio_r, bits, signed in varints:
        khw = getattr(_varint, kw)
        khr = getattr(_varint, kr)

        def ints(
            n: int, bits: int = bits, signed: bool = signed, khw: Any = khw
        ) -> tuple[Any, int]:
            values = _ints(n, bits, signed)
            return values, len(b"".join(map(khw, values)))

        def blob(
            n: int, bits: int = bits, signed: bool = signed, khw: Any = khw
        ) -> tuple[Any, int]:
            data = b"".join(map(khw, _ints(n, bits, signed)))
            return data, len(data)

        out.append(
            _group(
                f"{name}-encode",
                f"write {name}",
                m,
                (ints, _kh_joiner(khw)),
                (ints, _stream_encoder(kio_w)),
            )
        )
        out.append(
            _group(
                f"{name}-decode",
                f"read {name}",
                m,
                (blob, _kh_decoder(khr)),
                (blob, _kio_decoder(kio_r)),
            )
        )

    # compact strings and tagged fields (kheaders.wire)
    def strings(n: int) -> tuple[Any, int]:
        values = _strings(n)
        return values, len(_stream_encoder(sw.write_compact_string)(values))

    def string_blob(n: int) -> tuple[Any, int]:
        data = _stream_encoder(sw.write_compact_string)(_strings(n))
        return data, len(data)

    def sections(n: int) -> tuple[Any, int]:
        values = _tagged(n)
        return values, len(_kio_encode_tagged(values))

    def tagged_blob(n: int) -> tuple[Any, int]:
        data = _kio_encode_tagged(_tagged(n))
        return data, len(data)

    have = wire is not None
    out += [
        _group(
            "compact-string-encode",
            "write compact string",
            m,
            (strings, _kh_joiner(wire.write_compact_string)) if have else None,
            (strings, _stream_encoder(sw.write_compact_string)),
        ),
        _group(
            "compact-string-decode",
            "read compact string",
            m,
            (string_blob, _kh_decoder(wire.read_compact_string)) if have else None,
            (string_blob, _kio_decoder(sr.read_compact_string)),
        ),
        _group(
            "tagged-fields-encode",
            "write tagged fields",
            n,
            (sections, _kh_joiner(wire.write_tagged_fields)) if have else None,
            (sections, _kio_encode_tagged),
        ),
        _group(
            "tagged-fields-decode",
            "read tagged fields",
            n,
            (tagged_blob, _kh_decode_tagged) if have else None,
            (tagged_blob, _kio_decode_tagged),
        ),
    ]
    return out
