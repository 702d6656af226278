"""Shared runner for the fuzz targets: atheris when run as a script, plain calls from pytest.

Each ``fuzz_*.py`` defines ``check(data: bytes) -> None``: it feeds ``data`` to decoders and
lets only the allowed outcome through (kheaders.DecodeError, or ``None``/``[]`` for trace
context). Anything else escapes and atheris reports it as a crash.

Run one standalone (coverage-guided, until stopped or ``-runs=N``)::

    python tests/fuzz/fuzz_headers.py -runs=100000 -max_len=512
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def instrumented(enabled: bool) -> AbstractContextManager[object]:
    """Around the target's kheaders imports: coverage-instrument kheaders when fuzzing.

    Only kheaders is instrumented (instrumenting everything loaded, confluent-kafka and
    OpenTelemetry included, costs ~30 s of start-up).
    """
    if not enabled:
        return contextlib.nullcontext()
    import atheris

    return atheris.instrument_imports(include=["kheaders"])  # type: ignore[no-any-return]


def core_line() -> str:
    """Which core the target runs on: ``kheaders core: compiled=<bool> pure=<modules>``, the
    compiled modules loaded from Python source listed (none when the compiled core runs)."""
    from kheaders._compiled import COMPILED, MODULES

    loaded = [sys.modules[m] for m in MODULES if m in sys.modules]
    pure = [m.__name__ for m in loaded if str(m.__file__).endswith(".py")]
    return f"kheaders core: compiled={COMPILED} pure={','.join(pure) or '-'}"


def main(check: Callable[[bytes], None]) -> None:
    """Fuzz ``check`` with atheris (``sys.argv`` holds libFuzzer flags such as ``-runs=N``).

    Prints :func:`core_line` first. Atheris instruments Python only: on the compiled core its
    coverage guidance stops at the extensions' boundary (their inputs are still fuzzed).
    """
    import atheris

    print(core_line(), file=sys.stderr, flush=True)

    atheris.Setup(sys.argv, check)
    atheris.Fuzz()
