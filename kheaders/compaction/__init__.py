"""KIP-280 compaction on the client side: the latest record per key by offset, timestamp or
a version header.

* :class:`CompactionRules` -- the one definition of the order (``wins``, ``version_of``).
* :func:`latest` -- the latest message per key of any iterable of consumed messages.
* :class:`LatestState` -- a live mapping of a topic's latest state, kept current by a consumer.
* :func:`write_state`, :func:`check_topic`, :func:`diff_state` -- copy a state to a compacted
  topic and compare.

See ``docs/compaction.md`` for the rules, the cross-partition choice and the encodings.
"""

from kheaders import _public
from kheaders.compaction._latest import (
    CompactionStats,
    ConsumedMessage,
    StateEntry,
    StateTable,
    latest,
)
from kheaders.compaction._latest_state import LatestState, StateConsumer
from kheaders.compaction._rules import (
    ENCODING_CONFIG,
    HEADER_CONFIG,
    STRATEGY_CONFIG,
    BlankHeaderKeyWarning,
    CompactionRules,
    Encoding,
    RecordKey,
    Strategy,
    decode_long,
    decode_varlong,
    encode_version,
)
from kheaders.compaction._state_topic import (
    StateProducer,
    check_topic,
    create_compacted_topic,
    diff_state,
    write_state,
)

__all__ = [
    "ENCODING_CONFIG",
    "HEADER_CONFIG",
    "STRATEGY_CONFIG",
    "BlankHeaderKeyWarning",
    "CompactionRules",
    "CompactionStats",
    "ConsumedMessage",
    "Encoding",
    "LatestState",
    "RecordKey",
    "StateConsumer",
    "StateEntry",
    "StateProducer",
    "StateTable",
    "Strategy",
    "check_topic",
    "create_compacted_topic",
    "decode_long",
    "decode_varlong",
    "diff_state",
    "encode_version",
    "latest",
    "write_state",
]
_public.claim(__name__, globals())
