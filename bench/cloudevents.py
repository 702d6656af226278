"""CloudEvents codec: kheaders.cloudevents against the CloudEvents SDK's Kafka binding.

Encodes the same SDK events to a record's headers and value and decodes them back, in both
content modes, alternating the two contenders every round; reports the median time per
event of each and kheaders' ratio (SDK time / kheaders time: above 1 is faster). No broker:
this is the codec alone. ``python -m bench.cloudevents [--events N] [--rounds R]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from cloudevents.core.bindings import kafka
from cloudevents.core.formats.json import JSONFormat
from cloudevents.core.v1.event import CloudEvent

from kheaders import Headers
from kheaders.cloudevents import CloudEventDeserializer, CloudEventSerializer


def _events(n: int) -> list[Any]:
    at = datetime(2026, 11, 25, tzinfo=UTC)
    return [
        CloudEvent(
            {
                "id": f"e-{i}",
                "source": "/orders",
                "type": "com.example.order.created",
                "time": at,
                "datacontenttype": "application/json",
                "subject": f"order-{i}",
                "comexampleext": "x",
            },
            {"order": i, "lines": [1, 2, 3]},
        )
        for i in range(n)
    ]


def _kheaders(mode: str) -> Callable[[list[Any]], None]:
    write = CloudEventSerializer(mode).serialize  # type: ignore[arg-type]
    read = CloudEventDeserializer().deserialize

    def run(events: list[Any]) -> None:
        for event in events:
            headers = Headers()
            value = write("t", headers, event)
            read("t", headers.close(), value)

    return run


def _sdk(mode: str) -> Callable[[list[Any]], None]:
    fmt = JSONFormat()
    write = kafka.to_binary if mode == "binary" else kafka.to_structured
    read = kafka.from_binary if mode == "binary" else kafka.from_structured

    def run(events: list[Any]) -> None:
        for event in events:
            read(write(event, fmt), fmt)

    return run


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    events = _events(args.events)
    for mode in ("binary", "structured"):
        contenders = {"kheaders": _kheaders(mode), "sdk": _sdk(mode)}
        times: dict[str, list[float]] = {name: [] for name in contenders}
        for round_ in range(args.rounds):
            order = list(contenders) if round_ % 2 == 0 else list(reversed(contenders))
            for name in order:
                start = time.perf_counter()
                contenders[name](events)
                times[name].append((time.perf_counter() - start) / len(events))
        k, s = statistics.median(times["kheaders"]), statistics.median(times["sdk"])
        print(
            f"{mode:>10}: kheaders {k * 1e6:6.1f} us/event, SDK {s * 1e6:6.1f} us/event,"
            f" ratio {s / k:.2f}x (encode + decode, {args.events} events, {args.rounds} rounds)"
        )


if __name__ == "__main__":
    main()
