"""The two cores: which one runs, how the build makes the compiled one, and what keeps them
the same program (one source, twins with one contract, nothing hidden from the collector).

The behaviour itself is pinned by the model, codec, client and fuzz tests, which run on both
cores through the ``core`` fixture (``tests/conftest.py``, ``tests/support/cores.py``).
"""

from __future__ import annotations

import gc
import hashlib
import importlib
import importlib.machinery
import json
import os
import re
import shutil
import subprocess
import sys
import weakref
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kheaders
from kheaders._compiled import (
    MANIFEST,
    MODULES,
    PACKAGE,
    TWINS,
    disabled,
    source_hash,
    source_path,
)
from kheaders._model.headers import received
from tests.support.cores import Core, is_compiled

ROOT = Path(__file__).resolve().parents[1]
TRACE = "0af7651916cd43dd8448eb211c80319c"
SPAN = "b7ad6b7169203331"
VALID = f"00-{TRACE}-{SPAN}-01"


# -- one source: the only fork is kheaders/_speedups.py ------------------------------------

_FORK = re.compile(r"cython\.compiled|\b_?COMPILED\b|^\s*import cython\b", re.MULTILINE)
_CHOOSERS = {"kheaders/_compiled.py", "kheaders/_speedups.py"}


def test_no_module_forks_on_the_core_outside_speedups() -> None:
    forks = sorted(
        rel
        for path in PACKAGE.rglob("*.py")
        if (rel := path.relative_to(ROOT).as_posix()) not in _CHOOSERS
        and rel != "kheaders/__init__.py"  # re-exports COMPILED, decides nothing
        and _FORK.search(path.read_text(encoding="utf-8"))
    )
    assert not forks, forks
    pxd = [p.relative_to(ROOT).as_posix() for p in (PACKAGE / "_model").rglob("*.pxd")]
    written_c = [p for p in pxd if "cdef extern" in (ROOT / p).read_text(encoding="utf-8")]
    assert not written_c, f"C in a .pxd (a C twin belongs in its own _c.pyx): {written_c}"


def test_every_twin_has_its_python_twin_with_the_same_functions() -> None:
    for twin in TWINS:
        assert twin.endswith("_c"), twin
        python = importlib.import_module(twin[:-2] + "_py")
        names = set(python.__all__)
        c_source = source_path(twin).read_text(encoding="utf-8")
        assert {n for n in names if re.search(rf"^def {n}\(", c_source, re.MULTILINE)} == names


# -- the twins agree (where the C twin was built) -------------------------------------------

_near_valid = st.builds(
    lambda base, edits: "".join(dict(edits).get(i, c) for i, c in enumerate(base)).encode(
        "utf-8", "surrogatepass"
    ),
    st.sampled_from(
        [
            VALID,
            f"ff-{TRACE}-{SPAN}-01",
            f"cc-{TRACE}-{SPAN}-00",
            f"00-{'0' * 32}-{SPAN}-01",
            f"00-{TRACE}-{'0' * 16}-01",
        ]
    ),
    st.lists(st.tuples(st.integers(0, 54), st.sampled_from("0af9AF-xg \t\x00\u00e9")), max_size=3),
)


def _twins() -> tuple[Any, Any]:
    if not kheaders.COMPILED:
        pytest.skip("the C twins were not built here")
    return (
        importlib.import_module("kheaders._model._traceparent_py"),
        importlib.import_module("kheaders._model._traceparent_c"),
    )


def _outcome(call: Any) -> tuple[str, Any]:
    try:
        return ("ok", call())
    except Exception as exc:
        return (type(exc).__name__, None)


@settings(max_examples=400)
@given(st.one_of(_near_valid, st.binary(min_size=55, max_size=55), st.binary(max_size=80)))
def test_the_two_55_byte_checks_agree(value: bytes) -> None:
    py, c = _twins()
    assert py.valid55(value) == c.valid55(value)
    assert _outcome(partial(py.fields55, value)) == _outcome(partial(c.fields55, value))


_odd_item = st.one_of(
    st.tuples(st.sampled_from(["traceparent", "x"]), st.one_of(st.none(), st.binary(max_size=5))),
    st.just(("traceparent",)),
    st.just(("traceparent", b"1", b"2")),
    st.just([b"traceparent", b"v"]),
    st.integers(),
)


@settings(max_examples=300)
@given(st.lists(_odd_item, max_size=5))
def test_the_two_header_walks_agree_even_on_malformed_lists(items: list[Any]) -> None:
    py, c = _twins()
    for headers in (items, received(items), tuple(items)):  # a list, a Headers, not a list
        assert _outcome(partial(py.lone_value, headers, "traceparent")) == _outcome(
            partial(c.lone_value, headers, "traceparent")
        )


# -- the collector sees every object, on both cores ----------------------------------------


class _Holder:
    """Something user code owns and can point at a kheaders object."""

    ref: object = None


def test_a_cycle_user_code_closes_through_received_headers_is_collected(core: Core) -> None:
    headers_module = core.module("kheaders._model.headers")
    makers: list[Callable[[], Any]] = [
        lambda: headers_module.received([("a", b"1")]),
        lambda: headers_module.trusted([("a", b"1")], read_only=False),
        lambda: headers_module.Headers([("a", b"1")]),
    ]
    for make in makers:
        headers = make()
        assert gc.is_tracked(headers)
        holder = _Holder()
        holder.ref = headers
        list.append(headers, holder)  # user code can reach the list itself: a cycle
        alive = weakref.ref(holder)
        del headers, holder
        gc.collect()
        assert alive() is None, "a cycle through Headers outlived gc.collect()"


