"""Hostile bytes into every decoder: only kheaders.DecodeError comes out (None/[] for trace
context), nothing hangs, and no declared length makes a decoder allocate what the input
does not hold.

Three layers: each atheris target runs coverage-guided in a subprocess for a bounded number
of inputs; hypothesis feeds the same targets random and mutated-valid inputs; and a
"length bomb" (a length of 2**31 on ~10 bytes) is tried on every length-prefixed decoder
under tracemalloc.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kheaders
from kheaders import DecodeError, Headers
from kheaders._compiled import ENV, MANIFEST, MODULES, PACKAGE, disabled
from kheaders.values import BYTES, STRING, TaggedStruct, array, field
from kheaders.wire import (
    read_compact_array,
    read_compact_bytes,
    read_compact_string,
    read_headers,
    read_tagged_fields,
    read_varint,
    write_unsigned_varint,
    write_varint,
)
from tests.fuzz._harness import core_line
from tests.support.cores import Core, current

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
TARGETS = sorted(p.stem for p in HERE.glob("fuzz_*.py"))
ATHERIS_RUNS = 20_000


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"kheaders_fuzz_{name}", HERE / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_checks: dict[str, dict[str, Callable[[bytes], None]]] = {}


def checks(core: Core) -> dict[str, Callable[[bytes], None]]:
    """Every target's ``check``, its kheaders imports those of ``core`` (loaded while the
    ``core`` fixture holds that core's modules)."""
    if core.name not in _checks:
        _checks[core.name] = {name: _load(name).check for name in TARGETS}
    return _checks[core.name]


def test_every_decoder_family_has_a_target() -> None:
    assert set(TARGETS) >= {
        "fuzz_compact",
        "fuzz_headers",
        "fuzz_trace",
        "fuzz_values",
        "fuzz_varint",
    }


def _compiled_objects(check: Callable[[bytes], None]) -> dict[str, str]:
    """The objects a target module imported that a compiled module defines, with its name
    (found by identity: public classes name ``kheaders`` as their module)."""
    found = {}
    for name, obj in check.__globals__.items():  # type: ignore[attr-defined]
        for module in MODULES:
            defined = getattr(sys.modules.get(module), getattr(obj, "__name__", ""), None)
            if defined is obj and getattr(obj, "__module__", None) in (module, "kheaders"):
                found[name] = module
    return found


def test_the_targets_run_on_the_core_of_the_test(core: Core) -> None:
    """Every compiled object a target calls is the extension's on the compiled core, the
    ``.py``'s on the pure one."""
    built = (PACKAGE / MANIFEST).is_file() and not disabled()
    assert built or not core.compiled
    assert core.compiled == kheaders.COMPILED  # the test sees its core's package
    reached = {m for check in checks(core).values() for m in _compiled_objects(check).values()}
    assert {"kheaders._model.headers", "kheaders._model.traceparent"} <= reached
    for module in reached:
        assert str(sys.modules[module].__file__).endswith(".py") != core.compiled, module
    assert core_line() == f"kheaders core: compiled={core.compiled} pure=" + (
        "-" if core.compiled else ",".join(m for m in MODULES if m in sys.modules)
    )


