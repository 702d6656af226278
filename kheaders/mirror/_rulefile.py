"""Routing rules from a file: JSON (``.json``) or TOML (anything else), one shape for both.

```toml
headers = ["region", "kind"]   # optional: the header vocabulary rules may name
default = "{topic}"            # optional: where unmatched records go; false drops them

[[routes]]
name = "eu orders"
topics = ["orders"]            # optional: source topics the rule applies to
when = { region = ["eu", "uk"] }
to = "orders-eu"               # a name, a list of names (fan-out), or false (drop)
```
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kheaders._errors import ConfigurationError
from kheaders.mirror._routes import SAME_TOPIC, Route, RoutingTable

_TOP = {"headers", "default", "routes"}
_RULE = {"name", "topics", "when", "to"}


def _target(value: Any, where: str) -> Any:
    if value is False:
        return None
    if isinstance(value, str) or (
        isinstance(value, list) and all(isinstance(v, str) for v in value)
    ):
        return value
    raise ConfigurationError(f"{where}: 'to' is a topic name, a list of names, or false (drop)")


def table_from_mapping(data: Mapping[str, Any], where: str = "rules") -> RoutingTable:
    """A RoutingTable from a parsed rules document.

    Raises ConfigurationError naming the entry at fault (unknown keys included).
    """
    unknown = set(data) - _TOP
    if unknown:
        raise ConfigurationError(f"{where}: unknown keys {sorted(unknown)} (known: {sorted(_TOP)})")
    routes = []
    for i, entry in enumerate(data.get("routes", [])):
        at = f"{where}: routes[{i}]"
        if not isinstance(entry, Mapping):
            raise ConfigurationError(f"{at}: a rule is a table/object")
        extra = set(entry) - _RULE
        if extra:
            raise ConfigurationError(f"{at}: unknown keys {sorted(extra)} (known: {sorted(_RULE)})")
        if "to" not in entry:
            raise ConfigurationError(f"{at}: 'to' is required (a topic, a list, or false)")
        when = entry.get("when", {})
        if not isinstance(when, Mapping):
            raise ConfigurationError(f"{at}: 'when' maps header keys to conditions")
        topics = entry.get("topics")
        if topics is not None and not (
            isinstance(topics, list) and all(isinstance(t, str) for t in topics)
        ):
            raise ConfigurationError(f"{at}: 'topics' is a list of topic names")
        routes.append(
            Route(dict(when), to=_target(entry["to"], at), topics=topics, name=entry.get("name"))
        )
    headers = data.get("headers")
    if headers is not None and not (
        isinstance(headers, list) and all(isinstance(h, str) for h in headers)
    ):
        raise ConfigurationError(f"{where}: 'headers' is a list of header keys")
    default = _target(data.get("default", SAME_TOPIC), f"{where}: default")
    return RoutingTable(routes, default=default, known_headers=headers)


def load_rules(path: str | Path) -> RoutingTable:
    """The RoutingTable in the file at ``path`` (JSON when it ends in ``.json``, else TOML).

    Raises ConfigurationError for a file that does not parse or holds a bad rule (naming the
    file), OSError when it cannot be read.
    """
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text) if path.suffix.lower() == ".json" else tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise ConfigurationError(f"rules file {str(path)!r} does not parse: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigurationError(f"rules file {str(path)!r}: the top level is an object")
    return table_from_mapping(data, f"rules file {str(path)!r}")
