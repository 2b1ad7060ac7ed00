"""Installing llama-cpp-python so that it runs on any x86-64 CPU, and probing that it does.

Why: llama-cpp-python builds llama.cpp from source with ``GGML_NATIVE=ON`` by default, which
compiles for the building CPU's full instruction set. On an Intel Xeon that advertises AMX (seen
on Sapphire Rapids under KVM) the AMX matmul path then dies with SIGILL (``tilezero`` in
``ggml_backend_amx_mul_mat``), taking the whole process down; and pip caches the wheel it built,
so the native build survives reinstalls and travels to other machines sharing that cache.

The fix has two parts:

* ``install_portable()`` builds a wheel with ``CMAKE_ARGS=-DGGML_NATIVE=OFF`` (SSE4.2, AVX, AVX2,
  FMA, F16C, BMI2; no AVX-512, no AMX), once, into a folder of its own under the cache directory
  (pip's wheel cache is bypassed, so a native wheel cached there cannot stand in for it), and
  installs that wheel unless it is already the installed one. ``grammar-decode install-llama-cpp``
  runs it.
* ``probe(model)`` loads the model in a subprocess and evaluates two tokens; a crash there (a
  signal) becomes a ``LlamaCppUnusable`` error naming the signal and the fix, instead of the death
  of the caller. A successful probe is remembered per (shared libraries, model file, CPU).

This module does not import ``llama_cpp`` itself: it must work before llama-cpp-python exists.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path
from typing import Sequence

LLAMA_CPP_PYTHON_VERSION = "0.3.36"


def cache_root() -> Path:
    """``$GRAMMAR_DECODE_CACHE`` or ``~/.cache/grammar-decode``."""
    root = os.environ.get("GRAMMAR_DECODE_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "grammar-decode")
    return Path(root)


def download_sdist() -> Path:
    """The llama-cpp-python source distribution, downloaded once into ``cache_root() / "sdist"``."""
    folder = cache_root() / "sdist"
    name = f"llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}.tar.gz"
    if (folder / name).is_file():
        return folder / name
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        print(f"fetching llama-cpp-python=={LLAMA_CPP_PYTHON_VERSION} sdist...", file=sys.stderr)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "--quiet",
             f"llama-cpp-python=={LLAMA_CPP_PYTHON_VERSION}", "-d", tmp],
            check=True,
        )
        (Path(tmp) / name).replace(folder / name)
    return folder / name


#: CMake flags of the portable build: llama.cpp then enables SSE4.2/AVX/AVX2/FMA/F16C/BMI2 and
#: nothing newer (its defaults when native detection is off).
PORTABLE_CMAKE_ARGS = "-DGGML_NATIVE=OFF"

#: How to fix an unusable build, quoted in error messages.
FIX = "rebuild it portably with `grammar-decode install-llama-cpp`, or use --backend transformers"

_PROBE_TIMEOUT = 300.0


class LlamaCppUnusable(RuntimeError):
    """llama.cpp cannot run the model on this machine (it crashed or failed in the probe)."""


def wheelhouse() -> Path:
    """Folder holding the portable wheel: ``<cache>/wheels/llama-cpp-python-<version>-portable``."""
    return cache_root() / "wheels" / f"llama-cpp-python-{LLAMA_CPP_PYTHON_VERSION}-portable"


def portable_wheel(rebuild: bool = False) -> Path:
    """The portable wheel, built once (6-13 minutes on two cores) and then reused."""
    folder = wheelhouse()
    found = sorted(folder.glob("llama_cpp_python-*.whl"))
    if found and not rebuild:
        return found[-1]
    sdist = download_sdist()
    env = dict(os.environ, CMAKE_ARGS=PORTABLE_CMAKE_ARGS, FORCE_CMAKE="1")
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder.parent) as tmp:
        print(f"building llama-cpp-python {LLAMA_CPP_PYTHON_VERSION} with {PORTABLE_CMAKE_ARGS} "
              "(6-13 minutes on two cores, once)...", file=sys.stderr, flush=True)
        # --no-cache-dir: never take (or leave) a wheel in pip's cache, where native builds live
        run_with_progress([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-cache-dir", "--verbose",
                           str(sdist), "-w", tmp], env)
        (built,) = Path(tmp).glob("llama_cpp_python-*.whl")
        if folder.exists():
            shutil.rmtree(folder)
        staged = Path(tmp) / "wheel"
        staged.mkdir()
        built.rename(staged / built.name)
        staged.rename(folder)  # atomic: the folder holds a whole wheel or does not exist
    return folder / built.name


#: A build step as CMake's makefiles (``[ 45%]``) or ninja (``[12/180]``) print it.
_STEP = re.compile(r"\[\s*(\d+)%\]|\[(\d+)/(\d+)\]")
#: Seconds between two progress lines of a build.
PROGRESS_EVERY = 15.0


def run_with_progress(argv: Sequence[str], env: dict[str, str]) -> None:
    """Run a build, printing on stderr every ``PROGRESS_EVERY`` seconds the time elapsed and the
    build's own progress (the last step CMake or ninja announced), not its whole log; on failure,
    the log's last 40 lines and ``CalledProcessError``."""
    started = time.monotonic()
    last_print = started
    step = ""
    tail: list[str] = []
    with subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                          errors="replace") as process:
        for line in process.stdout:  # type: ignore[union-attr]
            tail = (tail + [line.rstrip()])[-40:]
            match = _STEP.search(line)
            if match:
                step = f"{match.group(1)}%" if match.group(1) else f"step {match.group(2)}/{match.group(3)}"
            now = time.monotonic()
            if now - last_print >= PROGRESS_EVERY:
                last_print = now
                minutes, seconds = divmod(int(now - started), 60)
                print(f"  building llama.cpp: {minutes}:{seconds:02d} elapsed" + (f", {step}" if step else ""),
                      file=sys.stderr, flush=True)
        code = process.wait()
    if code:
        print("\n".join(tail), file=sys.stderr)
        raise subprocess.CalledProcessError(code, list(argv))
    minutes, seconds = divmod(int(time.monotonic() - started), 60)
    print(f"  built in {minutes}:{seconds:02d}", file=sys.stderr, flush=True)


