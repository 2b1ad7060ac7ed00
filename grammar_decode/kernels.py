"""The compiled kernels (C extensions built by the package's build, ``setup.py``): how each is
loaded, and the one switch that selects the Python references instead.

``GRAMMAR_DECODE_WALK=python`` in the environment turns every kernel off (the expression store,
the trie walks, the masked logits): the Python paths they are tested against then run. Where an
extension is missing (a checkout without a build), one warning per kernel says so and its Python
path runs."""

from __future__ import annotations

import importlib
import os
import warnings
from types import ModuleType

#: The environment variable, and the value of it, that select the Python references.
SWITCH, PYTHON = "GRAMMAR_DECODE_WALK", "python"


def load(name: str, what: str, instead: str) -> ModuleType | None:
    """The extension module ``name``, or None with one ``RuntimeWarning`` (``what`` is not built;
    ``instead`` says what runs)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        warnings.warn(f"grammar_decode: {what} is not built here (pip install -e . builds it); {instead}",
                      RuntimeWarning, stacklevel=3)
        return None


def selected(module: ModuleType | None) -> bool:
    """Whether a loaded kernel runs: it is built and the switch does not ask for Python."""
    return module is not None and os.environ.get(SWITCH, "") != PYTHON
