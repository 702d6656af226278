"""Headers.to_bytes/from_bytes and varints against kio's equivalents.

Run: ``python bench/wire_vs_kio.py``.

kio's readers are native (Rust); its writers are Python writing into a BytesIO. Each row prints
the best of 7 timing runs for kheaders and kio and the speed ratio (> 1: kheaders is faster).
"""

from __future__ import annotations

import io
import sys
import timeit
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import kio.serial.readers as kr
import kio.serial.writers as kw
from kio.records.readers import read_header
from kio.records.schema import RecordHeader
from kio.records.writers import write_header

from kheaders import Headers, wire

CASES: dict[str, list[tuple[str, bytes | None]]] = {
    "3 tracing-style headers": [
        ("traceparent", b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
        ("client.id", b"svc-a"),
        ("content-type", b"application/json"),
    ],
    "20 headers x 100 B": [(f"key-{i}", bytes(100)) for i in range(20)],
    "1 header x 1 KiB": [("payload", bytes(1024))],
}


def best(f: Callable[[], object], n: int) -> float:
    return min(timeit.repeat(f, number=n, repeat=7)) / n


def row(name: str, size: int, ours: float, theirs: float) -> None:
    print(
        f"{name:36s} {size:5d} B  kheaders {ours * 1e9:6.0f} ns {size / ours / 1e6:7.1f} MB/s"
        f" | kio {theirs * 1e9:6.0f} ns {size / theirs / 1e6:7.1f} MB/s | x{theirs / ours:.2f}"
    )


def headers_rows() -> None:
    for name, pairs in CASES.items():
        h = Headers(pairs)
        data = h.to_bytes()
        kh = tuple(RecordHeader(key=k.encode(), value=v) for k, v in pairs)

        def kio_write(kh: tuple[RecordHeader, ...] = kh) -> bytes:
            buf = io.BytesIO()
            kw.write_signed_varint(buf, len(kh))
            for x in kh:
                write_header(buf, x)
            return buf.getvalue()

        def kio_read(data: bytes = data) -> list[RecordHeader]:
            n, size = kr.read_signed_varint(data, 0)
            pos, out = size, []
            for _ in range(n):
                x, size = read_header(data, pos)
                pos += size
                out.append(x)
            return out

        assert kio_write() == data
        row(f"write {name}", len(data), best(h.to_bytes, 20000), best(kio_write, 20000))
        row(
            f"read  {name}",
            len(data),
            best(lambda data=data: Headers.from_bytes(data), 20000),
            best(kio_read, 20000),
        )


def varint_rows() -> None:
    kinds = [
        ("uvarint", wire.write_unsigned_varint, wire.read_unsigned_varint,
         kw.write_unsigned_varint, kr.read_unsigned_varint, (1, 300, 2**20, 2**31 - 1)),
        ("varint", wire.write_varint, wire.read_varint,
         kw.write_signed_varint, kr.read_signed_varint, (-1, 1000, -(2**31))),
        ("varlong", wire.write_varlong, wire.read_varlong,
         kw.write_signed_varlong, kr.read_signed_varlong, (-1, 2**40, -(2**63))),
    ]  # fmt: skip
    for kind, write, read, kio_write, kio_read, values in kinds:
        for v in values:
            enc = write(v)
            buf = io.BytesIO()

            def kio_w(v: int = v, buf: io.BytesIO = buf, kio_write: object = kio_write) -> None:
                buf.seek(0)
                kio_write(buf, v)  # type: ignore[operator]

            row(f"{kind} write {v}", len(enc), best(lambda v=v, w=write: w(v), 200000),
                best(kio_w, 200000))  # fmt: skip
            row(f"{kind} read  {v}", len(enc), best(lambda e=enc, r=read: r(e, 0), 200000),
                best(lambda e=enc, r=kio_read: r(e, 0), 200000))  # fmt: skip


if __name__ == "__main__":
    headers_rows()
    varint_rows()
