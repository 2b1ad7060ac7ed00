"""The official JSON-Schema-Test-Suite, run against ``compile_json_schema``.

The suite ships inside the ``jsonschema`` source distribution (``json/tests/``); ``suite_dir()``
fetches it once from the package index (``pip download``, never anything else) into the cache
directory. For drafts 2020-12, 2019-09, 7, 6 and 4, required and optional tests alike, every test
group's schema is compiled; when it compiles, every instance is tried in two serialisations
(compact, and ``json.dumps``'s default separators), with object keys in the order the grammar
writes them (``properties`` order, then the rest), and:

* an instance the suite calls **invalid** must be rejected by ``grammar.accepts`` in every
  serialisation (accepting one is a soundness failure, the worst kind);
* an instance the suite calls **valid** counts as accepted when some serialisation is accepted
  (rejecting it is a coverage gap: the grammar writes a subset of the valid documents, e.g. never
  a key outside ``properties``).

Each group is compiled under its folder's draft (``compile_json_schema(..., draft=...)``), as
each draft's validator judges it; draft 4-7 schemas do not declare ``$schema`` in the suite.

A group *passes* when it compiles, no invalid instance is accepted and every valid one is.
Anything but a ``GrammarDecodeError`` while compiling or matching is a crash.

``python tools/json_schema_suite.py`` prints the totals per draft and the
refusal reasons; ``--write-baseline PATH`` records the passing groups for the ratchet test.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Iterator

from grammar_decode import GrammarDecodeError, UnsupportedSchemaError, compile_json_schema
from grammar_decode.frontends.json_schema import VALIDATOR_NAMES
from grammar_decode.integrations.llama_cpp_setup import cache_root

DRAFTS = ("draft2020-12", "draft2019-09", "draft7", "draft6", "draft4")


def suite_version() -> str:
    try:
        return metadata.version("jsonschema")
    except metadata.PackageNotFoundError:
        return "4.26.0"


def suite_dir() -> Path:
    """``json/tests`` of the ``jsonschema`` sdist (same version as the installed validator),
    fetched and extracted once, with the suite's ``json/remotes`` beside it (``remotes/``)."""
    version = suite_version()
    target = cache_root() / f"json-schema-test-suite-{version}"
    if (target / "draft2020-12").is_dir() and (target / "remotes").is_dir():
        return target
    if target.is_dir():  # an extraction from before the remotes were kept
        import shutil
        shutil.rmtree(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        print(f"fetching the jsonschema=={version} sdist for the JSON-Schema-Test-Suite...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "--quiet",
                        f"jsonschema=={version}", "-d", tmp], check=True)
        (archive,) = Path(tmp).glob("jsonschema-*.tar.gz")
        staged = Path(tmp) / "tests"
        with tarfile.open(archive) as tar:
            for member in tar.getmembers():
                parts = member.name.split("/")
                if len(parts) > 3 and parts[1] == "json" and parts[2] in ("tests", "remotes") and member.isfile():
                    out = staged.joinpath(*parts[3:]) if parts[2] == "tests" else staged.joinpath("remotes", *parts[3:])
                    out.parent.mkdir(parents=True, exist_ok=True)
                    source = tar.extractfile(member)
                    if source is not None:
                        out.write_bytes(source.read())
        staged.rename(target)
    return target


#: Where the suite's remote references point: its ``remotes`` folder, served there by the
#: suite's own runners (nothing is fetched here: the files are handed over as ``resources=``).
REMOTE_BASE = "http://localhost:1234/"


def remotes(root: Path | None = None) -> dict[str, Any]:
    """The suite's remote documents by the URL its schemas reference them at."""
    folder = (root or suite_dir()) / "remotes"
    return {REMOTE_BASE + path.relative_to(folder).as_posix(): json.loads(path.read_text(encoding="utf-8"))
            for path in sorted(folder.rglob("*.json"))}


@dataclass
class GroupResult:
    group: str  # "draft/file.json#index: description"
    draft: str
    compiled: bool
    refusal: str = ""  # the keyword refused, or the error class
    invalid_accepted: list[str] = field(default_factory=list)
    valid_rejected: int = 0
    valid_total: int = 0
    invalid_total: int = 0
    crash: str = ""

    @property
    def passed(self) -> bool:
        return self.compiled and not self.invalid_accepted and self.valid_rejected == 0 and not self.crash


def draft_of(folder: str) -> str:
    """The ``draft=`` argument of ``compile_json_schema`` for a suite folder ("draft7" -> "7"):
    each group is compiled under its folder's draft, as the suite runs each draft's validator."""
    return folder.removeprefix("draft")


