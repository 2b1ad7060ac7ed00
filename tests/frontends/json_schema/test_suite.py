"""The official JSON-Schema-Test-Suite (drafts 2020-12, 2019-09, 7, 6, 4; optional tests too):
no invalid instance is ever accepted, nothing crashes, and no group that passed regresses."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.slow

from helpers import DATA, require

require("jsonschema")

from tools.json_schema_suite import GroupResult, run_suite, summary_table

BASELINE = DATA / "json_schema_suite_baseline.json"


@pytest.fixture(scope="module")
def results() -> list[GroupResult]:
    return run_suite()


def test_no_invalid_instance_is_accepted(results: list[GroupResult]) -> None:
    bad = [(r.group, r.invalid_accepted) for r in results if r.invalid_accepted]
    assert bad == [], summary_table(results)


def test_nothing_crashes(results: list[GroupResult]) -> None:
    assert [(r.group, r.crash) for r in results if r.crash] == []


def test_ratchet_no_passing_group_regresses(results: list[GroupResult]) -> None:
    """Every group recorded as passing in the committed baseline still compiles and passes.
    Refresh with ``python tools/json_schema_suite.py --write-baseline
    tests/data/json_schema_suite_baseline.json`` when coverage grows."""
    baseline = set(json.loads(BASELINE.read_text(encoding="utf-8"))["passing"])
    passing = {r.group for r in results if r.passed}
    assert sorted(baseline - passing) == []
    assert len(baseline) >= 300


def test_random_logits_documents_of_every_compiled_group_validate(results: list[GroupResult], gpt2) -> None:
    """Generation under uniform random logits for every schema of the suite that compiles, two
    seeds each: every finished document validates with ``jsonschema`` (the draft's own validator,
    format checking on). This looks where the suite's instances do not."""
    import jsonschema
    import numpy as np

    import grammar_decode as gd
    from grammar_decode.cli import resource_registry
    from tools.json_schema_suite import VALIDATORS, draft_of, groups, remotes, suite_dir

    compiled = {r.group for r in results if r.compiled}
    served = remotes()
    rng = np.random.default_rng(7)
    checked = 0
    for draft, name, group in groups(suite_dir()):
        if name not in compiled:
            continue
        grammar = gd.compile_json_schema(group["schema"], draft=draft_of(draft), resources=served)
        cls = getattr(jsonschema, VALIDATORS[draft])
        # that draft's format checkers; the suite's remote documents where its runners serve them
        validator = cls(group["schema"], format_checker=cls.FORMAT_CHECKER, registry=resource_registry(served, cls))
        budget = min(grammar.min_completion_tokens(gpt2) + 16, 96)
        for seed in range(2):
            result = gd.generate(lambda ids: rng.standard_normal(len(gpt2)), grammar, gpt2, max_tokens=budget,
                                 seed=seed)
            assert result.stop_reason in ("eos", "complete"), (name, result)
            errors = list(validator.iter_errors(json.loads(result.data)))
            assert not errors, (name, result.text, errors[0].message)
            checked += 1
    assert checked >= 700