@pytest.mark.parametrize("target", TARGETS)
def test_atheris_target_runs_bounded_without_a_crash(core: Core, target: str) -> None:
    pytest.importorskip("atheris", reason="atheris is in the dev extra; install it to fuzz")
    result = subprocess.run(
        [
            sys.executable,
            str(HERE / f"{target}.py"),
            f"-runs={ATHERIS_RUNS}",
            "-max_len=512",
            "-timeout=10",  # one input taking 10 s is a hang: atheris fails the run
            "-rss_limit_mb=2048",
            "-seed=20261121",
            "-print_final_stats=1",
        ],
        cwd=ROOT,
        # with -seed: the same inputs every run
        env={**os.environ, "PYTHONHASHSEED": "0", **({} if core.compiled else {ENV: "1"})},
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    line = re.search(r"^kheaders core: .*$", output, flags=re.MULTILINE)
    assert line is not None, output[-2000:]
    assert line.group(0).startswith(f"kheaders core: compiled={core.compiled} ")
    if core.compiled:  # the target ran on the extensions, none loaded from its .py
        assert line.group(0).endswith(" pure=-"), line.group(0)
    done = re.search(r"Done (\d+) runs", output)
    assert done is not None, output[-2000:]
    print(f"\n{target}: {done.group(1)} inputs, no crash")
    assert int(done.group(1)) == ATHERIS_RUNS


@pytest.mark.parametrize("target", TARGETS)
@settings(
    max_examples=400,
    deadline=None,
    # the core fixture holds one core's modules for every input
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.binary(max_size=600))
def test_random_bytes_give_only_decode_error(core: Core, target: str, data: bytes) -> None:
    checks(core)[target](data)


def _valid_header_sections() -> st.SearchStrategy[bytes]:
    # any UTF-8 key, NUL included: Kafka allows it on the wire (kheaders refuses to send it)
    key = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=8)
    pair = st.tuples(key, st.none() | st.binary(max_size=16))
    return st.lists(pair, max_size=6).map(lambda items: Headers.from_confluent(items).to_bytes())


@given(
    data=_valid_header_sections(),
    at=st.integers(min_value=0, max_value=200),
    byte=st.integers(min_value=0, max_value=255),
    cut=st.integers(min_value=0, max_value=200),
)
@settings(max_examples=500, deadline=None)
def test_mutated_valid_inputs_give_only_decode_error(
    data: bytes, at: int, byte: int, cut: int
) -> None:
    mutated = bytearray(data)
    if mutated:
        mutated[at % len(mutated)] = byte
    mutated = mutated[: max(len(mutated) - cut % 4, 0)]
    for check in checks(current()).values():
        check(bytes(mutated))


# -- length bombs: 2**31 declared, ~10 bytes given ---------------------------------------------

BIG = 2**31
PAD = b"\x00" * 5


class _Blob(TaggedStruct):
    data = field(BYTES)
    names = field(array(STRING))


def _bombs() -> dict[str, tuple[Callable[[bytes], object], bytes]]:
    uvar = write_unsigned_varint
    return {
        "Headers.from_bytes count": (Headers.from_bytes, write_varint(BIG - 1) + PAD),
        "Headers.from_bytes key length": (
            Headers.from_bytes,
            write_varint(1) + write_varint(BIG - 1) + PAD,
        ),
        "Headers.from_bytes value length": (
            Headers.from_bytes,
            write_varint(1) + write_varint(1) + b"k" + write_varint(BIG - 1) + PAD,
        ),
        "read_headers count": (lambda d: read_headers(d, 0), write_varint(BIG - 1) + PAD),
        "read_compact_string": (lambda d: read_compact_string(d, 0), uvar(BIG) + PAD),
        "read_compact_bytes": (lambda d: read_compact_bytes(d, 0), uvar(BIG) + PAD),
        "read_compact_array": (lambda d: read_compact_array(d, 0, read_varint), uvar(BIG) + PAD),
        "read_tagged_fields count": (lambda d: read_tagged_fields(d, 0), uvar(BIG) + PAD),
        "read_tagged_fields size": (
            lambda d: read_tagged_fields(d, 0),
            uvar(1) + uvar(0) + uvar(BIG) + PAD,
        ),
        "TaggedStruct bytes field": (_Blob.from_bytes, uvar(BIG) + PAD),
        "TaggedStruct array field": (
            _Blob.from_bytes,
            uvar(1) + uvar(BIG) + PAD,
        ),
        "TaggedStruct tagged section": (
            _Blob.from_bytes,
            uvar(1) + uvar(1) + uvar(BIG) + PAD,
        ),
    }


BOMBS = _bombs()


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_declared_length_of_2_31_on_ten_bytes_fails_without_allocating(name: str) -> None:
    decode, data = BOMBS[name]
    assert len(data) <= 16
    tracemalloc.start()
    try:
        with pytest.raises(DecodeError):
            decode(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 256 * 1024, f"{name}: {peak} bytes allocated for a {len(data)}-byte input"
