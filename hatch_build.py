"""The optional compiled core: Cython compiles the modules named in ``kheaders/_compiled.py``
as they are (pure-Python mode, with the ``.pxd`` beside a module when there is one).

An editable install (``pip install -e .``) builds the extensions in place, next to their
sources; a wheel carries them (and is then tagged for the interpreter). Where no C compiler
(or Cython) works, the build prints ONE warning line and the package is pure Python;
``KHEADERS_NO_EXTENSIONS=1`` skips compiling. pip shows a build backend's output only with
``-v`` (pypa/pip#6634), so the line goes to the installer's own stderr where that is safe
(see :func:`tell_installer`). ``kheaders/_compiled.json`` records each
extension with the hash of the source it came from, which the import checks (a source
edited after an editable install falls back to Python, saying so).

``python hatch_build.py DEST`` (run by the hook in a child process, so the compiler's output
stays out of pip's log) compiles into ``DEST`` (``.`` for in place).
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
PACKAGE = ROOT / "kheaders"
MANIFEST = "_compiled.json"
ENV = "KHEADERS_NO_EXTENSIONS"
DIRECTIVES = {
    "language_level": 3,
    "binding": True,  # functions keep their signatures and docstrings, as in Python
    "annotation_typing": False,  # hints stay hints: the types that pay are in the .pxd files
}


def _listed(name: str) -> tuple[str, ...]:
    """The tuple ``name`` of ``kheaders/_compiled.py`` (read, not imported: no dependency)."""
    tree = ast.parse((PACKAGE / "_compiled.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            return tuple(ast.literal_eval(node.value))
    raise RuntimeError(f"kheaders/_compiled.py defines no {name}")


def twins() -> tuple[str, ...]:
    """``TWINS`` of ``kheaders/_compiled.py``: the C twins, compiled from their ``.pyx``."""
    return _listed("TWINS")


def modules() -> tuple[str, ...]:
    """``MODULES`` then ``TWINS`` of ``kheaders/_compiled.py``: everything the build compiles."""
    return _listed("MODULES") + twins()


def source(module: str) -> Path:
    return ROOT.joinpath(*module.split(".")).with_suffix(".pyx" if module in twins() else ".py")


def source_hash(module: str) -> str:
    """As ``kheaders._compiled.source_hash``: the ``.py`` (``.pyx``), then the ``.pxd`` if any."""
    digest = hashlib.sha256()
    py = source(module)
    for path in (py, py.with_suffix(".pxd")):
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def extension_name(module: str) -> str:
    return module.rsplit(".", 1)[1] + sysconfig.get_config_var("EXT_SUFFIX")


def remove_in_place() -> None:
    """Delete extensions, C files and the manifest an earlier in-place build left."""
    (PACKAGE / MANIFEST).unlink(missing_ok=True)
    for module in modules():
        py = source(module)
        py.with_suffix(".c").unlink(missing_ok=True)
        for built in py.parent.glob(py.stem + ".*.so"):
            built.unlink()
        for built in py.parent.glob(py.stem + ".*.pyd"):
            built.unlink()


_PROBE = """#include <Python.h>
static struct PyModuleDef probe = {PyModuleDef_HEAD_INIT, "_probe", NULL, -1, NULL};
PyMODINIT_FUNC PyInit__probe(void) { return PyModule_Create(&probe); }
"""


def check_compiler(tmp: Path) -> None:
    """Build a one-line extension the way the core is built (``CC``, Python's headers): fails
    in a second where no compiler works, before Cython spends its time. Raises as the build
    would."""
    from setuptools import Distribution, Extension

    (tmp / "_probe.c").write_text(_PROBE, encoding="utf-8")
    dist = Distribution({"ext_modules": [Extension("_probe", [str(tmp / "_probe.c")])]})
    build = dist.get_command_obj("build_ext")
    build.build_lib = str(tmp / "probe-lib")
    build.build_temp = str(tmp / "probe-obj")
    build.ensure_finalized()
    build.run()


def compile_into(dest: Path) -> None:
    """Cythonize and compile every module into ``dest`` (the package tree's root); write
    the manifest there. Raises whatever Cython or the compiler raise."""
    from Cython.Build import cythonize
    from setuptools import Distribution, Extension

    names = modules()
    with tempfile.TemporaryDirectory() as tmp:
        check_compiler(Path(tmp))
        extensions = cythonize(
            [Extension(m, [str(source(m).relative_to(ROOT))]) for m in names],
            build_dir=tmp,
            compiler_directives=DIRECTIVES,
            quiet=True,
            force=True,
        )
        dist = Distribution({"ext_modules": extensions, "script_name": "hatch_build.py"})
        build = dist.get_command_obj("build_ext")
        build.build_lib = str(dest)
        build.build_temp = str(Path(tmp) / "obj")
        build.parallel = os.cpu_count() or 1
        build.ensure_finalized()
        build.run()
    manifest = {
        "modules": {m: {"file": extension_name(m), "sha256": source_hash(m)} for m in names}
    }
    target = dest / "kheaders" / MANIFEST
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")


def build(dest: Path) -> str | None:
    """Compile in a child process; ``None`` when it worked, else one line saying why not."""
    try:
        done = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), str(dest)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
            timeout=900,
        )
    except subprocess.TimeoutExpired:
        return "the C compiler took over 15 minutes"
    if done.returncode == 0:
        return None
    lines = [line.strip() for line in (done.stderr + done.stdout).splitlines() if line.strip()]
    return (lines[-1] if lines else f"exit status {done.returncode}")[:200]


def tell_installer(line: str) -> bool:
    """Write ``line`` to the installer's stderr when it captures the build's; True if written.

    pip runs the build backend with its output captured and shows it only with ``-v``: the
    parent's stderr (``/proc``, Linux) is written directly when it is a terminal, a pipe or a
    file opened for appending (a file opened otherwise would be overwritten from the
    parent's own position). Elsewhere, or when the parent shares this stderr, False.
    """
    parent = f"/proc/{os.getppid()}"
    try:
        theirs = os.stat(f"{parent}/fd/2")
        ours = os.fstat(2)
        if (theirs.st_dev, theirs.st_ino) == (ours.st_dev, ours.st_ino):
            return False
        if stat.S_ISREG(theirs.st_mode):
            fdinfo = Path(f"{parent}/fdinfo/2").read_text(encoding="ascii")
            flags = int(fdinfo.split("flags:")[1].split()[0], 8)
            if not flags & os.O_APPEND:
                return False
        elif not (stat.S_ISCHR(theirs.st_mode) or stat.S_ISFIFO(theirs.st_mode)):
            return False
        with open(f"{parent}/fd/2", "a", encoding="utf-8") as err:
            err.write(line + "\n")
    except (OSError, ValueError, IndexError):
        return False
    return True


try:
    from hatchling.builders.hooks.plugin.interface import BuildHookInterface
except ImportError:  # run as a script, without hatchling
    BuildHookInterface = object  # type: ignore[assignment,misc]


class CompiledCoreHook(BuildHookInterface):  # type: ignore[misc]
    """Compile the core for editable installs and wheels; fall back to Python, warning once."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        editable = version == "editable"
        if editable:
            remove_in_place()
        if os.environ.get(ENV, "") not in ("", "0"):
            return
        dest = ROOT if editable else Path(tempfile.mkdtemp(prefix="kheaders-core-"))
        if not editable:
            self._built = dest
        why = build(dest)
        if why is not None:
            if editable:
                remove_in_place()
            line = f"WARNING: kheaders: no compiled core ({why}); installing the pure-Python core"
            if not tell_installer(line):
                self.app.display_warning(line)
            return
        if not editable:
            built = dest / "kheaders"
            for path in sorted(built.rglob("*")):
                if path.is_file():
                    rel = path.relative_to(dest).as_posix()
                    build_data["force_include"][str(path)] = rel
            build_data["pure_python"] = False
            build_data["infer_tag"] = True

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        built = getattr(self, "_built", None)
        if built is not None:
            shutil.rmtree(built, ignore_errors=True)


if __name__ == "__main__":
    out = Path(sys.argv[1]).resolve()
    try:
        compile_into(out)
    except ImportError as exc:
        print(f"{exc.name} is not importable", file=sys.stderr)
        sys.exit(1)
    except Exception as exc:
        compiler = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()
        print(f"the C compiler {compiler[0]!r} failed: {type(exc).__name__}", file=sys.stderr)
        sys.exit(1)
