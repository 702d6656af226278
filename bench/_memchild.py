"""Child process of the memory group: consume N records, print peak RSS as JSON.

``python -m bench._memchild --bootstrap B --topic T --count N --kind raw|kheaders``.
Each contender runs in its own process so that the peak (which never goes down) measures
that contender alone. The peak is the kernel's high-water mark of this process's memory
(``VmHWM`` in ``/proc/self/status``). ``getrusage().ru_maxrss`` is printed too, but Linux
carries it over from the parent across fork + exec (it starts at the parent's RSS), so it is
not used for the ratio.
"""

from __future__ import annotations

import argparse
import json
import resource
import time
import uuid

from bench._readers import open_consumer, read_kheaders, read_raw


def high_water_kb() -> int:
    """This process's peak resident set size (``VmHWM``), in KiB."""
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise RuntimeError("no VmHWM in /proc/self/status")


def main() -> None:
    """Parse the arguments, consume, print ``{"seconds", "maxrss_kb", "baseline_kb", ...}``."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--kind", choices=("raw", "kheaders"), required=True)
    args = parser.parse_args()
    config: dict[str, object] = {
        "bootstrap.servers": args.bootstrap,
        "group.id": f"bench-mem-{uuid.uuid4().hex[:8]}",
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
    }
    if args.kind == "kheaders":
        import kheaders  # noqa: F401 - what a kheaders application loads anyway
    baseline = high_water_kb()
    consumer = open_consumer(args.kind, config, args.topic)
    reader = read_kheaders if args.kind == "kheaders" else read_raw
    t0 = time.perf_counter()
    seen = reader(consumer, args.count)
    seconds = time.perf_counter() - t0
    consumer.close()
    if seen < args.count:
        raise SystemExit(f"only {seen} of {args.count} records had what was read")
    print(
        json.dumps(
            {
                "seconds": seconds,
                "maxrss_kb": high_water_kb(),
                "baseline_kb": baseline,
                "ru_maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
            }
        )
    )


if __name__ == "__main__":
    main()
