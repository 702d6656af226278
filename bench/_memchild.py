"""Child process of the memory group: consume N records, print peak RSS as JSON.

``python -m bench._memchild --bootstrap B --topic T --count N --kind raw|kheaders``.
Each contender runs in its own process so that ``ru_maxrss`` (which never goes down)
measures that contender alone.
"""

from __future__ import annotations

import argparse
import json
import resource
import time
import uuid

from bench._readers import open_consumer, read_kheaders, read_raw


def main() -> None:
    """Parse the arguments, consume, print ``{"seconds", "maxrss_kb", "baseline_kb"}``."""
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
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    consumer = open_consumer(args.kind, config, args.topic)
    reader = read_kheaders if args.kind == "kheaders" else read_raw
    t0 = time.perf_counter()
    seen = reader(consumer, args.count)
    seconds = time.perf_counter() - t0
    consumer.close()
    if seen < args.count:
        raise SystemExit(f"only {seen} of {args.count} records had what was read")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": seconds, "maxrss_kb": peak, "baseline_kb": baseline}))


if __name__ == "__main__":
    main()