def installed_wheel_url() -> str | None:
    """The file URL the installed llama-cpp-python came from, if it was installed from a file."""
    try:
        dist = metadata.distribution("llama-cpp-python")
    except metadata.PackageNotFoundError:
        return None
    if dist.version != LLAMA_CPP_PYTHON_VERSION:
        return None
    text = dist.read_text("direct_url.json")
    if not text:
        return None
    return str(json.loads(text).get("url", "")) or None


def install_portable(rebuild: bool = False) -> Path:
    """Build (once) and install the portable wheel; a no-op when it is already installed. Its
    dependencies come from the package index as usual."""
    wheel = portable_wheel(rebuild)
    if installed_wheel_url() == wheel.as_uri() and not rebuild:
        print(f"llama-cpp-python {LLAMA_CPP_PYTHON_VERSION} (portable) is already installed", file=sys.stderr)
        return wheel
    pip = [sys.executable, "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, "--no-deps", "--force-reinstall", str(wheel)], check=True)
    subprocess.run([*pip, str(wheel)], check=True)  # its dependencies, if missing
    print(f"installed {wheel.name} (portable build, {PORTABLE_CMAKE_ARGS})", file=sys.stderr)
    return wheel


# -- the probe ---------------------------------------------------------------------------------

_PROBE_CODE = """
import sys, llama_cpp
llama = llama_cpp.Llama(model_path=sys.argv[1], n_ctx=64, verbose=False)
llama.eval(llama.tokenize(b"{", add_bos=True))
print("ok")
"""


def run_probe(argv: Sequence[str], timeout: float = _PROBE_TIMEOUT) -> None:
    """Run ``argv``; raise ``LlamaCppUnusable`` unless it exits 0. A death by signal is named
    (``SIGILL``: the build uses instructions this CPU cannot run)."""
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise LlamaCppUnusable(f"llama.cpp did not evaluate two tokens within {timeout:.0f} s") from exc
    if done.returncode == 0:
        return
    if done.returncode < 0:
        try:
            name = signal.Signals(-done.returncode).name
        except ValueError:
            name = f"signal {-done.returncode}"
        hint = " (an instruction this CPU cannot run)" if name == "SIGILL" else ""
        raise LlamaCppUnusable(f"llama.cpp crashed with {name}{hint} while evaluating the model; {FIX}")
    last = (done.stderr.strip().splitlines() or ["no message"])[-1]
    raise LlamaCppUnusable(f"llama.cpp failed to evaluate the model ({last})")


def _probe_key(model: Path) -> str:
    """What decides whether the probe's answer still holds: the native libraries, the model file
    and the CPU."""
    spec = importlib.util.find_spec("llama_cpp")
    parts: list[str] = []
    if spec is not None and spec.origin is not None:
        lib = Path(spec.origin).parent / "lib"
        for path in sorted(lib.glob("*")) if lib.is_dir() else []:
            stat = path.stat()
            parts.append(f"{path}:{stat.st_size}:{stat.st_mtime_ns}")
    stat = model.stat()
    parts.append(f"{model.resolve()}:{stat.st_size}:{stat.st_mtime_ns}")
    try:
        cpu = [line for line in Path("/proc/cpuinfo").read_text().splitlines()
               if line.startswith(("model name", "flags"))][:2]
    except OSError:
        cpu = []
    parts.extend(cpu)
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def probe(model: Path) -> None:
    """Raise ``LlamaCppUnusable`` if llama.cpp cannot evaluate ``model`` on this machine. Runs in
    a subprocess (about a second); a success is remembered, so later calls cost a file read."""
    record = cache_root() / "llama-cpp-probe-ok"
    key = _probe_key(model)
    try:
        if key in record.read_text().split():
            return
    except OSError:
        pass
    run_probe([sys.executable, "-c", _PROBE_CODE, str(model)])
    try:
        record.parent.mkdir(parents=True, exist_ok=True)
        with open(record, "a", encoding="ascii") as handle:
            handle.write(key + "\n")
    except OSError:
        pass  # an unwritable cache only costs a probe next time


def main(argv: Sequence[str] | None = None) -> int:
    """``grammar-decode install-llama-cpp [--rebuild]``."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        install_portable(rebuild="--rebuild" in args)
    except subprocess.CalledProcessError as exc:
        print(f"grammar-decode: error: {' '.join(map(str, exc.cmd[:6]))} ... exited with status {exc.returncode}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