def test_a_cycle_through_a_received_message_and_its_headers_is_collected(core: Core) -> None:
    from confluent_kafka import Message

    received = core.module("kheaders._model.received")
    headers_module = core.module("kheaders._model.headers")
    msg = Message(topic="t", headers=[("a", b"1")])
    headers = headers_module.Headers.from_message(msg)
    holder = _Holder()
    holder.ref = msg
    list.append(headers, holder)
    msg.set_headers(headers)  # the message holds headers that hold the message's owner
    assert received.message_headers(msg) is headers
    alive = weakref.ref(holder)
    del msg, headers, holder
    gc.collect()
    assert alive() is None


def test_parsed_trace_parents_are_tracked_and_freed(core: Core) -> None:
    tpm = core.module("kheaders._model.traceparent")
    tpm._cache.clear()
    tp = tpm.parse_traceparent(VALID.encode())
    assert gc.is_tracked(tp)
    tpm._cache.clear()
    alive = weakref.ref(tp) if hasattr(tp, "__weakref__") else None
    del tp
    gc.collect()
    assert alive is None or alive() is None


# -- which core runs ---------------------------------------------------------------------


def test_kheaders_says_which_core_it_runs_and_the_modules_agree() -> None:
    assert isinstance(kheaders.COMPILED, bool)
    assert all(is_compiled(importlib.import_module(m)) == kheaders.COMPILED for m in MODULES)
    built = (PACKAGE / MANIFEST).is_file()
    if built and not disabled():  # a build made the extensions: this suite runs on them
        assert kheaders.COMPILED, "the compiled core was built but is not in use"


def _child(code: str, root: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "KHEADERS_NO_EXTENSIONS"}
    environ.update(env, PYTHONPATH=str(root))
    return subprocess.run(
        [sys.executable, "-W", "default", "-c", code],
        cwd=root,
        env=environ,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


_REPORT = (
    "import kheaders, kheaders._model.keys as k, kheaders._model.traceparent as t;"
    "print(kheaders.COMPILED, k.__file__.endswith('.py'), t.__file__.endswith('.py'))"
)


def test_no_extensions_in_the_environment_forces_the_python_core() -> None:
    done = _child(_REPORT, ROOT, KHEADERS_NO_EXTENSIONS="1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True", "True"]
    assert "RuntimeWarning" not in done.stderr


def _package_copy(tmp: Path) -> Path:
    """A copy of the kheaders package whose manifest records a fake extension for every
    compiled module (an empty file: never loaded unless the manifest is believed)."""
    shutil.copytree(
        PACKAGE, tmp / "kheaders", ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd")
    )
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    entries = {}
    for module in MODULES + TWINS:
        fake = tmp / source_path(module).relative_to(ROOT).with_suffix(suffix)
        fake.write_bytes(b"")
        entries[module] = {"file": fake.name, "sha256": source_hash(module)}
    (tmp / "kheaders" / MANIFEST).write_text(json.dumps({"modules": entries}))
    return tmp


def test_a_source_edited_after_the_build_falls_back_to_python_with_one_warning(
    tmp_path: Path,
) -> None:
    root = _package_copy(tmp_path)
    keys = root / "kheaders" / "_model" / "keys.py"
    keys.write_text(keys.read_text() + "\n# edited after the build\n")
    done = _child(_REPORT, root)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True", "True"]
    warnings = [line for line in done.stderr.splitlines() if "RuntimeWarning" in line]
    assert len(warnings) == 1, done.stderr
    assert "kheaders/_model/keys.py" in warnings[0]
    assert hashlib.sha256(keys.read_bytes()).hexdigest() not in warnings[0]


def test_a_missing_extension_means_python_silently(tmp_path: Path) -> None:
    root = _package_copy(tmp_path)
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    (root / "kheaders" / "_model" / f"traceparent{suffix}").unlink()
    done = _child(_REPORT, root)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True", "True"]
    assert "Warning" not in done.stderr


def test_without_a_c_compiler_the_build_gives_one_line_and_no_extension(tmp_path: Path) -> None:
    """``CC=false``: the hook's child build fails and says why in one line (or that Cython is
    not importable where it is not installed); nothing is left in the destination."""
    import hatch_build

    saved = os.environ.get("CC")
    os.environ["CC"] = "false"
    try:
        why = hatch_build.build(tmp_path)
    finally:
        if saved is None:
            del os.environ["CC"]
        else:
            os.environ["CC"] = saved
    assert why is not None
    assert "\n" not in why
    assert "'false' failed" in why or "not importable" in why
    assert not list(tmp_path.rglob("*.so"))
    assert not (tmp_path / "kheaders" / MANIFEST).exists()


def test_each_core_runs_its_own_twin(core: Core) -> None:
    speedups = core.module("kheaders._speedups")
    twin = "kheaders._model._traceparent_" + ("c" if core.compiled else "py")
    assert speedups.valid55.__module__ == twin
    assert speedups.lone_value.__module__ == twin
    traceparent = core.module("kheaders._model.traceparent")
    assert traceparent._valid55 is speedups.valid55
    assert is_compiled(traceparent) == core.compiled
