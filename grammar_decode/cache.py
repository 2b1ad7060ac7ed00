"""A bounded, thread-safe cache of compiled grammars, for servers that see the same constraint
again.

``GrammarCache.json_schema(schema, **options)`` returns the ``CompiledGrammar`` that
``compile_json_schema(schema, **options)`` would, compiled once per distinct key and shared after
that (a compiled grammar is immutable and thread-safe, and its masks are cached per vocabulary, so
a hit also reuses every mask computed for it). ``regex`` and ``grammar`` do the same for the other
front ends.

The key is the constraint as JSON text in the order it was written (``json.dumps`` without
sorting: key order is part of a schema here, as ``properties`` order fixes the order keys are
written in), the front end, and every option, ``limits`` included. ``resources`` is keyed by the
mapping's identity (serialising a catalogue of schemas per request would cost more than it
saves): pass the same mapping to share entries, and a new one after changing it. A schema that is
not JSON text or JSON-serialisable values (a pydantic model is written out first) is compiled
without the cache.

Refusals are cached too (the same typed error is raised again, at once): a hostile client that
resends a schema which takes ``Limits.compile_seconds`` to refuse pays it once. Concurrent
requests for one key compile it once; the others wait for that result. Entries are evicted least
recently used past ``max_entries``; a compiled grammar's size grows with the states its matchers
visit, so bound the entries by what a grammar of your traffic holds. Cost of a hit: the key's
serialisation, O(size of the schema), and a dict lookup.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any, Callable, Hashable

from .compile import compile_grammar, compile_json_schema, compile_regex, compile_triggered
from .errors import GrammarDecodeError
from .frontends.json_schema import parse_schema
from .grammar import CompiledGrammar


class _Pending:
    """A compile in progress: the others asking for the same key wait on it."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.result: CompiledGrammar | None = None
        self.error: GrammarDecodeError | None = None


class GrammarCache:
    """Compiled grammars by canonical constraint (module docstring). Thread-safe."""

    def __init__(self, max_entries: int = 256) -> None:
        if isinstance(max_entries, bool) or not isinstance(max_entries, int) or max_entries < 1:
            raise ValueError(f"max_entries must be a positive int, got {max_entries!r}")
        self.max_entries = max_entries
        self._entries: "OrderedDict[Hashable, CompiledGrammar | GrammarDecodeError]" = OrderedDict()
        self._pending: dict[Hashable, _Pending] = {}
        self._held: dict[Hashable, Any] = {}  # the resources mapping of each entry keyed by its id
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self.uncached = 0

    def json_schema(self, schema: Any, **options: Any) -> CompiledGrammar:
        """``compile_json_schema(schema, **options)``, from the cache where the same schema text
        and options were compiled before."""
        parsed = parse_schema(schema)
        try:
            text = json.dumps(parsed, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        except (TypeError, ValueError, RecursionError):
            text = None  # not JSON values: the compile says what is wrong, or compiles it uncached
        resources = options.get("resources")
        rest = _options_key({k: v for k, v in options.items() if k != "resources"})
        key = None if text is None or rest is None else ("json", text, rest, None if resources is None else id(resources))
        return self._get(key, lambda: compile_json_schema(parsed, **options), keep=resources)

    def regex(self, pattern: str, flags: int = 0, **options: Any) -> CompiledGrammar:
        """``compile_regex(pattern, flags, **options)``, from the cache."""
        rest = _options_key(options)
        key = ("regex", pattern, flags, rest) if isinstance(pattern, str) and rest is not None else None
        return self._get(key, lambda: compile_regex(pattern, flags, **options))

    def grammar(self, text: str, start: str = "start", **options: Any) -> CompiledGrammar:
        """``compile_grammar(text, start, **options)``, from the cache."""
        rest = _options_key(options)
        key = ("lark", text, start, rest) if isinstance(text, str) and isinstance(start, str) and rest is not None \
            else None
        return self._get(key, lambda: compile_grammar(text, start, **options))

    def triggered(self, constraint: CompiledGrammar, trigger: str, **options: Any) -> CompiledGrammar:
        """``compile_triggered(constraint, trigger, **options)``, from the cache: keyed by the
        constraint's identity (the entry holds it, so the id stays its own), so pass a grammar
        this cache returned to share entries across requests."""
        rest = _options_key(options)
        key = ("triggered", id(constraint), trigger, rest) if isinstance(trigger, str) and rest is not None else None
        return self._get(key, lambda: compile_triggered(constraint, trigger, **options), keep=constraint)

    def _get(self, key: Hashable | None, compile_it: Callable[[], CompiledGrammar], keep: Any = None
             ) -> CompiledGrammar:
        if key is None:
            with self._lock:
                self.uncached += 1
            return compile_it()
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                self.hits += 1
                return _returned(found)
            pending = self._pending.get(key)
            if pending is None:
                pending = self._pending[key] = _Pending()
                mine = True
                self.misses += 1
            else:
                mine = False
                self.hits += 1
        if not mine:
            pending.done.wait()
            if pending.result is not None:
                return pending.result
            if pending.error is not None:
                raise pending.error.with_traceback(None)
            return self._get(key, compile_it, keep)  # the compile failed otherwise: try it here
        try:
            result = compile_it()
        except GrammarDecodeError as exc:
            self._settle(key, pending, exc, keep)
            raise
        except BaseException:  # not a refusal (a bug, an interrupt): nothing is cached
            with self._lock:
                del self._pending[key]
            pending.done.set()
            raise
        self._settle(key, pending, result, keep)
        return result

    def _settle(self, key: Hashable, pending: _Pending, value: "CompiledGrammar | GrammarDecodeError",
                keep: Any) -> None:
        with self._lock:
            self._entries[key] = value
            if keep is not None:
                # the mapping is part of the key by identity: held so the id stays its own
                self._held[key] = keep
            while len(self._entries) > self.max_entries:
                old, _value = self._entries.popitem(last=False)
                self._held.pop(old, None)
            del self._pending[key]
        if isinstance(value, CompiledGrammar):
            pending.result = value
        else:
            pending.error = value
        pending.done.set()

    def info(self) -> dict[str, int]:
        """Entries held, hits (a waiting request counts as one), misses (compiles begun) and
        constraints compiled without the cache."""
        with self._lock:
            return {"entries": len(self._entries), "max_entries": self.max_entries, "hits": self.hits,
                    "misses": self.misses, "uncached": self.uncached}

    def clear(self) -> None:
        """Drop every entry (compiles in progress finish and are kept)."""
        with self._lock:
            self._entries.clear()
            self._held.clear()


def _returned(value: "CompiledGrammar | GrammarDecodeError") -> CompiledGrammar:
    if isinstance(value, GrammarDecodeError):
        raise value.with_traceback(None)
    return value


def _options_key(options: dict[str, Any]) -> tuple[Any, ...] | None:
    """The options as a hashable tuple; None where one is not hashable (compiled uncached)."""
    items = tuple(sorted(options.items()))
    try:
        hash(items)
    except TypeError:
        return None
    return items
