"""A griffe extension for the docs site: kheaders' reST-flavoured docstrings as Markdown.

mkdocstrings renders a docstring as Markdown. kheaders writes them the way tests read them:
doctest examples (``>>>``, which Markdown would take for nested quotes and, within them,
``[a][b]`` for links) and Sphinx roles (``:class:`~kheaders.Headers```). This extension, named
in mkdocs.yml, fences every doctest run as a ``pycon`` code block and turns each role into
inline code of the name (its last part where the role says ``~``). Nothing else changes.
"""

from __future__ import annotations

import re
from typing import Any

from griffe import Extension, Object

ROLE = re.compile(r":(?:class|func|meth|attr|data|mod|exc|obj|const|py:\w+):`(~?)([^`]+)`")


def _role(match: re.Match[str]) -> str:
    name = match.group(2)
    return f"`{name.rsplit('.', 1)[-1] if match.group(1) else name}`"


def markdown(text: str) -> str:
    """``text`` with doctest runs fenced and roles turned into inline code."""
    out: list[str] = []
    in_example = False
    for line in text.splitlines():
        stripped = line.lstrip()
        if not in_example and stripped.startswith(">>>"):
            out.append("```pycon")
            in_example = True
        elif in_example and not stripped:
            out.append("```")
            in_example = False
        out.append(line if in_example else ROLE.sub(_role, line))
    if in_example:
        out.append("```")
    return "\n".join(out)


class DoctestFences(Extension):
    """Rewrites each object's docstring as it is loaded (see the module's docstring)."""

    def on_instance(self, *, obj: Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown(obj.docstring.value)
