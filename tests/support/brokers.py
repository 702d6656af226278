"""Which local broker the tests start, and starting more of it (second clusters, fault tests).

Apache Kafka itself is the reference (``kheaders.broker.ApacheKafka``); where Java or Maven is
missing the run falls back to the embedded Tansu broker, unless ``KHEADERS_REQUIRE_JVM=1``
(``.ci/run`` sets it) makes that an error. Both kinds take ``port``, ``advertised_port`` and
``cluster_id`` and have ``start``, ``stop``, ``kill``, ``restart`` and ``bootstrap``; they
differ in what a restart keeps: Kafka its log, Tansu (memory storage) nothing.
"""

from __future__ import annotations

import base64
import os
import re
from typing import Literal

import pytest

from kheaders.broker import ApacheKafka, EmbeddedBroker, java_and_maven_missing

REQUIRE_JVM = "KHEADERS_REQUIRE_JVM"
"""Set to 1 (``.ci/run`` does): a missing Java or Maven fails the run instead of falling back."""

LocalBroker = ApacheKafka | EmbeddedBroker


def reference_local() -> Literal["apache", "embedded"]:
    """``"apache"`` when Java and Maven are here, else ``"embedded"`` (or exit, see above)."""
    missing = java_and_maven_missing()
    if missing is None:
        return "apache"
    if os.environ.get(REQUIRE_JVM) == "1":
        pytest.exit(f"{REQUIRE_JVM}=1 but {missing}", returncode=3)
    return "embedded"


def cluster_id(name: str) -> str:
    """A cluster id both brokers take, derived from a readable 16-character ``name``: Tansu
    takes any text, KRaft wants 16 bytes in base64url (``kheaders-mirrorb`` ->
    ``a2hlYWRlcnMtbWlycm9yYg``)."""
    raw = name.encode("ascii")
    if len(raw) != 16:
        raise ValueError(f"cluster id names are 16 ASCII characters, not {len(raw)}: {name!r}")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def local_broker(
    *,
    port: int | None = None,
    advertised_port: int | None = None,
    cluster: str | None = None,
) -> LocalBroker:
    """A not yet started broker of the reference kind (``cluster``: see :func:`cluster_id`)."""
    ident = cluster_id(cluster) if cluster is not None else None
    if reference_local() == "apache":
        return ApacheKafka(port, advertised_port=advertised_port, cluster_id=ident)
    return EmbeddedBroker(port, advertised_port=advertised_port, cluster_id=ident)


def topic_base(test_name: str, length: int = 60) -> str:
    """A topic name prefix from a test's name: Apache Kafka takes only ASCII letters, digits,
    ``.``, ``_`` and ``-`` (Tansu took any text, so parametrized ids with newlines or
    brackets went through there); everything else becomes ``-``."""
    return re.sub(r"[^A-Za-z0-9._-]", "-", test_name)[:length]
