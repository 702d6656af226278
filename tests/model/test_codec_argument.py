"""A codec given as something else (e.g. the string "long") gets a TypeError saying what to pass."""

from __future__ import annotations

import pytest

from kheaders import Headers
from kheaders.values import LONG


@pytest.mark.parametrize(
    "call",
    [
        lambda h: h.last_value("n", "long"),
        lambda h: h.values("n", "long"),
        lambda h: h.add_value("n", 1, "long"),
        lambda h: h.set_value("n", 1, "long"),
    ],
    ids=["last_value", "values", "add_value", "set_value"],
)
def test_a_string_codec_is_a_type_error_naming_the_expected_codec(call: object) -> None:
    headers = Headers().add_value("n", 7, LONG)
    with pytest.raises(
        TypeError, match=r"codec must be a value codec .*kheaders\.values\.LONG.*got str 'long'"
    ):
        call(headers)  # type: ignore[operator]


def test_a_real_codec_still_decodes() -> None:
    assert Headers().add_value("n", 7, LONG).last_value("n", LONG) == 7
