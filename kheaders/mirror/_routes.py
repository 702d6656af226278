"""Routing rules on headers: which target topics a record goes to, decided without its value.

A :class:`Route` matches when the record's source topic is one of ``topics`` (any, when not
given) and every condition of ``when`` holds on the record's headers, each on the LAST value
of its key (Kafka's ``lastHeader``):

- ``"eu"`` or ``b"eu"``: the value equals these bytes (text is UTF-8);
- ``["eu", "uk"]``: it equals one of them;
- ``True``: the header is present (any value, null included); ``False``: it is absent.

``to`` names the target topic, or several (fan-out: one copy to each), ``{topic}`` standing
for the source topic; ``None`` drops the record. The first route that matches decides; a
record no route matches takes the table's ``default`` (``"{topic}"``: the same name; ``None``:
drop).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from kheaders._errors import ConfigurationError
from kheaders._model.keys import key_size, shown
from kheaders.mirror._provenance import PROVENANCE_HEADERS

Condition = str | bytes | bool | Sequence[str | bytes]
SAME_TOPIC = "{topic}"
"""The target ``{topic}``: the source topic's own name."""

_PRESENT = "present"
_ABSENT = "absent"
_ANY_OF = "any of"


@dataclass(frozen=True)
class _Test:
    key: str
    kind: str
    values: frozenset[bytes] = frozenset()

    def holds(self, last: Mapping[str, bytes | None], present: bool) -> bool:
        if self.kind == _PRESENT:
            return present
        if self.kind == _ABSENT:
            return not present
        return present and last[self.key] in self.values

    def within(self, other: _Test) -> bool:
        """Whatever satisfies this test satisfies ``other`` (same key)."""
        if other.kind == _PRESENT:
            return self.kind != _ABSENT
        if other.kind == _ABSENT:
            return self.kind == _ABSENT
        return self.kind == _ANY_OF and self.values <= other.values


def _as_bytes(value: object, where: str) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    raise ConfigurationError(
        f"{where}: a header value must be text or bytes, got {type(value).__name__}"
    )


def _test(key: str, condition: object, where: str) -> _Test:
    try:
        key_size(key)
    except (TypeError, ValueError) as exc:
        raise ConfigurationError(f"{where}: {exc}") from None
    if condition is True:
        return _Test(key, _PRESENT)
    if condition is False:
        return _Test(key, _ABSENT)
    if isinstance(condition, str | bytes):
        return _Test(key, _ANY_OF, frozenset((_as_bytes(condition, where),)))
    if isinstance(condition, Sequence):
        values = frozenset(_as_bytes(v, where) for v in condition)
        if not values:
            raise ConfigurationError(
                f"{where}: header {shown(key)} must equal one of no values: the rule can"
                " never match"
            )
        return _Test(key, _ANY_OF, values)
    raise ConfigurationError(
        f"{where}: header {shown(key)}: a condition is text, bytes, a list of them, True"
        f" or False, got {type(condition).__name__}"
    )


def _check_target(name: str, where: str) -> str:
    if not isinstance(name, str) or not name:
        raise ConfigurationError(f"{where}: a target topic must be a non-empty name")
    if "{" in name.replace(SAME_TOPIC, "") or "}" in name.replace(SAME_TOPIC, ""):
        raise ConfigurationError(
            f"{where}: target {shown(name)}: the only placeholder is {SAME_TOPIC}"
        )
    return name


@dataclass(frozen=True)
class Route:
    """One routing rule: conditions on the source topic and headers, and where to send.

    Raises ConfigurationError for a condition of another type, an empty list of values
    (it could never match), or an empty target name.
    """

    when: Mapping[str, Condition] = field(default_factory=dict)
    to: str | Sequence[str] | None = SAME_TOPIC
    topics: Sequence[str] | None = None
    name: str | None = None

    def compiled(self, index: int) -> _Compiled:
        """This rule checked and made ready to match (``index``: its place, for messages)."""
        label = self.name or f"route {index}"
        where = f"routing rule {label!r}"
        tests = tuple(_test(k, c, where) for k, c in self.when.items())
        targets: tuple[str, ...]
        if self.to is None:
            targets = ()
        elif isinstance(self.to, str):
            targets = (_check_target(self.to, where),)
        else:
            targets = tuple(_check_target(t, where) for t in self.to)
            if not targets:
                raise ConfigurationError(f"{where}: to=[] names no target (use to=None to drop)")
        topics = None if self.topics is None else frozenset(self.topics)
        if topics is not None and not topics:
            raise ConfigurationError(f"{where}: topics=[] matches no source topic")
        return _Compiled(label, tests, targets, topics)


@dataclass(frozen=True)
class _Compiled:
    name: str
    tests: tuple[_Test, ...]
    targets: tuple[str, ...]
    topics: frozenset[str] | None

    def covers(self, later: _Compiled) -> bool:
        """Every record ``later`` matches is matched by this rule (so ``later`` never is)."""
        if self.topics is not None and (later.topics is None or not later.topics <= self.topics):
            return False
        theirs = {t.key: t for t in later.tests}
        return all(t.key in theirs and theirs[t.key].within(t) for t in self.tests)


