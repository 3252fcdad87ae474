"""A local pool of llama.cpp servers: N `llama-server` or `llama_cpp.server` processes here.

Used by `paw serve` and by the tests. Each process serves one model on its own port of the
loopback address (or `--host`): llama.cpp's C++ `llama-server` with `parallel` slots of
`ctx` tokens each (`engine="llama-server"`), or llama-cpp-python's `llama_cpp.server`, one
request at a time (`engine="python"`); `ServerPoolBackend` spreads an audit's items over
them. For a pool across machines, run `paw serve --host 0.0.0.0` (or the server itself) on
each machine and give the auditor's PAW the list of URLs.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from store.errors import UserError

ENGINES = ("llama-server", "python")
"""`paw serve --engine`: llama.cpp's C++ server, or llama-cpp-python's."""

SERVER_PACKAGES = ("fastapi", "uvicorn", "sse_starlette", "starlette_context",
                   "pydantic_settings")
"""What `llama-cpp-python[server]` adds; `paw-workbench[server]` installs it."""


def check_server_installed() -> None:
    """Raise a one-line UserError naming the install command if the server extra is missing."""
    missing = [name for name in SERVER_PACKAGES if importlib.util.find_spec(name) is None]
    if missing:
        raise UserError(f"the llama.cpp server needs {', '.join(missing)}: "
                        "pip install 'paw-workbench[server]' "
                        "(llama-cpp-python's [server] extra)")


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


@dataclass
class LocalPool:
    """Running server processes and their base URLs; `close()` (or `with`) stops them."""

    urls: list[str]
    processes: list[subprocess.Popen] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)
    commands: list[list[str]] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    api_key: str | None = None

    def restart(self, k: int) -> None:
        """Start server `k` again with its command line (its log is appended to)."""
        with open(self.logs[k], "ab") as handle:
            self.processes[k] = subprocess.Popen(self.commands[k], stdout=handle,
                                                 stderr=subprocess.STDOUT, env=self.env)

    def ready(self, k: int) -> bool:
        """Whether server `k` answers (`/health`, or 401 with an API key)."""
        return is_up(self.urls[k]) or bool(self.api_key and _answers(self.urls[k]))

    def __enter__(self) -> LocalPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop every server (SIGTERM, then SIGKILL after 10 s)."""
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def is_up(base_url: str, timeout: float = 2.0) -> bool:
    """Whether the server answers `GET /health` (llama-server) or `GET /v1/models` with 200."""
    import urllib.error
    import urllib.request

    for path in ("/health", "/v1/models"):
        try:
            with urllib.request.urlopen(base_url + path, timeout=timeout) as reply:
                if reply.status == 200:
                    return True
        except (urllib.error.URLError, OSError, ValueError):
            continue
    return False


