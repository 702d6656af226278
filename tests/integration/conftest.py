"""Fixtures of the cross-feature tests: the mirror tests' second cluster, keyrings."""

from __future__ import annotations

import os
from dataclasses import dataclass

import pytest

from kheaders.protect import StaticKeyring, public_key_of
from tests.mirror.conftest import both_topics, cluster_b

__all__ = ["Keys", "both_topics", "cluster_b", "keys"]


@dataclass(frozen=True)
class Keys:
    """What a producer writes with and what a reader opens with."""

    aes: StaticKeyring
    signing: StaticKeyring
    verifying: StaticKeyring


@pytest.fixture
def keys() -> Keys:
    seed = os.urandom(32)
    return Keys(
        StaticKeyring({"int-1": os.urandom(32)}),
        StaticKeyring({"sig-1": seed}),
        StaticKeyring({"sig-1": public_key_of(seed)}),
    )
