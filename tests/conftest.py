"""Fixtures (real vocabularies, loaded once per session) and the hypothesis profile. The helpers
the tests share are in ``helpers.py``."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

import grammar_decode as gd
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