def groups(root: Path, drafts: tuple[str, ...] = DRAFTS) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for draft in drafts:
        for path in sorted((root / draft).rglob("*.json")):
            relative = path.relative_to(root).as_posix()
            for index, group in enumerate(json.loads(path.read_text(encoding="utf-8"))):
                yield draft, f"{relative}#{index}: {group['description']}", group


def ordered(value: Any, schema: Any) -> Any:
    """``value`` with object keys in the order the grammar writes them, where the schema tells."""
    if isinstance(value, dict):
        properties = schema.get("properties", {}) if isinstance(schema, dict) else {}
        if not isinstance(properties, dict):
            properties = {}
        keys = [k for k in properties if k in value] + [k for k in value if k not in properties]
        return {k: ordered(value[k], properties.get(k, {})) for k in keys}
    if isinstance(value, list):
        items = schema.get("items", {}) if isinstance(schema, dict) else {}
        return [ordered(v, items if isinstance(items, dict) else {}) for v in value]
    return value


def serialisations(value: Any) -> list[str]:
    out = []
    for separators in ((",", ":"), (", ", ": ")):
        try:
            out.append(json.dumps(value, separators=separators, ensure_ascii=False))
        except (ValueError, TypeError):
            pass
    return out


def run_group(draft: str, name: str, group: dict[str, Any], resources: dict[str, Any] | None = None) -> GroupResult:
    result = GroupResult(group=name, draft=draft, compiled=False)
    try:
        grammar = compile_json_schema(group["schema"], draft=draft_of(draft), resources=resources)
    except UnsupportedSchemaError as exc:
        result.refusal = exc.keyword
        return result
    except GrammarDecodeError as exc:
        result.refusal = type(exc).__name__
        return result
    except Exception as exc:  # noqa: BLE001 - a crash is what this counts
        result.crash = f"compile: {type(exc).__name__}: {exc}"
        return result
    result.compiled = True
    for test in group["tests"]:
        texts = serialisations(ordered(test["data"], group["schema"]))
        try:
            accepted = [grammar.accepts(text) for text in texts]
        except Exception as exc:  # noqa: BLE001
            result.crash = f"accepts: {type(exc).__name__}: {exc}"
            return result
        if test["valid"]:
            result.valid_total += 1
            if not any(accepted):
                result.valid_rejected += 1
        else:
            result.invalid_total += 1
            if any(accepted):
                result.invalid_accepted.append(test["description"])
    return result


VALIDATORS = {f"draft{draft}": name for draft, name in VALIDATOR_NAMES.items()}


def run_suite(drafts: tuple[str, ...] = DRAFTS) -> list[GroupResult]:
    root = suite_dir()
    served = remotes(root)
    return [run_group(draft, name, group, served) for draft, name, group in groups(root, drafts)]


def summary_table(results: list[GroupResult]) -> str:
    lines = ["| draft | groups | compile | pass | invalid instances | invalid accepted | valid accepted | crashes |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for draft in DRAFTS + ("all",):
        rows = [r for r in results if draft == "all" or r.draft == draft]
        compiled = [r for r in rows if r.compiled]
        valid_total = sum(r.valid_total for r in compiled)
        valid_ok = valid_total - sum(r.valid_rejected for r in compiled)
        lines.append(f"| {draft} | {len(rows)} | {len(compiled)} | {sum(r.passed for r in rows)} | "
                     f"{sum(r.invalid_total for r in compiled)} | {sum(len(r.invalid_accepted) for r in rows)} | "
                     f"{valid_ok}/{valid_total} | {sum(bool(r.crash) for r in rows)} |")
    return "\n".join(lines)


def refusal_table(results: list[GroupResult], top: int = 25) -> str:
    counts = Counter(r.refusal for r in results if not r.compiled and not r.crash)
    lines = ["| refused because of | groups |", "|---|---:|"]
    lines += [f"| `{reason}` | {count} |" for reason, count in counts.most_common(top)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run the JSON-Schema-Test-Suite against compile_json_schema.")
    parser.add_argument("--write-baseline", type=Path, help="write the passing group ids to this JSON file")
    parser.add_argument("--fetch", action="store_true", help="only fetch the suite and print its folder")
    args = parser.parse_args(argv)
    if args.fetch:
        print(suite_dir())
        return 0
    results = run_suite()
    print(summary_table(results))
    print()
    print(refusal_table(results))
    for r in results:
        if r.invalid_accepted or r.crash:
            print(f"FAIL {r.group}: {r.crash or r.invalid_accepted}")
    if args.write_baseline:
        passing = sorted(r.group for r in results if r.passed)
        args.write_baseline.write_text(json.dumps({"jsonschema": suite_version(), "passing": passing}, indent=1) + "\n",
                                       encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
