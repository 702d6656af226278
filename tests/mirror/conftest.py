"""Two clusters for the mirror tests: the suite's broker (A) and a second embedded Tansu (B).

Tansu takes ``--cluster-id``: B reports ``kheaders-mirror-b`` in metadata, so the two are two
clusters to the mirror (A's id is whatever its broker reports: ``tansu_cluster`` when embedded).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator

import pytest

from kheaders.broker import EmbeddedBroker, create_topic

CLUSTER_B = "kheaders-mirror-b"


@pytest.fixture(scope="session")
def cluster_b() -> Iterator[str]:
    """The second cluster's bootstrap servers (an embedded broker with its own cluster id)."""
    broker = EmbeddedBroker(cluster_id=CLUSTER_B).start()
    try:
        yield broker.bootstrap
    finally:
        broker.stop()


@pytest.fixture
def both_topics(
    bootstrap: str, cluster_b: str, request: pytest.FixtureRequest
) -> Callable[..., str]:
    """``both_topics(partitions=1, dlt=True) -> name``: the same fresh topic on A and B (and
    its ``.dlt`` dead-letter topic on both)."""
    base = request.node.name.replace("[", "-").replace("]", "")[:50]

    def make(partitions: int = 1, dlt: bool = True) -> str:
        name = f"{base}-{uuid.uuid4().hex[:8]}"
        for cluster in (bootstrap, cluster_b):
            create_topic(cluster, name, partitions=partitions)
            if dlt:
                create_topic(cluster, name + ".dlt")
        return name

    return make
