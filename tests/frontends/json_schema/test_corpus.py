"""A corpus of realistic JSON schemas (tool calls, API payloads, pydantic models, configs,
recursive trees, Kubernetes-like objects, ...) in ``tests/data/json_schema_corpus.json``, each
with valid and invalid instances.

Each instance is judged twice: by ``jsonschema`` (Draft 2020-12, formats asserted), which must
agree with the table, and by the compiled grammar, which must accept every valid instance and
reject every serialisation of every invalid one. The grammar writes object keys in a fixed order
(``properties`` order, the ``$ref`` target's before the schema's own, ``allOf`` branches after,
then required keys outside ``properties``, then any other key), so instances are serialised with
their keys put in that order first (``grammar_order``). A few schemas also generate documents
under random logits, judged by ``jsonschema``.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

import pytest

import grammar_decode as gd
from helpers import DATA, assert_random_documents_validate, require

CORPUS_PATH = DATA / "json_schema_corpus.json"
CORPUS: dict[str, dict[str, Any]] = json.loads(CORPUS_PATH.read_text(encoding="utf-8"))
NAMES = sorted(CORPUS)

#: Schemas that also generate under random logits, chosen to cover different features:
#: enums and integer bounds, nullable strict-mode fields with formats, discriminated oneOf through
#: $ref, recursion through anyOf, Kubernetes-like ports with string maps, tuples (prefixItems),
#: contains, and patternProperties/propertyNames maps.
GENERATED = [
    "tool_get_weather",
    "tool_search_flights_strict",
    "pydantic_pet_owner_discriminated",
    "tree_expression_ast",
    "k8s_service",
    "sensor_timeseries",
    "team_roster_contains_owner",
    "survey_response_pattern_properties",
    "unique_hostnames",
    "ci_conditional_steps",
]


@functools.lru_cache(maxsize=None)
def compiled(name: str) -> gd.CompiledGrammar:
    return gd.compile_json_schema(CORPUS[name]["schema"])


def _validator_class():
    return require("jsonschema").Draft202012Validator


def validator_for(schema: Any, root: dict) -> Any:
    """A validator (formats asserted) for ``schema``, a subschema of ``root``, of the draft the
    root's ``$schema`` names (else 2020-12): the root's definitions travel along so that
    ``#/$defs/...`` references still resolve."""
    jsonschema = require("jsonschema")
    cls = jsonschema.validators.validator_for(root, default=_validator_class()) if isinstance(root, dict) \
        else _validator_class()
    wrapper: dict[str, Any] = {"allOf": [schema]}
    if isinstance(root, dict):
        for key in ("$defs", "definitions", "$schema"):
            if key in root:
                wrapper[key] = root[key]
    return cls(wrapper, format_checker=cls.FORMAT_CHECKER)


def _resolve(ref: str, root: dict) -> Any:
    assert ref.startswith("#/"), ref
    node: Any = root
    for token in ref[2:].split("/"):
        node = node[token.replace("~1", "/").replace("~0", "~")]
    return node


def _parts(schema: Any, root: dict, instance: Any, depth: int = 0) -> list[dict]:
    """The schema objects that apply to ``instance``, in the order the grammar merges them: the
    ``$ref`` target, the schema itself, its ``allOf`` branches; for ``anyOf``/``oneOf`` the first
    branch that ``instance`` passes."""
    if not isinstance(schema, dict) or depth > 50:
        return []
    parts: list[dict] = []
    if "$ref" in schema:
        parts += _parts(_resolve(schema["$ref"], root), root, instance, depth + 1)
    parts.append(schema)
    for branch in schema.get("allOf", []):
        parts += _parts(branch, root, instance, depth + 1)
    for keyword in ("anyOf", "oneOf"):
        for branch in schema.get(keyword, []):
            if validator_for(branch, root).is_valid(instance):
                parts += _parts(branch, root, instance, depth + 1)
                break
    return parts


def _conjoin(subschemas: list[Any]) -> Any:
    subschemas = [s for s in subschemas if s is not True and s != {}]
    if not subschemas:
        return True
    return subschemas[0] if len(subschemas) == 1 else {"allOf": subschemas}