class RoutingTable:
    """Routes in order, first match wins, then ``default``; checked when built.

    ``known_headers``, when given, is the header vocabulary: a rule naming another header is
    refused (the provenance headers are always known).

    >>> table = RoutingTable([Route({"region": "eu"}, to="orders-eu")], default=None)
    >>> table.targets("orders", [("region", b"us"), ("region", b"eu")])
    ('orders-eu',)
    >>> table.targets("orders", [("region", b"us")])
    ()

    Raises ConfigurationError (naming the rule) for a bad condition or target, a header not
    in ``known_headers``, or a rule an earlier one shadows (it could never match).
    """

    def __init__(
        self,
        routes: Iterable[Route] = (),
        *,
        default: str | Sequence[str] | None = SAME_TOPIC,
        known_headers: Iterable[str] | None = None,
    ) -> None:
        self.routes = tuple(routes)
        self._rules = tuple(r.compiled(i) for i, r in enumerate(self.routes))
        self._default = Route(to=default, name="default").compiled(len(self._rules))
        if known_headers is not None:
            known = set(known_headers) | set(PROVENANCE_HEADERS)
            for rule in self._rules:
                for test in rule.tests:
                    if test.key not in known:
                        raise ConfigurationError(
                            f"routing rule {rule.name!r}: unknown header {shown(test.key)}"
                            f" (known: {', '.join(sorted(known))})"
                        )
        for i, later in enumerate(self._rules):
            for earlier in self._rules[:i]:
                if earlier.covers(later):
                    raise ConfigurationError(
                        f"routing rule {later.name!r} can never match: rule {earlier.name!r}"
                        " before it matches every record it would"
                    )
        self.keys = frozenset(t.key for r in self._rules for t in r.tests)
        """Every header key a rule reads."""
        self._cache: dict[tuple[int, str], tuple[str, ...]] = {}
        self._unmatched: dict[str, tuple[str, tuple[str, ...]]] = {}
        """topic -> decision for a record holding none of :attr:`keys` (the common case)."""

    @property
    def rules(self) -> tuple[_Compiled, ...]:
        """The checked rules in order (what the Spark form writes as SQL)."""
        return self._rules

    @property
    def default_rule(self) -> _Compiled:
        """The checked default route."""
        return self._default

    @property
    def names(self) -> tuple[str, ...]:
        """The rules' names in order, then ``default``."""
        return (*(r.name for r in self._rules), self._default.name)

    def check_topics(self, source_topics: Iterable[str]) -> None:
        """Refuse a rule whose ``topics`` name none of ``source_topics``.

        Raises ConfigurationError naming the rule.
        """
        sources = set(source_topics)
        for rule in self._rules:
            if rule.topics is not None and not rule.topics & sources:
                raise ConfigurationError(
                    f"routing rule {rule.name!r} can never match: none of its topics"
                    f" ({', '.join(sorted(rule.topics))}) is mirrored"
                )

    def target_names(self, source_topics: Iterable[str]) -> dict[str, str]:
        """Each target topic the rules can send ``source_topics`` to -> a rule naming it."""
        out: dict[str, str] = {}
        for topic in source_topics:
            for rule in (*self._rules, self._default):
                if rule.topics is None or topic in rule.topics:
                    for target in rule.targets:
                        out.setdefault(target.replace(SAME_TOPIC, topic), rule.name)
        return out

    def decide(
        self, topic: str, headers: Iterable[tuple[str, bytes | None]] | None
    ) -> tuple[str, tuple[str, ...]]:
        """The matching rule's name and its target topics for a record (``()``: drop)."""
        keys = self.keys
        last: dict[str, bytes | None] = {}
        if keys and headers:
            for key, value in headers:
                if key in keys:
                    last[key] = value
        return self.decide_last(topic, last)

    def decide_last(
        self, topic: str, last: Mapping[str, bytes | None]
    ) -> tuple[str, tuple[str, ...]]:
        """As :meth:`decide`, given the last value of each header in :attr:`keys` present."""
        if not last:
            found = self._unmatched.get(topic)
            if found is not None:
                return found
        index = len(self._rules)
        for i, rule in enumerate(self._rules):
            if (rule.topics is None or topic in rule.topics) and all(
                t.holds(last, t.key in last) for t in rule.tests
            ):
                index = i
                break
        rule = self._rules[index] if index < len(self._rules) else self._default
        targets = self._cache.get((index, topic))
        if targets is None:
            targets = self._cache[(index, topic)] = tuple(
                t.replace(SAME_TOPIC, topic) for t in rule.targets
            )
        if not last:
            self._unmatched[topic] = (rule.name, targets)
        return rule.name, targets

    def targets(
        self, topic: str, headers: Iterable[tuple[str, bytes | None]] | None
    ) -> tuple[str, ...]:
        """The target topics of a record from ``topic`` with ``headers`` (``()``: drop)."""
        return self.decide(topic, headers)[1]
