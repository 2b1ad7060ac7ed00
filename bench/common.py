"""Helpers shared by the benchmarks: tables, progress lines, machine facts, paths."""

from __future__ import annotations

import datetime
import os
import platform
import sys
from pathlib import Path
from typing import Any, Sequence

import numpy as np

import grammar_decode as gd

# the repository root, for the test-data fetchers in tools/ (not part of the installed library)
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))


def render_table(title: str, headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain-text table: first column left-aligned, the others right-aligned."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]

    def line(row: Sequence[str]) -> str:
        parts = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:])]
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * w for w in widths)
    body = [line(cells[0]), rule] + [line(r) for r in cells[1:]]
    return "\n".join([title, "=" * len(title)] + body) + "\n"


def progress(message: str) -> None:
    """Progress notes go to stderr so that stdout holds only the tables."""
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def machine_info() -> dict[str, Any]:
    """Date, interpreter and machine, for the header and the JSON."""
    return {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "numpy": np.__version__,
        "grammar_decode": gd.__version__,
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor() or "unknown",
        "cpu_count": os.cpu_count(),
    }


def _display(path: Path) -> str:
    """``path`` relative to the current directory when it lies below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def llguidance_tokenizer(vocab: gd.Vocabulary) -> Any:
    """llguidance's tokenizer over the tokens of ``vocab`` (extra ``[bench]``)."""
    import llguidance
    eos = vocab.eos_token_ids[0] if vocab.eos_token_ids else 0
    return llguidance.LLTokenizer(llguidance.TokenizerWrapper(GreedyTokens(list(vocab.tokens), eos)))


class GreedyTokens:
    """The minimal tokenizer object ``llguidance.TokenizerWrapper`` reads (tokens as bytes)."""

    def __init__(self, tokens: list[bytes], eos: int) -> None:
        self.tokens = tokens
        self.eos_token_id = eos
        self.bos_token_id = None
        self.ids = {t: i for i, t in enumerate(tokens) if t}
        self.longest = max(len(t) for t in tokens)

    def __call__(self, text: bytes) -> list[int]:
        """Greedy longest-match tokens spelling ``text`` (a valid tokenization, not the canonical
        BPE one; llguidance uses it for text it forces)."""
        out, i = [], 0
        while i < len(text):
            for j in range(min(len(text), i + self.longest), i, -1):
                found = self.ids.get(text[i:j])
                if found is not None:
                    out.append(found)
                    i = j
                    break
            else:
                raise ValueError(f"byte {text[i]:#x} has no token")
        return out