def grammar_order(instance: Any, schema: Any, root: dict) -> Any:
    """``instance`` with the keys of every object it holds put in the order the grammar writes
    them: named properties in (merged) ``properties`` order, then keys that ``required`` or a
    dependency names outside ``properties``, then the rest as they were."""
    parts = _parts(schema, root, instance)
    if isinstance(instance, dict):
        order: list[str] = []
        for part in parts:
            order += [k for k in part.get("properties", {}) if k not in order]
        for part in parts:
            order += [k for k in part.get("required", []) if k not in order]
        for part in parts:
            for names in part.get("dependentRequired", {}).values():
                order += [k for k in names if k not in order]
        keys = [k for k in order if k in instance] + [k for k in instance if k not in order]
        result = {}
        for key in keys:
            subschemas = []
            for part in parts:
                matched = False
                if key in part.get("properties", {}):
                    subschemas.append(part["properties"][key])
                    matched = True
                for pattern, subschema in part.get("patternProperties", {}).items():
                    if re.search(pattern, key):
                        subschemas.append(subschema)
                        matched = True
                if not matched and isinstance(part.get("additionalProperties"), dict):
                    subschemas.append(part["additionalProperties"])
            result[key] = grammar_order(instance[key], _conjoin(subschemas), root)
        return result
    if isinstance(instance, list):
        items = []
        for index, item in enumerate(instance):
            subschemas = []
            for part in parts:
                prefix = part.get("prefixItems", [])
                if index < len(prefix):
                    subschemas.append(prefix[index])
                elif isinstance(part.get("items"), dict):
                    subschemas.append(part["items"])
            items.append(grammar_order(item, _conjoin(subschemas), root))
        return items
    return instance


def serialisations(instance: Any) -> list[str]:
    return [json.dumps(instance), json.dumps(instance, separators=(",", ":")),
            json.dumps(instance, ensure_ascii=False, separators=(",", ":"))]


def test_corpus_is_large_and_well_formed() -> None:
    assert len(CORPUS) >= 60
    hardest = [name for name in CORPUS if name.startswith("hardest_")]
    assert len(hardest) == 1, hardest
    for name, entry in CORPUS.items():
        assert set(entry) == {"schema", "valid", "invalid"}, name
        assert len(entry["valid"]) >= 3 and len(entry["invalid"]) >= 3, name
    assert set(GENERATED) <= set(CORPUS)


@pytest.mark.parametrize("name", NAMES)
def test_schema_is_a_valid_schema_and_compiles(name: str) -> None:
    _validator_class().check_schema(CORPUS[name]["schema"])
    assert isinstance(compiled(name), gd.CompiledGrammar)


@pytest.mark.parametrize("name", NAMES)
def test_valid_instances_are_accepted(name: str) -> None:
    schema = CORPUS[name]["schema"]
    judge = validator_for(schema, schema)
    grammar = compiled(name)
    failures = []
    for index, instance in enumerate(CORPUS[name]["valid"]):
        errors = [e.message for e in judge.iter_errors(instance)]
        assert not errors, (name, index, errors)
        ordered = grammar_order(instance, schema, schema)
        if not any(grammar.accepts(text) for text in serialisations(ordered)):
            failures.append((index, json.dumps(ordered)))
    assert not failures, (name, failures)


@pytest.mark.parametrize("name", NAMES)
def test_invalid_instances_are_rejected(name: str) -> None:
    schema = CORPUS[name]["schema"]
    judge = validator_for(schema, schema)
    grammar = compiled(name)
    failures = []
    for index, instance in enumerate(CORPUS[name]["invalid"]):
        assert not judge.is_valid(instance), (name, index, "jsonschema calls it valid")
        texts = serialisations(instance) + serialisations(grammar_order(instance, schema, schema))
        accepted = [text for text in texts if grammar.accepts(text)]
        if accepted:
            failures.append((index, accepted[0]))
    assert not failures, (name, failures)


@pytest.mark.parametrize("name", GENERATED)
def test_random_documents_validate(name: str, gpt2: gd.Vocabulary) -> None:
    assert_random_documents_validate(CORPUS[name]["schema"], gpt2, seeds=3, max_tokens=150)
