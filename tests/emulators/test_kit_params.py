"""The kit's request layer: the same bracketed names in the two server dialects the emulated vendors run (Rails for
Canvas, PHP's parse_str for WordPress), and a body that does not decode refused in the calling vendor's own words."""
from __future__ import annotations

from typing import NoReturn

import pytest

from decathlon.emulators.kit.params import as_float, as_int, as_str_list, decode_body, deep_merge, nest, parse_query

PAIRS = [("q[][id]", "1"), ("q[][id]", "2"), ("tags[]", "a"), ("tags[]", "b"), ("bad[x", "v"), ("a.b c", "s")]


def test_the_same_names_nest_as_each_server_builds_them():
    assert nest(PAIRS, "rails") == {"q": [{"id": "1"}, {"id": "2"}], "tags": ["a", "b"], "bad[x": "v", "a.b c": "s"}
    # PHP starts a new array at each `[]`, and turns spaces, dots and an unclosed `[` of a name into `_`
    assert nest(PAIRS, "php") == {"q": [{"id": "1"}, {"id": "2"}], "tags": ["a", "b"], "bad_x": "v", "a_b_c": "s"}
    assert parse_query("o[2]=x&o[0]=y", "php") == {"o": {"2": "x", "0": "y"}}  # not 0..n-1 in order: a map
    assert parse_query("o[0]=y&o[1]=x", "php") == {"o": ["y", "x"]}
    assert parse_query("o[][a]=1&o[][b]=2", "rails") == {"o": [{"a": "1", "b": "2"}]}
    assert parse_query("o[][a]=1&o[][b]=2", "php") == {"o": [{"a": "1"}, {"b": "2"}]}


def test_query_and_body_merge_hash_by_hash():
    assert deep_merge({"c": {"a": 1, "b": 2}, "x": 1}, {"c": {"b": 3}, "x": {"y": 1}}) == \
        {"c": {"a": 1, "b": 3}, "x": {"y": 1}}


class Refused(Exception):
    pass


def _refuse(what: str) -> NoReturn:
    raise Refused(what)


@pytest.mark.parametrize("ctype, raw, what", [("application/json", b"{nope", "json"),
                                              ("application/json", b"\xff", "json"),
                                              ("application/json", b"[" * 100_000, "json"),
                                              ("application/x-www-form-urlencoded", b"a=\xff", "form")])
def test_a_body_that_does_not_decode_is_refused_by_the_vendors_callback(ctype, raw, what):
    with pytest.raises(Refused) as err:
        decode_body(ctype, raw, _refuse)
    assert str(err.value) == what


def test_bodies_decode_by_content_type_in_the_dialect():
    assert decode_body("application/json", b"[1]", _refuse) == {"_json": [1]}
    assert decode_body("", b'{"a": 1}', _refuse) == {"a": 1}
    assert decode_body("text/plain", b"a[]=1&a[]=2", _refuse, "php") == {"a": ["1", "2"]}
    assert decode_body("application/octet-stream", b"a=1", _refuse) == {}


def test_typed_reads_never_raise_on_what_a_client_sent():
    assert [as_int(v) for v in ("7", " 8 ", 9.0, 9.5, True, "x", None, [1])] == [7, 8, 9, None, None, None, None, None]
    assert as_int("x", 3) == 3 and as_float("2.5") == 2.5 and as_float("", 1.0) == 1.0 and as_float({}) is None
    assert as_str_list(["a", None, {"b": 1}, 3]) == ["a", "3"]
