"""The compiled core is its Python: the same results, errors and messages on any input.

Each compiled module's functions are called on the installed module (the extension where the
build compiled it) and on its ``.py`` loaded side by side (``tests.support.cores``). Also: the
import-time choice (``KHEADERS_NO_EXTENSIONS``, a source edited after the build) in child
interpreters, and the build's one-line fallback without a C compiler.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from confluent_kafka import Message
from hypothesis import given, settings
from hypothesis import strategies as st

import kheaders
from kheaders._compiled import MANIFEST, MODULES, PACKAGE, disabled, source_hash, source_path
from tests.support.cores import agree, installed, is_compiled, outcome, pure

ROOT = Path(__file__).resolve().parents[2]
TRACE = "0af7651916cd43dd8448eb211c80319c"
SPAN = "b7ad6b7169203331"
VALID = f"00-{TRACE}-{SPAN}-01"


_outcome = outcome
_same = agree

PINNED = frozenset(
    {
        "kheaders._model.keys.c_string_problem",
        "kheaders._model.keys.check_keys",
        "kheaders._model.keys.check_name",
        "kheaders._model.keys.key_size",
        "kheaders._model.keys.shown",
        "kheaders._model.limits.HeaderLimits",
        "kheaders._model.limits.HeaderLimits.check",
        "kheaders._model.limits.check_sendable",
        "kheaders._model.limits.plain_fit",
        "kheaders._model.received.headers_of_all",
        "kheaders._model.received.message_headers",
        "kheaders._model.traceparent.parse_traceparent",
        "kheaders._model.traceparent._parse55",  # cdef (the .pxd): via parse_traceparent
        "kheaders._model.traceparent._text",  # cdef (the .pxd): via parse_traceparent
        "kheaders._model.traceparent.parse_tracestate",
        "kheaders._model.traceparent.extract_trace_parent",
        "kheaders._model.traceparent.extract_trace_state",
        "kheaders._model.traceparent.format_tracestate",
    }
)
"""What this file pins compiled == pure (``tests/test_compiled_pinned.py`` collects it)."""


# -- inputs an attacker controls: text, bytes, near-valid traceparents, odd objects -----------

_near_valid = st.builds(
    lambda base, edits: "".join(dict(edits).get(i, c) for i, c in enumerate(base)),
    st.sampled_from([VALID, f"ff-{TRACE}-{SPAN}-01", f"cc-{TRACE}-{SPAN}-00-x"]),
    st.lists(st.tuples(st.integers(0, 54), st.sampled_from("0af9AF-xg \t\x00\u00e9")), max_size=3),
)
_text_or_bytes = st.one_of(
    st.text(max_size=80),
    st.binary(max_size=80),
    _near_valid,
    _near_valid.map(str.encode),
    st.builds(bytearray, st.binary(max_size=60)),
    st.none(),
    st.integers(),
)


@settings(max_examples=300)
@given(_text_or_bytes)
def test_trace_context_parsers_agree(value: Any) -> None:
    module = "kheaders._model.traceparent"
    _same(module, "parse_traceparent", value)
    _same(module, "parse_traceparent", value)  # again: a cache hit where valid
    _same(module, "parse_tracestate", value)


@settings(max_examples=200)
@given(st.lists(st.tuples(st.sampled_from(["traceparent", "tracestate", "x"]), _near_valid)))
def test_trace_context_extraction_agrees(pairs: list[tuple[str, str]]) -> None:
    headers = kheaders.Headers(pairs).close()
    module = "kheaders._model.traceparent"
    _same(module, "extract_trace_parent", headers)
    _same(module, "extract_trace_state", headers)


@given(st.lists(st.tuples(st.text(max_size=10), st.text(max_size=10)), max_size=5))
def test_format_tracestate_agrees(members: list[tuple[str, str]]) -> None:
    _same("kheaders._model.traceparent", "format_tracestate", members)


_keys = st.one_of(
    st.text(max_size=20),
    st.text(alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), max_size=3),
    st.sampled_from(["", "a\x00b", "k\udcff", "x" * 100]),
    st.binary(max_size=5),
    st.integers(),
    st.none(),
)


@settings(max_examples=300)
@given(_keys)
def test_the_key_rule_agrees(key: Any) -> None:
    module = "kheaders._model.keys"
    _same(module, "key_size", key)
    _same(module, "check_name", key)
    _same(module, "check_keys", [(key, b"v")])
    if isinstance(key, str):
        _same(module, "c_string_problem", key)
        _same(module, "shown", key)


_values = st.one_of(st.binary(max_size=40), st.text(max_size=20), st.none(), st.integers())
_items = st.lists(st.tuples(_keys, _values), max_size=6)


@settings(max_examples=300)
@given(_items, st.integers(1, 64), st.integers(1, 64), st.integers(1, 8), st.integers(1, 200))
def test_header_limits_agree(
    items: list[tuple[Any, Any]], max_key: int, max_value: int, count: int, total: int
) -> None:
    module = "kheaders._model.limits"
    fast = installed(module).HeaderLimits(count, max_key, max_value, total)
    slow = pure(module).HeaderLimits(count, max_key, max_value, total)
    assert _outcome(lambda: fast.check(items)) == _outcome(lambda: slow.check(items))
    assert _outcome(lambda: installed(module).plain_fit(items, fast)) == _outcome(
        lambda: pure(module).plain_fit(items, slow)
    )
    _same(module, "check_sendable", items, None)


@settings(max_examples=200)
@given(_items)
def test_headers_construction_agrees(items: list[tuple[Any, Any]]) -> None:
    module = "kheaders._model.headers"
    a = _outcome(lambda: list(installed(module).Headers(items)))
    b = _outcome(lambda: list(pure(module).Headers(items)))
    assert a == b
    lists = [items or None, None, []]
    a = _outcome(lambda: [list(h or ()) for h in installed(module).received_all(lists)[0]])
    b = _outcome(lambda: [list(h or ()) for h in pure(module).received_all(lists)[0]])
    assert a == b


@given(st.lists(st.lists(st.tuples(st.text(min_size=1, max_size=5), st.binary(max_size=5)))))
def test_received_headers_of_a_batch_agree(lists: list[list[tuple[str, bytes]]]) -> None:
    module = "kheaders._model.received"
    if not lists:
        return
    for core in (installed(module), pure(module)):
        msgs = [Message(topic="t", headers=h or None) for h in lists]
        got, failed = core.headers_of_all(msgs, None)
        assert got == [h or None for h in lists]
        assert failed == []
        assert [core.message_headers(m) for m in msgs] == got


# -- which core runs ---------------------------------------------------------------------


def test_kheaders_says_which_core_it_runs_and_the_modules_agree() -> None:
    assert isinstance(kheaders.COMPILED, bool)
    assert all(is_compiled(installed(m)) == kheaders.COMPILED for m in MODULES)
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
    for module in MODULES:
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


# The wheel built without a C compiler (pure Python, one warning line from pip) is checked by
# .ci/wheel_check.py, a stage of .ci/run: a wheel build is not a unit test.
