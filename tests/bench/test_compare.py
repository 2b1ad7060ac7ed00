"""bench/compare.py: the side-by-side harness counts only the work every engine did in full."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import compare  # noqa: E402


def _task(sequences: list[list[int]]) -> dict:
    return {"source": "test", "name": "t", "schema": {}, "sequences": sequences}


def _compiled(*sequences: tuple[list[int], int | None], first: float = 0.001) -> dict:
    return {"outcome": "compiled", "compile_s": first / 2, "first_mask_s": first,
            "sequences": [{"mask_ns": ns, "rejected_at": at} for ns, at in sequences]}


def test_figures_cover_only_what_every_engine_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compare, "_TASKS", [_task([[1, 2], [3, 4]]), _task([[5]]), _task([[6, 7]])])
    results = {
        "ours": [_compiled(([1000, 3000], None), ([5000, 7000], None), first=0.004),
                 _compiled(([9000], None)), _compiled(([11_000, 13_000], None))],
        "llguidance": [_compiled(([100, 300], None), ([500], 0), first=0.002),
                       {"outcome": "refused", "reason": "x"}, _compiled(([200, 400], None), first=0.006)],
    }
    summary = compare.summarize(["ours", "llguidance"], results)
    # task 0 sequence 1 was rejected by llguidance, task 1 refused: two sequences, four tokens
    assert (summary["common_schemas"], summary["common_sequences"], summary["common_tokens"]) == (2, 2, 4)
    ours, peer = summary["engines"]["ours"], summary["engines"]["llguidance"]
    assert ours["_masks"] == [1.0, 3.0, 11.0, 13.0] and peer["_masks"] == [0.1, 0.2, 0.3, 0.4]
    assert ours["mask_us"]["max"] == 13.0 and math.isclose(ours["mask_us"]["average"], 7.0)
    assert ours["first_mask_ms"]["max"] == pytest.approx(4.0) and peer["first_mask_ms"]["max"] == pytest.approx(6.0)
    assert (peer["outcomes"]["refused"], peer["sequences_accepted"], peer["sequences_run"]) == (1, 2, 3)
    text = compare.tables(["ours", "llguidance"], summary)
    assert "ours/llguidance" in text and "4 tokens of the 2 sequences" in text


def test_an_unknown_engine_is_refused_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        compare.main(["--engines", "ours,nope"])
    assert exc.value.code == 2
    assert "unknown engine(s): nope" in capsys.readouterr().err


@pytest.mark.slow
def test_this_library_alone_on_three_corpus_schemas(tmp_path: Path) -> None:
    out = tmp_path / "compare.json"
    assert compare.main(["--engines", "ours", "--no-suite", "--limit", "3", "--documents", "1",
                         "--json", str(out), "--plot", str(tmp_path / "compare.png")]) == 0
    record = json.loads(out.read_text(encoding="utf-8"))
    assert len(record["schemas"]) == 3
    ours = record["summary"]["engines"]["ours"]
    assert ours["outcomes"]["compiled"] == 3 and ours["sequences_run"] == 3
    # a document whose keys the harness cannot put in schema order (they come from a $ref) is
    # rejected part-way, and left out of the figures
    accepted = [(s["tokens"][0], s["ours"]["rejected_at"][0]) for s in record["schemas"]]
    assert ours["sequences_accepted"] == sum(1 for _n, at in accepted if at is None) >= 2
    assert record["summary"]["common_tokens"] == sum(n for n, at in accepted if at is None)
    assert 0 < ours["mask_us"]["p50"] <= ours["mask_us"]["max"]
