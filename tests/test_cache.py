"""``GrammarCache``: hits by schema text and options, misses where either differs, LRU bounds,
refusals cached, one compile for concurrent requests, resources keyed by identity."""

from __future__ import annotations

import threading
import time

import pytest

import grammar_decode as gd
from grammar_decode import cache as cache_module

PERSON = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
          "required": ["name"]}


def test_same_text_and_options_hit() -> None:
    cache = gd.GrammarCache(max_entries=4)
    first = cache.json_schema(PERSON)
    assert cache.json_schema(dict(PERSON)) is first  # an equal schema: the same text
    assert cache.json_schema('{"type": "object", "properties": {"name": {"type": "string"}, '
                             '"age": {"type": "integer"}}, "required": ["name"]}') is first
    assert cache.info() == {"entries": 1, "max_entries": 4, "hits": 2, "misses": 1, "uncached": 0}
    assert first.accepts('{"name":"a","age":1}')


@pytest.mark.parametrize("other,options", [
    ({"type": "object", "properties": {"age": {"type": "integer"}, "name": {"type": "string"}},
      "required": ["name"]}, {}),  # key order is part of a schema here (the order keys are written)
    (PERSON, {"whitespace": "compact"}),
    (PERSON, {"limits": gd.Limits(compile_seconds=5)}),
    (PERSON, {"draft": "7"}),
])
def test_different_text_or_options_miss(other: dict, options: dict) -> None:
    cache = gd.GrammarCache()
    first = cache.json_schema(PERSON)
    assert cache.json_schema(other, **options) is not first
    assert cache.info()["misses"] == 2


def test_least_recently_used_is_evicted() -> None:
    cache = gd.GrammarCache(max_entries=2)
    a = cache.regex("a+")
    cache.regex("b+")
    assert cache.regex("a+") is a  # a is now the most recent
    cache.regex("c+")  # evicts b
    assert cache.info()["entries"] == 2
    assert cache.regex("a+") is a
    misses = cache.info()["misses"]
    cache.regex("b+")
    assert cache.info()["misses"] == misses + 1


def test_refusals_are_cached_and_raised_again() -> None:
    cache = gd.GrammarCache()
    schema = {"type": "string", "format": "no-such-format-in-any-draft", "pattern": "(?<=a)b"}
    for _ in range(3):
        with pytest.raises(gd.UnsupportedSchemaError, match="pattern"):
            cache.json_schema(schema)
    assert cache.info()["misses"] == 1 and cache.info()["hits"] == 2


def test_concurrent_requests_compile_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = cache_module.compile_json_schema

    def slow(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        time.sleep(0.2)
        return real(*args, **kwargs)

    monkeypatch.setattr(cache_module, "compile_json_schema", slow)
    cache = gd.GrammarCache()
    results: list[gd.CompiledGrammar] = []
    threads = [threading.Thread(target=lambda: results.append(cache.json_schema(PERSON))) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1 and len(results) == 6 and all(r is results[0] for r in results)


def test_resources_are_keyed_by_identity() -> None:
    cache = gd.GrammarCache()
    schema = {"$ref": "https://example.com/name.json"}
    catalogue = {"https://example.com/name.json": {"type": "string", "maxLength": 3}}
    first = cache.json_schema(schema, resources=catalogue)
    assert cache.json_schema(schema, resources=catalogue) is first
    changed = {"https://example.com/name.json": {"type": "integer"}}
    other = cache.json_schema(schema, resources=changed)
    assert other is not first and other.accepts("12") and not first.accepts("12")


def test_what_is_not_json_is_compiled_uncached() -> None:
    cache = gd.GrammarCache()
    with pytest.raises(gd.SchemaError):
        cache.json_schema({"type": "string", "maxLength": float("nan")})
    assert cache.info()["uncached"] == 1 and cache.info()["entries"] == 0


def test_bad_bounds() -> None:
    for bad in (0, -1, True, 2.5):
        with pytest.raises(ValueError):
            gd.GrammarCache(max_entries=bad)  # type: ignore[arg-type]
