"""The pipeline's command line: every argument checked before the JVM starts, then the run.

``python -m kheaders.spark.pipeline``, ``spark-submit kheaders/spark/pipeline.py`` and
``kheaders pipeline`` all come here. A bad argument exits 2 within milliseconds, naming it;
progress goes to stderr while Spark works; the report to stdout.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kheaders._errors import ConfigurationError, KHeadersError
from kheaders.compaction._rules import CompactionRules

_TOPIC = re.compile(r"[A-Za-z0-9._-]{1,249}")
_MASTER = re.compile(
    r"local(\[(\*|\d+)(,\d+)?\])?|local-cluster\[\d+,\d+,\d+\]|(spark|k8s|mesos)://\S+|yarn"
)


@dataclass(frozen=True)
class PipelineArgs:
    """The checked arguments of one run."""

    bootstrap: str
    topic: str
    strategy: str
    header: str | None
    encoding: str
    starting_offsets: str
    ending_offsets: str
    output_topic: str | None
    parquet: str | None
    master: str
    max_traces: int | None
    keys_in_one_partition: bool
    kafka_options: dict[str, str] = field(default_factory=dict)


def parser() -> argparse.ArgumentParser:
    """The pipeline's argument parser."""
    p = argparse.ArgumentParser(
        prog="python -m kheaders.spark.pipeline",
        description="Compact a Kafka topic by KIP-280 in Spark and report its traces.",
    )
    p.add_argument("--bootstrap", required=True, help="bootstrap servers, host:port[,...]")
    p.add_argument("--topic", required=True, help="the topic to read (or a comma list)")
    p.add_argument("--starting-offsets", default="earliest", help="earliest or offsets JSON")
    p.add_argument("--ending-offsets", default="latest", help="latest or offsets JSON")
    p.add_argument("--strategy", default="offset", help="offset, timestamp or header")
    p.add_argument("--header", default=None, help="version header key (header strategy)")
    p.add_argument("--encoding", default="long", help="version encoding: long or varlong")
    p.add_argument("--output-topic", default=None, help="write the compacted state here")
    p.add_argument("--parquet", default=None, metavar="PATH", help="write the state as Parquet")
    p.add_argument("--master", default="local[*]", help="Spark master (default local[*])")
    p.add_argument(
        "--max-traces",
        type=int,
        default=20,
        metavar="N",
        help="trace lines to bring to the driver and print (default 20; -1: all)",
    )
    p.add_argument(
        "--keys-in-one-partition",
        action="store_true",
        help="every key lives in one partition (Kafka's default partitioner): one aggregation",
    )
    p.add_argument(
        "-o",
        "--option",
        action="append",
        default=[],
        metavar="kafka.KEY=VALUE",
        help="a librdkafka setting for the read and the write, as the Python API's kafka.*"
        " options (e.g. -o kafka.security.protocol=SASL_SSL); repeatable",
    )
    return p


def _topics(name: str, text: str) -> str:
    topics = [t.strip() for t in text.split(",")]
    for topic in topics:
        if not _TOPIC.fullmatch(topic) or topic in (".", ".."):
            raise ConfigurationError(
                f"{name} {topic!r} is not a legal Kafka topic name (1-249 of [A-Za-z0-9._-])"
            )
    return ",".join(topics)


def _bootstrap(text: str) -> str:
    for server in text.split(","):
        host, _, port = server.strip().rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ConfigurationError(f"--bootstrap {server!r} is not host:port")
    return text


def _kafka_options(items: list[str], bootstrap: str) -> dict[str, str]:
    from kheaders.spark._options import kafka_config

    options: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.startswith("kafka.") or len(key) == len("kafka."):
            raise ConfigurationError(f"--option {item!r} must look like kafka.KEY=VALUE")
        if key == "kafka.bootstrap.servers":
            raise ConfigurationError("--option kafka.bootstrap.servers: use --bootstrap")
        options[key] = value
    conf = kafka_config({**options, "kafka.bootstrap.servers": bootstrap}, consumer=True)
    _librdkafka_accepts(conf)
    return {k[len("kafka.") :]: v for k, v in options.items()}


