"""CI stage: the wheel built without a C compiler is pure Python, and pip says so in one line.

``pip wheel`` (the install path's build, through pip's captured backend output) of a clean
copy of the sources with ``CC=false``: one ``kheaders: no compiled core`` warning line in
pip's own output, a ``py3-none-any`` wheel holding ``kheaders`` and the deprecated top-level
``interceptors`` package, and no extension, C file or build manifest in it.

Run as ``python .ci/wheel_check.py`` from the repository (``.ci/run`` does); exits non-zero
naming what is wrong. Was ``tests/model/test_compiled_core.py``'s wheel test (a build inside
the unit suite).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = "_compiled.json"


def _manifest_name() -> str:
    """The build manifest's file name, as kheaders/_compiled.py names it (when it does)."""
    source = ROOT / "kheaders" / "_compiled.py"
    text = source.read_text(encoding="utf-8") if source.is_file() else ""
    for line in text.splitlines():
        if line.startswith("MANIFEST") and "=" in line:
            return line.split("=", 1)[1].strip().strip("\"'")
    return MANIFEST


def check(tmp: Path) -> list[str]:
    """What is wrong with the compiler-less wheel (empty when nothing)."""
    manifest = _manifest_name()
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "hatch_build.py", "README.md"):
        shutil.copy(ROOT / name, src / name)
    skip = shutil.ignore_patterns("__pycache__", "*.so", "*.pyd", "*.c", manifest)
    for package in ("kheaders", "interceptors"):
        shutil.copytree(ROOT / package, src / package, ignore=skip)
    environ = {k: v for k, v in os.environ.items() if k != "KHEADERS_NO_EXTENSIONS"}
    wheels = tmp / "wheels"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "-w", str(wheels), str(src)],
        env={**environ, "CC": "false"}, capture_output=True, text=True, check=False,
        timeout=900,
    )  # fmt: skip
    output = done.stdout + done.stderr
    if done.returncode != 0:
        return [f"pip wheel exited {done.returncode}:\n{output[-3000:]}"]
    problems = []
    warned = [line for line in output.splitlines() if "kheaders: no compiled core" in line]
    if len(warned) != 1:
        problems.append(f"{len(warned)} warning lines instead of one:\n{output[-3000:]}")
    elif "'false' failed" not in warned[0] and "not importable" not in warned[0]:
        problems.append(f"the warning does not say why: {warned[0]}")
    found = list(wheels.glob("kheaders-*.whl"))
    if len(found) != 1:
        return [*problems, f"expected one kheaders wheel, found {found}"]
    wheel = found[0]
    if not wheel.name.endswith("-py3-none-any.whl"):
        problems.append(f"{wheel.name} is not a pure-Python wheel")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    for wanted in (
        "kheaders/_model/headers.py",
        "kheaders/interceptors/tracing.py",
        "interceptors/tracing.py",  # the deprecated old name, shipped one more release
    ):
        if wanted not in names:
            problems.append(f"{wheel.name} lacks {wanted}")
    compiled = [n for n in names if n.endswith((".so", ".pyd", ".c", manifest))]
    if compiled:
        problems.append(f"{wheel.name} holds compiled files: {compiled}")
    return problems


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="wheel-check-") as tmp:
        problems = check(Path(tmp))
    for problem in problems:
        print(f"wheel check: {problem}", file=sys.stderr)
    if not problems:
        print("wheel check: without a C compiler, one warning line and a pure-Python wheel")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
