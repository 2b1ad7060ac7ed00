"""bench/ab.py: the two-trees-at-once harness's figures, its checks on its arguments, and one
worker run end to end on a few real compare tasks."""

from __future__ import annotations

import gc
import json
import math
import os
import pickle
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import ab  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def test_figures_are_compare_quantiles() -> None:
    found = ab.figures([float(v) for v in range(1, 101)], [3.0, 1.0, 2.0])
    assert found["token p50"] == 51.0 and found["token p90"] == 91.0 and found["token p99"] == 100.0
    assert found["token max"] == 100.0 and found["token average"] == 50.5
    assert found["first p50"] == 2.0 and found["first max"] == 3.0


def test_figures_of_nothing_are_nan() -> None:
    found = ab.figures([], [])
    assert all(math.isnan(value) for value in found.values())


def test_the_base_must_be_a_checkout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        ab.main(["--base", str(tmp_path)])
    assert "--base must be a checkout" in capsys.readouterr().err


def test_a_worker_runs_the_tasks_with_its_trees_library(tmp_path: Path) -> None:
    """One worker, this tree, two small tasks (in this process: the CPU it pins and the collector
    it freezes are given back after)."""
    tasks = [{"source": "test", "name": "n", "schema": {"type": "integer"}, "sequences": [[16, 17]]},
             {"source": "test", "name": "s", "schema": {"type": "boolean"}, "sequences": [[7942]]}]
    tasks_file, out = tmp_path / "tasks.pkl", tmp_path / "out.json"
    tasks_file.write_bytes(pickle.dumps(tasks))
    cpus = os.sched_getaffinity(0)
    try:
        ab._worker(ROOT, tasks_file, min(cpus), out)
    finally:
        os.sched_setaffinity(0, cpus)
        gc.unfreeze()
    data = json.loads(out.read_text())
    assert len(data["first_ms"]) == 2 and all(ms > 0 for ms in data["first_ms"])
    assert 1 <= len(data["mask_us"]) <= 3
