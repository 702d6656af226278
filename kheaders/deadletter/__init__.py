"""Dead letters, in one place: the two header contracts that say where a failed record came
from and why it failed, the writer and the readers of those headers, the publisher, replay,
and the topic naming rule.

* Spring Kafka's contract (``kafka_original-*``, ``kafka_exception-*``, ``retry_topic-*``;
  names and codecs in :mod:`kheaders.deadletter.spring`), written by
  :class:`kheaders.processing.Processor` for retry hops and dead letters, header for header
  in the order Spring's ``DeadLetterPublishingRecoverer`` writes them;
* kheaders' own ``kheaders.dlt.*`` headers, written by :class:`DeadLetterPublisher` and the
  mirror.

A dead-letter topic is ``<topic>-dlt`` (Spring's default) unless :class:`DeadLetter` says
otherwise; every user takes it as ``dead_letter=``. A missing dead-letter topic is created
with its source topic's partition count where the client may create topics, else refused at
start with a ConfigurationError naming it. See docs/processing.md ("The headers, side by side")
and docs/clients.md ("Dead letters").
"""

from kheaders import _public
from kheaders.deadletter import spring
from kheaders.deadletter._config import KHEADERS, SPRING, DeadLetter
from kheaders.deadletter._publisher import DeadLetterPublisher
from kheaders.deadletter._read import Failure, describe, failure, is_dead_letter, summary
from kheaders.deadletter._replay import assign_from_committed, original_timestamp, replay
from kheaders.deadletter._write import dead_letter_headers, spring_headers, without_retry_state

__all__ = [
    "KHEADERS",
    "SPRING",
    "DeadLetter",
    "DeadLetterPublisher",
    "Failure",
    "assign_from_committed",
    "dead_letter_headers",
    "describe",
    "failure",
    "is_dead_letter",
    "original_timestamp",
    "replay",
    "spring",
    "spring_headers",
    "summary",
    "without_retry_state",
]
_public.claim(__name__, globals())
