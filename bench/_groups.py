"""The benchmark groups by name, and which of them a run selects: what both the runner
(``python -m bench``) and the profiler (``python -m bench.profile``) build from.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from bench._model import Env, Group

Factory = Callable[[Env], "Group | list[Group]"]


def factories() -> list[tuple[str, Factory]]:
    from bench._aio import aio_groups
    from bench._codecs import codec_groups
    from bench._consume import consume_group, memory_group, traced_consume_group
    from bench._metrics import metrics_groups
    from bench._produce import plain_group, produce_group, spans_group, traced_group

    return [
        ("produce-plain", plain_group),
        ("produce", produce_group),
        ("produce-traced", traced_group),
        ("produce-spans", spans_group),
        ("consume", consume_group),
        ("consume-traced", traced_consume_group),
        ("memory", memory_group),
        ("codec", codec_groups),
        ("metrics", metrics_groups),
        ("aio", aio_groups),
    ]


GROUP_NAMES = (
    "produce-plain",
    "produce",
    "produce-traced",
    "produce-spans",
    "consume",
    "consume-traced",
    "memory",
    "codec",
    "metrics",
    "aio",
    "spark",
)


def selected(name: str, only: list[str] | None) -> bool:
    if not only:
        return True
    return any(name == o or name.startswith(o + ":") or o.startswith(name + ":") for o in only)


def groups(env: Env, only: list[str] | None) -> Iterator[Group]:
    for name, factory in factories():
        if not selected(name, only):
            continue
        made = factory(env)
        for group in made if isinstance(made, list) else [made]:
            if selected(group.name, only):
                yield group
