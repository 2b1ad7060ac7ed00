"""Real vocabulary files for tests and benchmarks, fetched from the package index once.

The llama-cpp-python source distribution ships vocabulary-only GGUF files (and tokenizer test
pairs ``.inp``/``.out``) under ``vendor/llama.cpp/models/``. ``ensure_vocab_files()`` downloads that
sdist once with ``pip download`` (package index only, never a model hub; the portable llama.cpp
build reuses it), extracts just those files into a cache directory and returns it; later calls
return at once.

Command line: ``python tools/vocab_files.py`` fetches them and prints the directory. Test data, not
part of the library.
"""

from __future__ import annotations

import tarfile
from pathlib import Path

from grammar_decode.integrations.llama_cpp_setup import cache_root, download_sdist

VOCAB_NAMES = ("gpt-2", "llama-bpe", "llama-spm", "qwen2", "phi-3", "gemma-4")
_MEMBER_DIR = "vendor/llama.cpp/models/"


def cache_dir() -> Path:
    """Where the vocabulary files live: ``cache_root() / "vocab"``."""
    return cache_root() / "vocab"


def vocab_path(name: str) -> Path:
    """Path of ``ggml-vocab-<name>.gguf``, fetching the files first if needed."""
    if name not in VOCAB_NAMES:
        raise ValueError(f"unknown vocabulary {name!r}; known: {', '.join(VOCAB_NAMES)}")
    return ensure_vocab_files() / f"ggml-vocab-{name}.gguf"


def ensure_vocab_files() -> Path:
    """Download and extract the vocabulary files once; return their directory."""
    target = cache_dir()
    wanted = [f"ggml-vocab-{n}.gguf{suffix}" for n in VOCAB_NAMES for suffix in ("", ".inp", ".out")]
    if all((target / w).exists() for w in wanted):
        return target
    target.mkdir(parents=True, exist_ok=True)
    with tarfile.open(download_sdist()) as tar:
        for member in tar.getmembers():
            name = member.name.split(_MEMBER_DIR, 1)[-1]
            if _MEMBER_DIR in member.name and name in wanted and member.isfile():
                source = tar.extractfile(member)
                if source is None:
                    continue
                partial = target / (name + ".part")
                partial.write_bytes(source.read())
                partial.replace(target / name)
    missing = [w for w in wanted if not (target / w).exists()]
    if missing:
        raise FileNotFoundError(f"the sdist lacks {missing}")
    return target


if __name__ == "__main__":
    print(ensure_vocab_files())
