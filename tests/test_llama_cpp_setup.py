"""The portable llama.cpp build and the crash probe: a native-code crash becomes a typed error."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

from grammar_decode import cli
from grammar_decode.integrations import llama_cpp_setup
from grammar_decode.integrations.llama_cpp_setup import LlamaCppUnusable, run_probe

from conftest import require


def _dies_by(sig: signal.Signals) -> list[str]:
    return [sys.executable, "-c", f"import os, signal; os.kill(os.getpid(), signal.{sig.name})"]


def test_a_crash_by_sigill_is_a_typed_error_naming_the_fix() -> None:
    with pytest.raises(LlamaCppUnusable, match="SIGILL.*instruction this CPU cannot run.*install-llama-cpp"):
        run_probe(_dies_by(signal.SIGILL))


def test_other_signals_and_failures_are_named() -> None:
    with pytest.raises(LlamaCppUnusable, match="SIGSEGV"):
        run_probe(_dies_by(signal.SIGSEGV))
    with pytest.raises(LlamaCppUnusable, match="failed to evaluate the model .*no such model"):
        run_probe([sys.executable, "-c", "import sys; sys.exit('no such model')"])
    with pytest.raises(LlamaCppUnusable, match="within 1 s"):
        run_probe([sys.executable, "-c", "import time; time.sleep(30)"], timeout=1)


def test_a_clean_exit_passes() -> None:
    run_probe([sys.executable, "-c", "pass"])


def test_the_cli_reports_an_unusable_build_on_one_line(monkeypatch, capsys, tmp_path: Path) -> None:
    """What a user on a CPU the build cannot serve sees: one line, the fix, exit status 2."""
    require("llama_cpp", "llama-cpp")
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF" + bytes(60))

    def crashed(path: Path) -> None:
        run_probe(_dies_by(signal.SIGILL))

    monkeypatch.setattr(llama_cpp_setup, "probe", crashed)
    status = cli.main(["generate", "--schema", '{"type": "integer"}', "--model", str(model)])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2
    assert len(err) == 1 and err[0].startswith("grammar-decode: error: llama.cpp crashed with SIGILL"), err
    assert "grammar-decode install-llama-cpp" in err[0] and "--backend transformers" in err[0]


def test_the_probe_key_follows_the_model_file(tmp_path: Path) -> None:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF1")
    first = llama_cpp_setup._probe_key(model)
    assert first == llama_cpp_setup._probe_key(model)
    model.write_bytes(b"GGUF22")
    assert llama_cpp_setup._probe_key(model) != first


def test_portable_wheel_folder_is_its_own(monkeypatch, tmp_path: Path) -> None:
    """The wheel lives outside pip's cache, in a folder named for the portable build."""
    monkeypatch.setenv("GRAMMAR_DECODE_CACHE", str(tmp_path))
    folder = llama_cpp_setup.wheelhouse()
    assert folder.is_relative_to(tmp_path) and folder.name.endswith("-portable")
    folder.mkdir(parents=True)
    wheel = folder / "llama_cpp_python-0.3.36-cp311-cp311-linux_x86_64.whl"
    wheel.write_bytes(b"")
    assert llama_cpp_setup.portable_wheel() == wheel  # built once, then reused without a build