def _librdkafka_accepts(conf: dict[str, str]) -> None:
    """Build (and drop) a client so librdkafka judges the setting names and values now."""
    from confluent_kafka import KafkaException, Producer

    from kheaders.spark._clientlog import client_conf

    try:
        Producer(client_conf(conf, "check"))
    except (KafkaException, ValueError, TypeError) as exc:
        raise ConfigurationError(f"--option: librdkafka refuses the settings: {exc}") from exc


def check_args(args: argparse.Namespace) -> PipelineArgs:
    """Every argument checked as the run would, without starting Spark.

    Raises ConfigurationError naming the argument at fault.
    """
    from kheaders.spark._options import check_batch_bounds, parse_offsets

    bootstrap = _bootstrap(args.bootstrap)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        CompactionRules.create(args.strategy, header=args.header, encoding=args.encoding)
    if args.strategy.strip().lower() == "header" and not (args.header or "").strip():
        raise ConfigurationError("--strategy header needs --header (the version header's key)")
    starting = parse_offsets(args.starting_offsets, "--starting-offsets", "earliest")
    ending = parse_offsets(args.ending_offsets, "--ending-offsets", "latest")
    check_batch_bounds(starting, ending)
    if not _MASTER.fullmatch(args.master):
        raise ConfigurationError(f"--master {args.master!r} is not a Spark master URL")
    if args.parquet is not None and "://" not in args.parquet:
        parent = Path(args.parquet).expanduser().resolve().parent
        if not parent.is_dir():
            raise ConfigurationError(f"--parquet: directory {parent} does not exist")
    if args.max_traces < -1:
        raise ConfigurationError("--max-traces must be -1 (all) or a count >= 0")
    return PipelineArgs(
        bootstrap=bootstrap,
        topic=_topics("--topic", args.topic),
        strategy=args.strategy,
        header=args.header,
        encoding=args.encoding,
        starting_offsets=args.starting_offsets,
        ending_offsets=args.ending_offsets,
        output_topic=None
        if args.output_topic is None
        else _topics("--output-topic", args.output_topic),
        parquet=args.parquet,
        master=args.master,
        max_traces=None if args.max_traces == -1 else args.max_traces,
        keys_in_one_partition=args.keys_in_one_partition,
        kafka_options=_kafka_options(args.option, bootstrap),
    )


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the pipeline from the command line; print the report.

    Exit codes: 0 done, 1 the run failed (message on stderr), 2 a bad argument (named).
    """
    args = parser().parse_args(argv)
    try:
        run = check_args(args)
    except ConfigurationError as exc:
        print(f"pipeline: bad argument: {exc}", file=sys.stderr)
        return 2
    from pyspark.sql import SparkSession

    from kheaders.spark import prepare_local_spark
    from kheaders.spark._errors import python_cause
    from kheaders.spark._pipeline import format_report, run_pipeline

    started = time.monotonic()
    _progress(f"starting Spark ({run.master})")
    prepare_local_spark(run.master)
    spark = (
        SparkSession.builder.master(run.master)
        .appName("kheaders-pipeline")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    _progress(f"[{time.monotonic() - started:6.1f}s] Spark is up")
    try:
        result = run_pipeline(
            spark,
            bootstrap=run.bootstrap,
            topic=run.topic,
            strategy=run.strategy,
            header=run.header,
            encoding=run.encoding,
            starting_offsets=run.starting_offsets,
            ending_offsets=run.ending_offsets,
            output_topic=run.output_topic,
            parquet=run.parquet,
            kafka_options=run.kafka_options,
            max_traces=run.max_traces,
            keys_in_one_partition=run.keys_in_one_partition,
            progress=_progress,
        )
    except (KHeadersError, ValueError) as exc:
        print(f"pipeline failed: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # Spark/py4j errors: report the cause, never a traceback dump
        cause = python_cause(exc) or f"{type(exc).__name__}: {exc}"
        print(f"pipeline failed: {cause}", file=sys.stderr)
        return 1
    print(format_report(result))
    return 0