def start_pool(model_path: str, count: int = 2, *, engine: str = "python",
               host: str = "127.0.0.1", port: int | None = None, threads: int = 1,
               ctx: int = 4096, parallel: int = 1, gpu_layers: int = 0,
               log_dir: str | Path | None = None, timeout_s: float = 300.0,
               binary: str | None = None, api_key: str | None = None,
               extra_args: tuple[str, ...] = ()) -> LocalPool:
    """Start `count` servers of one model and wait until each answers.

    Args:
        model_path: the GGUF file.
        count: servers to start.
        engine: "llama-server" (llama.cpp's C++ server) or "python" (llama_cpp.server).
        host: address to listen on (127.0.0.1: this machine only).
        port: the first port (the others follow); default: free ports.
        threads: CPU threads per server (on one machine, servers × threads ≤ cores).
        ctx: context of one request (one slot) in tokens.
        parallel: llama-server slots per server (`-np`; its `-c` is ctx × parallel).
        gpu_layers: layers offloaded to a GPU.
        log_dir: where each server's output goes (default: a temporary folder).
        timeout_s: how long to wait for the servers to load.
        binary: the llama-server executable (default: `find_llama_server()`).
        api_key: llama-server `--api-key`.
        extra_args: more arguments for each server (e.g. sampler defaults, in tests).

    Raises:
        UserError: the server is not installed, or a server exited or did not answer.
    """
    import tempfile

    from workbench.models.backend import use_extra_buffers

    if engine not in ENGINES:
        raise UserError(f"--engine: {engine!r} is not one of {', '.join(ENGINES)}")
    server_binary = ""  # the llama-server executable (engine llama-server)
    if engine == "python":
        check_server_installed()
    else:
        from workbench.models.llama_server import find_llama_server

        found = binary or find_llama_server()
        if found is None:
            raise UserError("no llama-server binary: build one with `paw serve "
                            "--build-llama-server`, or set PAW_LLAMA_SERVER=PATH "
                            "(docs/runner.md, \"Getting llama-server\")")
        server_binary = found
    folder = Path(log_dir) if log_dir else Path(tempfile.mkdtemp(prefix="paw-serve-"))
    folder.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE"),
           "PYTHONPATH": os.pathsep.join(
               [str(Path(__file__).resolve().parents[2]), os.environ.get("PYTHONPATH", "")])}
    pool = LocalPool(urls=[], env=env, api_key=api_key)
    try:
        for k in range(count):
            chosen = port + k if port is not None else free_port(host)
            log = folder / f"server-{chosen}.log"
            if engine == "python":
                command = [sys.executable, "-m", "workbench.models.serve_worker",
                           "--model", str(model_path), "--host", host, "--port", str(chosen),
                           "--n_ctx", str(ctx), "--n_threads", str(threads),
                           "--n_threads_batch", str(threads), "--n_gpu_layers",
                           str(gpu_layers), "--logits_all", "true", "--verbose", "false"]
                if api_key:
                    command += ["--api_key", api_key]
            else:
                from workbench.models.llama_server import server_command

                command = server_command(server_binary, str(model_path), host=host,
                                         port=chosen, threads=threads, ctx=ctx,
                                         parallel=parallel, gpu_layers=gpu_layers,
                                         extra_buffers=use_extra_buffers(), api_key=api_key)
            command += list(extra_args)
            pool.commands.append(command)
            with open(log, "wb") as handle:
                pool.processes.append(subprocess.Popen(command, stdout=handle,
                                                       stderr=subprocess.STDOUT, env=env))
            pool.logs.append(log)
            shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
            pool.urls.append(f"http://{shown}:{chosen}")
        deadline = time.monotonic() + timeout_s
        waiting = list(range(count))
        while waiting:
            for k in list(waiting):
                if pool.processes[k].poll() is not None:
                    tail = pool.logs[k].read_text(errors="replace").strip().splitlines()[-1:]
                    raise UserError(f"server {pool.urls[k]} exited: "
                                    f"{tail[0] if tail else 'no output'} (log {pool.logs[k]})")
                if is_up(pool.urls[k]) or (api_key and _answers(pool.urls[k])):
                    waiting.remove(k)
            if waiting and time.monotonic() > deadline:
                raise UserError(f"servers {[pool.urls[k] for k in waiting]} did not answer "
                                f"within {timeout_s:.0f} s (logs in {folder})")
            if waiting:
                time.sleep(0.5)
    except BaseException:
        pool.close()
        raise
    return pool


def _answers(base_url: str) -> bool:
    """Whether a server with an API key is up: it answers 401 rather than not at all."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(base_url + "/v1/models", timeout=2.0):
            return True
    except urllib.error.HTTPError as exc:
        return exc.code in (401, 403)
    except (urllib.error.URLError, OSError, ValueError):
        return False


RESTART_BACKOFF_S = (1.0, 2.0, 4.0, 8.0, 16.0, 30.0)
"""Waits before restarting a server that died (the last repeats); a server that stayed up
for `STABLE_AFTER_S` starts again from the first."""

STABLE_AFTER_S = 60.0


@dataclass
class Supervisor:
    """Keeps a `LocalPool`'s servers up: `step()` (called about once a second by `paw
    serve`) restarts a server that exited, after a back-off, and reports when it is ready.

    Attributes:
        say: receives one line per event (exit, restart, ready, give-up).
        clock: the time source (tests pass one).
    """

    pool: LocalPool
    say: Callable[[str], None]
    clock: Callable[[], float] = time.monotonic
    deaths: dict[int, int] = field(default_factory=dict)
    due: dict[int, float] = field(default_factory=dict)
    waiting: dict[int, float] = field(default_factory=dict)
    started: dict[int, float] = field(default_factory=dict)

    def step(self) -> None:
        """Look at every server once."""
        now = self.clock()
        for k, process in enumerate(self.pool.processes):
            url = self.pool.urls[k]
            if process.poll() is None:
                if k in self.waiting and self.pool.ready(k):
                    self.say(f"server {url} is ready again (after "
                             f"{now - self.waiting.pop(k):.1f} s)")
                    self.started[k] = now
                if k in self.started and now - self.started[k] >= STABLE_AFTER_S:
                    self.deaths.pop(k, None)  # stable: the next death waits the least
                    self.started.pop(k)
                continue
            if k not in self.due:
                deaths = self.deaths[k] = self.deaths.get(k, 0) + 1
                wait = RESTART_BACKOFF_S[min(deaths, len(RESTART_BACKOFF_S)) - 1]
                self.due[k] = now + wait
                self.waiting.pop(k, None)
                self.say(f"server {url} exited (code {process.returncode}; log "
                         f"{self.pool.logs[k]}); restarting it in {wait:.0f} s")
            elif now >= self.due[k]:
                self.due.pop(k)
                self.pool.restart(k)
                self.waiting[k] = now
                self.say(f"server {url} restarted (pid {self.pool.processes[k].pid}); "
                         "waiting for it to load")
