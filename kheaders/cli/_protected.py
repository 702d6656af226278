"""What ``kheaders tail`` shows of protected records (kheaders.protect): the protection in
place of the ciphertext, and with ``--verify-keys`` whether the signature verifies.

Without the ``protect`` extra (``cryptography``), records show as any others.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

from confluent_kafka import Message

from kheaders._errors import ConfigurationError, IntegrityError
from kheaders._model.redact import printable

Checker = Callable[[Sequence[tuple[str, bytes | None]], bytes | None, bytes | None], str]
"""A record's headers, key and value → ``valid (...)``; raises IntegrityError."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``--verify-keys`` option."""
    parser.add_argument(
        "--verify-keys",
        default=None,
        metavar="DIR",
        help="verify kheaders.protect signatures with the Ed25519 public keys in DIR"
        " (one <kid>.key file each, base64); needs kheaders[protect]",
    )


def checker(args: argparse.Namespace) -> Checker | None:
    """The signature checker ``--verify-keys`` asks for, or ``None``.

    Raises ConfigurationError for an unreadable key directory or a missing extra.
    """
    directory = getattr(args, "verify_keys", None)
    if directory is None:
        return None
    try:
        from kheaders.protect import StaticKeyring
        from kheaders.protect._crypto import verify_keys
        from kheaders.protect._open import verify_signature
    except ImportError as exc:
        raise ConfigurationError(
            "--verify-keys needs the protect extra: pip install 'kheaders[protect]'"
        ) from exc
    keys = verify_keys(StaticKeyring.from_directory(directory))

    def check(
        pairs: Sequence[tuple[str, bytes | None]], key: bytes | None, value: bytes | None
    ) -> str:
        return verify_signature(pairs, key, value, keys)

    return check


def protected_lines(
    msg: Message, pairs: Sequence[Any], lines: list[str], check: Checker | None
) -> None:
    """Show ``<encrypted kid=... alg=...>`` as the value of an encrypted record (``lines[1]``),
    and a ``signature:`` line when ``check`` is given."""
    try:
        from kheaders.protect import describe
    except ImportError:
        return
    shown = describe(pairs)
    if shown is not None:
        lines[1] = f"  value: {shown}"
    if check is None:
        return
    key, value = msg.key(), msg.value()
    if not isinstance(key, bytes | None) or not isinstance(value, bytes | None):
        return
    try:
        lines.append(f"  signature: {check(pairs, key, value)}")
    except IntegrityError as exc:
        lines.append(f"  signature: REFUSED: {printable(str(exc))}")
