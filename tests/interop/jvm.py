"""Build and run interop/jvm (the Java side of the side-by-side tests) from Python.

Maven resolves the classpath only when pom.xml changes (offline first, so a warm ~/.m2 needs
no network); javac compiles the sources only when they change. Both results are cached under
interop/jvm/target, keyed by a hash of what they were made from, so a rerun with nothing
changed starts no Maven and no javac. One ``java`` start costs a second or more: each Java
command runs a whole scenario batch and prints one JSON object per line.
"""

from __future__ import annotations

import base64
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from confluent_kafka import Message, TopicPartition

from kheaders import Consumer

ROOT = Path(__file__).resolve().parents[2] / "interop" / "jvm"
REQUIRE_ENV = "KHEADERS_REQUIRE_JVM"
TOOLS = ("java", "javac", "mvn")

Header = tuple[str, bytes | None]
Event = dict[str, Any]


class JvmBuildError(RuntimeError):
    """Maven or javac failed; the message holds the tail of their output."""


def missing_tools() -> list[str]:
    """The tools among java, javac and mvn that are not on PATH."""
    return [tool for tool in TOOLS if shutil.which(tool) is None]


def jvm_required() -> bool:
    """Whether KHEADERS_REQUIRE_JVM asks for failure instead of a skip when Java is missing."""
    return os.environ.get(REQUIRE_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


def unavailable() -> tuple[str, bool] | None:
    """Why the JVM side cannot run, and whether that must fail the run (KHEADERS_REQUIRE_JVM)
    rather than skip it; None when java, javac and mvn are all there."""
    missing = missing_tools()
    if not missing:
        return None
    reason = f"interop tests need a JDK and Maven: {', '.join(missing)} not on PATH"
    if jvm_required():
        return f"{reason} ({REQUIRE_ENV} is set)", True
    return reason, False


def _digest(paths: Iterable[Path], extra: str = "") -> str:
    h = hashlib.sha256(extra.encode())
    for path in sorted(paths):
        h.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def _run_tool(argv: Sequence[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(argv), cwd=cwd, capture_output=True, text=True, timeout=900, check=False
    )


def _classpath(target: Path, project: Path = ROOT, name: str = "classpath") -> str:
    """The classpath of the Maven project in ``project``, resolved once per pom.xml."""
    key = _digest([project / "pom.xml"])
    out = target / f"{name}-{key}.txt"
    if out.exists():
        cp = out.read_text().strip()
        if all(Path(jar).exists() for jar in cp.split(os.pathsep) if jar):
            return cp
    partial = target / f"{name}.partial"
    goal = ["dependency:build-classpath", f"-Dmdep.outputFile={partial}"]
    done = _run_tool(["mvn", "-o", "-q", "-B", *goal], project)  # warm ~/.m2: no network
    if done.returncode != 0:
        done = _run_tool(["mvn", "-q", "-B", *goal], project)
    if done.returncode != 0 or not partial.exists():
        tail = (done.stdout + done.stderr)[-4000:]
        raise JvmBuildError(f"mvn could not resolve {project.relative_to(ROOT.parent)}:\n{tail}")
    partial.replace(out)
    for stale in target.glob(f"{name}-*.txt"):  # an earlier pom's
        if stale != out:
            stale.unlink(missing_ok=True)
    return out.read_text().strip()


def _classes(target: Path, classpath: str) -> Path:
    sources = sorted((ROOT / "src" / "main").rglob("*"))
    sources = [p for p in sources if p.is_file()]
    key = _digest(sources, classpath)
    out = target / f"classes-{key}"
    if (out / ".built").exists():
        return out
    work = Path(tempfile.mkdtemp(prefix="classes-", dir=target))
    javas = [str(p) for p in sources if p.suffix == ".java"]
    done = _run_tool(["javac", "-d", str(work), "-cp", classpath, "--release", "17", *javas], ROOT)
    if done.returncode != 0:
        shutil.rmtree(work, ignore_errors=True)
        raise JvmBuildError(f"javac failed on interop/jvm:\n{(done.stdout + done.stderr)[-4000:]}")
    resources = ROOT / "src" / "main" / "resources"
    if resources.is_dir():
        shutil.copytree(resources, work, dirs_exist_ok=True)
    (work / ".built").touch()
    work.rename(out)
    for stale in target.glob("classes-*"):  # earlier sources' classes
        if stale != out and (stale / ".built").exists():
            shutil.rmtree(stale, ignore_errors=True)
    return out


@dataclass(frozen=True)
class Jvm:
    """The built interop/jvm: ``run(command, *args)`` starts one JVM and returns its events."""

    classpath: str

    def run(
        self,
        command: str,
        *args: str,
        stdin: str = "",
        timeout: float = 240,
        system_properties: dict[str, str] | None = None,
    ) -> list[Event]:
        """Run ``Main COMMAND ARGS``; its JSON lines, the final ``done`` event left out.

        Raises AssertionError with the program's stderr when it fails or prints no ``done``.
        """
        props = {"org.slf4j.simpleLogger.defaultLogLevel": "warn", **(system_properties or {})}
        argv = [
            "java",
            "-Xmx384m",
            "-XX:TieredStopAtLevel=1",
            "-XX:+UseSerialGC",
            *(f"-D{k}={v}" for k, v in props.items()),
            "-cp",
            self.classpath,
            "kheaders.interop.Main",
            command,
            *args,
        ]
        done = subprocess.run(
            argv, input=stdin, capture_output=True, text=True, timeout=timeout, check=False
        )
        events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        if done.returncode != 0 or not events or events[-1].get("event") != "done":
            raise AssertionError(
                f"java {command} exited {done.returncode}\nstdout:\n{done.stdout[-3000:]}"
                f"\nstderr:\n{done.stderr[-6000:]}"
            )
        return events[:-1]


def build() -> Jvm:
    """Resolve and compile interop/jvm (cached); raises JvmBuildError when that fails.

    Two test processes building at once wait on a file lock instead of racing Maven.
    """
    target = ROOT / "target"
    target.mkdir(exist_ok=True)
    with (target / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        classpath = _classpath(target)
        classes = _classes(target, classpath)
    return Jvm(f"{classes}{os.pathsep}{classpath}")


def _field(data: bytes | None) -> str:
    if data is None:
        return "~"
    if data == b"":
        return "."
    return base64.b64encode(data).decode()


def record_line(key: bytes | None, value: bytes | None, headers: Sequence[Header] = ()) -> str:
    """One record for a Java command's stdin (interop/jvm's Records.java reads it)."""
    fields = [_field(key), _field(value)]
    fields += [f"{_field(k.encode())}:{_field(v)}" for k, v in headers]
    return " ".join(fields) + "\n"


def decoded(headers: Sequence[Sequence[str | None]]) -> list[Header]:
    """A Java event's ``[[key, base64 or null], ...]`` as ``[(key, bytes or None), ...]``."""
    return [(str(k), None if v is None else base64.b64decode(v)) for k, v in headers]


def b64(data: str | None) -> bytes | None:
    """A Java event's base64 field as bytes (None stays None)."""
    return None if data is None else base64.b64decode(data)


def events(found: Sequence[Event], **match: object) -> list[Event]:
    """The events whose fields equal ``match``."""
    return [e for e in found if all(e.get(k) == v for k, v in match.items())]


def mirror_maker_classpath() -> str:
    """MirrorMaker 2's classpath (interop/jvm/mirrormaker/pom.xml), resolved once and cached."""
    target = ROOT / "target"
    target.mkdir(exist_ok=True)
    with (target / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _classpath(target, ROOT / "mirrormaker", "mirrormaker-classpath")


def read_partition0(
    bootstrap: str, topic: str, count: int, group: str | None = None, **consumer: Any
) -> list[Message]:
    """The first ``count`` records of ``topic`` partition 0 through a kheaders ``Consumer``
    (``consumer``: its keyword arguments, e.g. interceptors or deserializers), or what came
    within 60 s: the caller's assertion then says what is missing."""
    config = {
        "bootstrap.servers": bootstrap,
        "group.id": group or f"r-{uuid.uuid4().hex[:6]}",
        "enable.auto.commit": False,
    }
    c = Consumer(config, **consumer)
    try:
        c.assign([TopicPartition(topic, 0, 0)])
        got: list[Message] = []
        deadline = time.monotonic() + 60
        while len(got) < count and time.monotonic() < deadline:
            got += [m for m in c.consume(10, 0.5) if m.error() is None]
        return got
    finally:
        c.close()
