"""Fixtures (real vocabularies, loaded once per session) and the hypothesis profile. The helpers
the tests share are in ``helpers.py``."""

from __future__ import annotations

import os
import types
from typing import Iterator

import pytest
from hypothesis import settings

import grammar_decode as gd
from grammar_decode.ir.regex import shared_exprs
from helpers import load_vocab

settings.register_profile("default", max_examples=int(os.environ.get("GD_HYPOTHESIS_EXAMPLES", "60")),
                          deadline=None)
settings.load_profile("default")


@pytest.fixture(scope="session")
def gpt2() -> gd.Vocabulary:
    return load_vocab("gpt-2")


@pytest.fixture(scope="session")
def gemma() -> gd.Vocabulary:
    return load_vocab("gemma-4")


def _in_package(target: object) -> bool:
    """Whether ``target`` (what a test patched an attribute of) is this package's: a module of it,
    or a class or object defined in one."""
    name = target.__name__ if isinstance(target, types.ModuleType) else \
        getattr(target, "__module__", None) or type(target).__module__
    return isinstance(name, str) and name.split(".")[0] == "grammar_decode"


@pytest.fixture(autouse=True)
def engine_patches_leave_no_trace(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """After a test that patched the engine (a deliberately broken variant, a kernel switched
    off), the shared expression set is retired: the lexer states it built and the lexeme parts
    cached on them are shared by every later grammar on that set, and a part made by broken code
    would make a later test's masks wrong (a number's part taken as the whole slice, then a
    generation that samples a letter after ``0E3``). Later grammars then build their own. Set up
    after ``monkeypatch`` and torn down before it undoes the patches, so they can still be read."""
    yield
    patched = getattr(monkeypatch, "_setattr", None)
    if patched is None or any(_in_package(target) for target, _name, _value in patched):
        shared_exprs().retire()
