"""The portable llama.cpp build and the crash probe: a native-code crash becomes a typed error."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

from grammar_decode import cli
from grammar_decode.integrations import llama_cpp_setup
from grammar_decode.integrations.llama_cpp_setup import LlamaCppUnusable, run_probe

from helpers import require


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


def test_the_installed_llama_cpp_build_is_portable() -> None:
    """The llama.cpp libraries in use contain no AVX-512 and no AMX instructions (a native build
    on an AVX-512 or AMX machine does, and dies with SIGILL on CPUs without them): the build that
    `grammar-decode install-llama-cpp` makes runs on any x86-64 CPU with AVX2, FMA and F16C."""
    import os
    import platform
    import re
    import shutil
    import subprocess

    llama_cpp = require("llama_cpp", "llama-cpp")
    if platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("x86-64 instruction sets only")
    objdump = shutil.which("objdump")
    if objdump is None:
        if os.environ.get("GRAMMAR_DECODE_REQUIRE_EXTRAS") == "1":
            raise AssertionError("objdump (binutils) is needed to inspect the llama.cpp build")
        pytest.skip("needs objdump (binutils)")
    lib = Path(llama_cpp.__file__).parent / "lib" / "libggml-cpu.so"
    listing = subprocess.run([objdump, "-d", "--no-show-raw-insn", str(lib)], capture_output=True, text=True,
                             check=True).stdout
    wide = len(re.findall(r"%zmm|%k[1-7]\b", listing))
    tiles = len(re.findall(r"\b(tilezero|tileloadd|tdpb\w*|ldtilecfg)\b", listing))
    assert wide == 0 and tiles == 0, (f"{lib} is a native build ({wide} AVX-512 and {tiles} AMX instructions): "
                                      "run `grammar-decode install-llama-cpp`")


def test_the_build_reports_progress_not_silence(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    """A build prints the time elapsed and its own last step at intervals, and on failure the tail
    of its log with the exit status."""
    monkeypatch.setattr(llama_cpp_setup, "PROGRESS_EVERY", 0.0)
    steps = "import time\nfor i in range(3):\n    print(f'[{i + 1}/3] Building CXX object'); time.sleep(0.01)\n"
    llama_cpp_setup.run_with_progress([sys.executable, "-c", steps], {})
    err = capsys.readouterr().err
    assert "elapsed, step 3/3" in err and "built in 0:0" in err
    with pytest.raises(llama_cpp_setup.subprocess.CalledProcessError):
        llama_cpp_setup.run_with_progress([sys.executable, "-c", "print('[ 40%] compiling'); raise SystemExit(3)"],
                                          {})
    err = capsys.readouterr().err
    assert "40%" in err and "[ 40%] compiling" in err
