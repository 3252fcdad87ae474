"""llama.cpp's C++ `llama-server`: finding the binary, and building it as a user would.

PAW ships no binary. `find_llama_server` looks, in order, at an explicit path, the
`PAW_LLAMA_SERVER` environment variable, `llama-server` on PATH and PAW's own build in
the cache folder (`~/.cache/paw/llama-server/<llama-cpp-python version>/`).
`build_llama_server` (`paw serve --build-llama-server`) makes that build: it fetches the
llama-cpp-python source package of the installed version with pip (the same llama.cpp
source the in-process engine was compiled from), and runs CMake on its vendored llama.cpp
for the `llama-server` target only, with the web UI, OpenSSL, tests and examples off
(`CMAKE_FLAGS`). Nothing is downloaded at test time: the tests use a binary that exists.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import TextIO

from store.errors import UserError

CMAKE_FLAGS = (
    "-DCMAKE_BUILD_TYPE=Release", "-DBUILD_SHARED_LIBS=OFF", "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF", "-DLLAMA_BUILD_UI=OFF", "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_OPENSSL=OFF", "-DLLAMA_BUILD_APP=OFF",
)
"""The configure flags: a static binary, no web UI (and no download of a prebuilt one),
no HTTPS; GGML_NATIVE stays on (tuned to this CPU, as llama-cpp-python's own build)."""


def llama_cpp_version() -> str:
    """The installed llama-cpp-python version (whose vendored llama.cpp is built)."""
    from importlib.metadata import version

    return version("llama-cpp-python")


def cache_dir() -> Path:
    """Where PAW keeps its llama-server build (`PAW_CACHE`, else ~/.cache/paw)."""
    root = os.environ.get("PAW_CACHE") or os.path.join(Path.home(), ".cache", "paw")
    return Path(root) / "llama-server" / llama_cpp_version()


def find_llama_server(explicit: str | None = None) -> str | None:
    """The llama-server binary to use, or None when there is none.

    Raises:
        UserError: `explicit` (or PAW_LLAMA_SERVER) names a file that is not there.
    """
    for source, path in (("--llama-server", explicit),
                         ("PAW_LLAMA_SERVER", os.environ.get("PAW_LLAMA_SERVER"))):
        if path:
            if not os.access(path, os.X_OK):
                raise UserError(f"{source}: {path} is not an executable llama-server")
            return path
    on_path = shutil.which("llama-server")
    if on_path:
        return on_path
    built = cache_dir() / "llama-server"
    return str(built) if os.access(built, os.X_OK) else None


def build_llama_server(jobs: int | None = None, log: Path | None = None, *,
                       force: bool = False) -> tuple[Path, float]:
    """Build llama-server from the llama-cpp-python source package into `cache_dir()`.

    Args:
        jobs: parallel compile jobs (default: the cores).
        log: where the tools' output goes (default: build.log beside the binary).
        force: build again even when the cache folder already holds a binary (otherwise
            that binary is returned at once, with 0 seconds: the test set-up runs this
            every time).

    Returns:
        (the binary, seconds the build took).

    Raises:
        UserError: pip, cmake or a compiler is missing, or a step failed (see the log).
    """
    import tarfile
    import tempfile

    for tool in ("cmake", "c++"):
        if shutil.which(tool) is None:
            raise UserError(f"building llama-server needs {tool} (and a C++17 compiler)")
    dest = cache_dir()
    if not force and os.access(dest / "llama-server", os.X_OK):
        return dest / "llama-server", 0.0
    dest.mkdir(parents=True, exist_ok=True)
    log = log or dest / "build.log"
    started = time.perf_counter()
    version = llama_cpp_version()
    with tempfile.TemporaryDirectory(prefix="paw-llama-server-") as tmp, \
            open(log, "w", encoding="utf-8") as out:
        _step(out, log, [sys.executable, "-m", "pip", "download", "--no-deps",
                         "--no-binary", ":all:", f"llama-cpp-python=={version}", "-d", tmp])
        archive = next(Path(tmp).glob("llama_cpp_python-*.tar.gz"))
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
        source = next(Path(tmp).glob("llama_cpp_python-*/vendor/llama.cpp"))
        build = Path(tmp) / "build"
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        _step(out, log, ["cmake", "-S", str(source), "-B", str(build), *generator,
                         *CMAKE_FLAGS])
        _step(out, log, ["cmake", "--build", str(build), "--target", "llama-server",
                         "-j", str(jobs or os.cpu_count() or 1)])
        binary = build / "bin" / "llama-server"
        shutil.copy2(binary, dest / "llama-server")
    return dest / "llama-server", time.perf_counter() - started


def _step(out: TextIO, log: Path, command: list[str]) -> None:
    out.write("$ " + " ".join(command) + "\n")
    out.flush()
    done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, check=False)
    if done.returncode != 0:
        raise UserError(f"building llama-server: `{command[0]} {command[1]}` failed "
                        f"(exit {done.returncode}); see {log}")


def server_command(binary: str, model_path: str, *, host: str, port: int, threads: int,
                   ctx: int, parallel: int, gpu_layers: int, extra_buffers: bool,
                   api_key: str | None = None) -> list[str]:
    """The llama-server command line PAW starts: `-c` is the total context, so each of the
    `-np` slots holds `ctx` tokens; flash attention off and a 512-token batch as the
    in-process engine; `--no-repack` where the in-process engine avoids extra buffers (AMX).
    """
    command = [binary, "-m", model_path, "--host", host, "--port", str(port),
               "-t", str(threads), "-tb", str(threads), "-c", str(ctx * parallel),
               "-np", str(parallel), "-ngl", str(gpu_layers), "-b", "512", "-ub", "512",
               "-fa", "off", "--no-webui", "--log-disable"]
    if not extra_buffers:
        command.append("--no-repack")
    if api_key:
        command += ["--api-key", api_key]
    return command
