"""A local pool of llama.cpp servers: N `llama_cpp.server` processes on this machine.

Used by `paw serve` and by the tests. Each process serves one model on its own port of the
loopback address (or `--host`), one request at a time; `ServerPoolBackend` spreads an
audit's items over them. For a pool across machines, run `paw serve --host 0.0.0.0` (or
`python -m llama_cpp.server`) on each machine and give the auditor's PAW the list of URLs.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from store.errors import UserError
from workbench.models.server import is_up

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

    def __enter__(self) -> LocalPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def alive(self) -> bool:
        """Whether every process is still running."""
        return all(p.poll() is None for p in self.processes)

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


def start_pool(model_path: str, count: int = 2, *, host: str = "127.0.0.1",
               port: int | None = None, threads: int = 1, ctx: int = 4096,
               gpu_layers: int = 0, log_dir: str | Path | None = None,
               timeout_s: float = 300.0) -> LocalPool:
    """Start `count` servers of one model and wait until each answers.

    Args:
        model_path: the GGUF file.
        count: servers to start.
        host: address to listen on (127.0.0.1: this machine only).
        port: the first port (the others follow); default: free ports.
        threads: CPU threads per server (on one machine, servers × threads ≤ cores).
        ctx: context size of each server (the pool backend's `ctx` must match).
        gpu_layers: layers offloaded to a GPU (`--n_gpu_layers`).
        log_dir: where each server's output goes (default: a temporary folder).
        timeout_s: how long to wait for the servers to load.

    Raises:
        UserError: the server extra is missing, or a server exited or did not answer.
    """
    import tempfile

    check_server_installed()
    folder = Path(log_dir) if log_dir else Path(tempfile.mkdtemp(prefix="paw-serve-"))
    folder.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(Path(__file__).resolve().parents[2]), os.environ.get("PYTHONPATH", "")])}
    pool = LocalPool(urls=[])
    try:
        for k in range(count):
            chosen = port + k if port is not None else free_port(host)
            log = folder / f"server-{chosen}.log"
            command = [sys.executable, "-m", "workbench.models.serve_worker",
                       "--model", str(model_path), "--host", host, "--port", str(chosen),
                       "--n_ctx", str(ctx), "--n_threads", str(threads),
                       "--n_threads_batch", str(threads), "--n_gpu_layers", str(gpu_layers),
                       "--logits_all", "true", "--verbose", "false"]
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
                if is_up(pool.urls[k]):
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
