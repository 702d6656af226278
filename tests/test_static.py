"""Checks on the source tree that the static tools do not make: py.typed shipped, private
fields read only by their owners, no import cycles. (mypy --strict, ruff and the import
contracts are stages of .ci/run, outside the pytest run.)"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_package_ships_py_typed() -> None:
    assert (ROOT / "kheaders" / "py.typed").is_file()
    assert (ROOT / "interceptors" / "py.typed").is_file()


def _headers_private_names() -> frozenset[str]:
    from kheaders._model.headers import Headers

    names = set(Headers.__slots__) | set(vars(Headers))
    return frozenset(n for n in names if n.startswith("_") and not n.endswith("__"))


def _private_headers_uses(path: Path, private: frozenset[str]) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return [
        f"{path.relative_to(ROOT)}:{node.lineno}: .{node.attr}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr in private
    ]


def test_no_module_reads_headers_private_fields() -> None:
    """Only kheaders/_model/headers.py touches Headers' fields; others use its internal API."""
    private = _headers_private_names()
    assert "_read_only" in private
    owner = ROOT / "kheaders" / "_model" / "headers.py"
    found = [
        use
        for top in ("kheaders", "interceptors", "bench", "examples", "tests")
        for path in sorted((ROOT / top).rglob("*.py"))
        if path != owner
        for use in _private_headers_uses(path, private)
    ]
    assert not found, (
        "use the internal API of kheaders/_model/headers.py (received, trusted, pairs_of,"
        " the read_only property) instead:\n" + "\n".join(found)
    )


def _client_fields() -> dict[Path, frozenset[str]]:
    """The private fields of kheaders' Producer and Consumer, by the module that owns them."""
    from kheaders._client.consumer import Consumer
    from kheaders._client.producer import Producer

    return {
        ROOT / "kheaders" / "_client" / "producer.py": frozenset(Producer.__slots__),
        ROOT / "kheaders" / "_client" / "consumer.py": frozenset(Consumer.__slots__),
    }


def _client_field_uses(path: Path, private: frozenset[str]) -> list[str]:
    """Uses of ``private`` names in ``path`` on anything but ``self``, and on ``self`` in a
    class deriving from a ``Producer`` or ``Consumer`` (a subclass in another module)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    subclass_nodes: set[int] = set()
    for cls in ast.walk(tree):
        if isinstance(cls, ast.ClassDef) and any(
            ast.unparse(base).rsplit(".", 1)[-1].endswith(("Producer", "Consumer"))
            for base in cls.bases
        ):
            subclass_nodes.update(id(node) for node in ast.walk(cls))
    return [
        f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr in private
        and (
            not (isinstance(node.value, ast.Name) and node.value.id in {"self", "cls"})
            or id(node) in subclass_nodes
        )
    ]


def test_no_module_reads_the_clients_private_fields() -> None:
    """Only producer.py touches Producer's fields and consumer.py Consumer's; kheaders.aio
    reaches the produce path through ``sender_of`` (the producer's internal interface), tests
    through public methods or that same interface."""
    owners = _client_fields()
    assert "_sender" in owners[ROOT / "kheaders" / "_client" / "producer.py"]
    found = [
        use
        for owner, private in owners.items()
        for top in ("kheaders", "interceptors", "bench", "examples", "tests")
        for path in sorted((ROOT / top).rglob("*.py"))
        if path != owner
        for use in _client_field_uses(path, private)
    ]
    assert not found, "use the clients' public or internal API instead:\n" + "\n".join(found)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, module: str, modules: set[str]) -> set[str]:
    """The modules of ``modules`` that ``path`` imports anywhere (functions and
    ``TYPE_CHECKING`` blocks included): ``from pkg import sub`` counts as ``pkg.sub``."""

    def known(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(m for a in node.names if (m := known(a.name)))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module if path.name == "__init__.py" else module.rpartition(".")[0]
                for _ in range(node.level - 1):
                    package = package.rpartition(".")[0]
                base = f"{package}.{base}" if base else package
            for a in node.names:
                sub = f"{base}.{a.name}"
                if (m := sub if sub in modules else known(base)) is not None:
                    found.add(m)
    found.discard(module)
    return found


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_no_module_import_cycles_in_kheaders_interceptors_and_bench() -> None:
    """No two modules import each other, even lazily or for type checking only: a cycle
    hides which of them is the lower layer (import-linter checks only between layers)."""
    paths = {
        _module_name(p): p
        for top in ("kheaders", "interceptors", "bench")
        for p in (ROOT / top).rglob("*.py")
    }
    modules = set(paths)
    graph = {m: _imports(p, m, modules) for m, p in paths.items()}
    assert graph["kheaders._codec.struct"] >= {"kheaders._codec.fieldtypes"}
    assert not _cycles(graph), _cycles(graph)
