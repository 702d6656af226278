"""One exception tree: every exception kheaders defines derives from ``KHeadersError`` and
the builtin it refines, and the tree drawn in ``kheaders/_errors.py`` names each of its
classes."""

from __future__ import annotations

import importlib
import pkgutil
import re

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

import kheaders
from kheaders import KHeadersError, _errors
from kheaders.mirror._provenance import read_hops
from kheaders.protect import StaticKeyring
from kheaders.protect._crypto import KeyCache
from tests.protect.helpers import AES_KEY, protect, writer


def _defined_exceptions() -> dict[str, type[BaseException]]:
    """Every exception class (warnings aside) a kheaders module defines, by dotted name."""
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(kheaders.__path__, "kheaders."):
        if info.name.endswith(".__main__"):
            continue  # runs a command when imported
        if info.name == "kheaders.processing.spring_headers":
            continue  # a moved module's old name: warns when imported (test_moved_names.py)
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if (
                isinstance(obj, type)
                and issubclass(obj, BaseException)
                and not issubclass(obj, Warning)
                and obj.__module__.partition(".")[0] == "kheaders"
                and obj.__qualname__ == name
            ):
                found[f"{obj.__module__}.{name}"] = obj
    return found


def test_every_exception_kheaders_defines_is_in_the_tree() -> None:
    found = _defined_exceptions()
    assert "kheaders.DecodeError" in found
    outside = sorted(name for name, cls in found.items() if not issubclass(cls, KHeadersError))
    assert not outside, outside


def test_the_drawn_tree_names_every_class_of_the_errors_module() -> None:
    assert _errors.__doc__ is not None
    drawn = set(re.findall(r"^(?:[│ ]   )*[├└]── (\w+)", _errors.__doc__, flags=re.MULTILINE))
    defined = {
        name
        for name, obj in vars(_errors).items()
        if isinstance(obj, type) and issubclass(obj, KHeadersError) and obj is not KHeadersError
    }
    assert {"DecodeError", "IntegrityError", "RefusedHopsError"} <= drawn
    assert drawn == defined


@pytest.mark.parametrize(
    ("cls", "builtin"),
    [
        (_errors.AlreadyProtectedError, ValueError),
        (_errors.UnknownKeyError, LookupError),
        (_errors.RefusedHopsError, ValueError),
    ],
)
def test_the_joined_exceptions_keep_their_builtin_base(
    cls: type[Exception], builtin: type[Exception]
) -> None:
    assert issubclass(cls, KHeadersError)
    assert issubclass(cls, builtin)


def test_a_record_protected_twice_raises_from_the_tree() -> None:
    key, value, headers = protect(writer(), "orders", b"k", b"v", [])
    with pytest.raises(_errors.AlreadyProtectedError, match="protected twice") as info:
        protect(writer(), "orders", key, value, headers)
    assert isinstance(info.value, KHeadersError)
    assert isinstance(info.value, ValueError)


def test_an_unknown_key_id_raises_from_the_tree() -> None:
    keys = KeyCache(StaticKeyring({"k1": AES_KEY}), AESGCM, "encryption")
    with pytest.raises(_errors.UnknownKeyError, match="'k2'") as info:
        keys.get("k2")
    assert isinstance(info.value, KHeadersError)
    assert isinstance(info.value, LookupError)


def test_a_refused_hops_header_raises_from_the_tree() -> None:
    with pytest.raises(_errors.RefusedHopsError, match="one expected") as info:
        read_hops([b"a", b"b"])
    assert isinstance(info.value, KHeadersError)
    assert isinstance(info.value, ValueError)
