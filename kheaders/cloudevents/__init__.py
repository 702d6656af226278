"""CloudEvents over Kafka records: the Kafka protocol binding, both content modes.

:class:`CloudEventSerializer` / :class:`CloudEventDeserializer` are kheaders serializers
(they see the headers), so they work in :class:`~kheaders.Producer`,
:class:`~kheaders.Consumer`, :mod:`kheaders.aio` and from a config's ``value.serializer``.
Events are :class:`Event` objects, plain mappings, or the CloudEvents SDK's events (the
``cloudevents`` extra; nothing here needs it). See docs/cloudevents.md.
"""

from kheaders import _public
from kheaders._errors import CloudEventError
from kheaders.cloudevents._attributes import REQUIRED, SPECVERSION
from kheaders.cloudevents._binary import PREFIX
from kheaders.cloudevents._event import Event, event_of
from kheaders.cloudevents._keys import PARTITIONKEY, partition_key
from kheaders.cloudevents._serde import (
    CloudEventDeserializer,
    CloudEventSerializer,
    StructuredCloudEventSerializer,
)
from kheaders.cloudevents._structured import MEDIA_TYPE

__all__ = [
    "MEDIA_TYPE",
    "PARTITIONKEY",
    "PREFIX",
    "REQUIRED",
    "SPECVERSION",
    "CloudEventDeserializer",
    "CloudEventError",
    "CloudEventSerializer",
    "Event",
    "StructuredCloudEventSerializer",
    "event_of",
    "partition_key",
]
_public.claim(__name__, globals())
