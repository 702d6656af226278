"""Record values encrypted and signed end to end, while headers stay readable (docs/protect.md).

Needs the ``protect`` extra (``pip install kheaders[protect]``: the ``cryptography`` package).

Encryption is AES-256-GCM per record with a fresh 96-bit nonce; signatures are Ed25519. The
key id, algorithm, nonce, format version, context and bound header names travel in the
``kheaders.protect`` / ``kheaders.sign`` headers (KIP-482 tagged structs), so every component
in between routes, traces and dead-letters the record without keys.
"""

try:
    import cryptography  # noqa: F401 - the extra's one dependency, checked first
except ImportError as exc:  # pragma: no cover - the dev extra installs it
    raise ImportError(
        "kheaders.protect needs the protect extra: pip install 'kheaders[protect]'"
    ) from exc

from kheaders import _public
from kheaders._errors import IntegrityError
from kheaders.protect._crypto import public_key_of
from kheaders.protect._format import (
    AES_256_GCM,
    ED25519,
    PROTECT_HEADER,
    SIGN_HEADER,
    SIGNATURE_HEADER,
    ProtectionHeader,
    SignatureParams,
)
from kheaders.protect._keys import CachingKeyring, Keyring, StaticKeyring
from kheaders.protect._open import describe
from kheaders.protect._serde import (
    ProtectedDeserializer,
    ProtectedSerializer,
    RecordKeyDeserializer,
    RecordKeySerializer,
)

__all__ = [
    "AES_256_GCM",
    "ED25519",
    "PROTECT_HEADER",
    "SIGNATURE_HEADER",
    "SIGN_HEADER",
    "CachingKeyring",
    "IntegrityError",
    "Keyring",
    "ProtectedDeserializer",
    "ProtectedSerializer",
    "ProtectionHeader",
    "RecordKeyDeserializer",
    "RecordKeySerializer",
    "SignatureParams",
    "StaticKeyring",
    "describe",
    "public_key_of",
]
_public.claim(__name__, globals())

# One naming pattern for serializers, <Format>Serializer / <Format>Deserializer (0.2):
# the old names warn for one release.
__getattr__ = _public.moved(
    __name__,
    {
        "ProtectingSerializer": "kheaders.protect.ProtectedSerializer",
        "UnprotectingDeserializer": "kheaders.protect.ProtectedDeserializer",
    },
    since="0.2",
)
