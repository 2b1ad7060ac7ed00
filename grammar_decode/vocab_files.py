"""Real vocabulary files for tests and benchmarks, fetched from the package index once.

The llama-cpp-python source distribution ships vocabulary-only GGUF files (and tokenizer test
pairs ``.inp``/``.out``) under ``vendor/llama.cpp/models/``. ``ensure_vocab_files()`` downloads that
sdist once with ``pip download`` (package index only, never a model hub; the portable llama.cpp
build reuses it), extracts just those files into a cache directory and returns it; later calls
return at once.

Command line: ``python -m grammar_decode.vocab_files`` prints the directory.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

LLAMA_CPP_PYTHON_VERSION = "0.3.36"
VOCAB_NAMES = ("gpt-2", "llama-bpe", "llama-spm", "qwen2", "phi-3", "gemma-4")
_MEMBER_DIR = "vendor/llama.cpp/models/"


def cache_root() -> Path:
    """``$GRAMMAR_DECODE_CACHE`` or ``~/.cache/grammar-decode``."""
    root = os.environ.get("GRAMMAR_DECODE_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "grammar-decode")
    return Path(root)


def cache_dir() -> Path:
    """Where the vocabulary files live: ``cache_root() / "vocab"``."""
    return cache_root() / "vocab"


def download_sdist() -> Path:
    """The llama-cpp-python source distribution, downloaded once into ``cache_root() / "sdist"``."""
    folder = cache_root() / "sdist"
    name = f"llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}.tar.gz"
    if (folder / name).is_file():
        return folder / name
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        print(f"fetching llama-cpp-python=={LLAMA_CPP_PYTHON_VERSION} sdist...", file=sys.stderr)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "--quiet",
             f"llama-cpp-python=={LLAMA_CPP_PYTHON_VERSION}", "-d", tmp],
            check=True,
        )
        (Path(tmp) / name).replace(folder / name)
    return folder / name


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
