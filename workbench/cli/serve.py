"""`paw serve`: start a local pool of llama.cpp servers for `--servers` / `PAW_SERVERS`."""

from __future__ import annotations

import click

from workbench.cli.options import db_option, open_store, whole


@click.command("serve")
@click.option("--model", "model_name", default="default", show_default=True,
              help="Registered model name (see `paw models`).")
@click.option("--engine", type=click.Choice(["llama-server", "python"]),
              default="llama-server", show_default=True,
              help="llama.cpp's C++ llama-server, or llama-cpp-python's llama_cpp.server "
                   "(one request at a time; needs the [server] extra).")
@click.option("--servers", "count", type=whole(1), default=2, show_default=True,
              help="Server processes to start.")
@click.option("--parallel", type=whole(1), default=1, show_default=True,
              help="llama-server slots per server (-np); 1 is serial and reproducible, more "
                   "decode several requests in one batch (docs/runner.md).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; 0.0.0.0 lets other machines of your network in.")
@click.option("--port", type=click.IntRange(min=1, max=65535), default=8081,
              show_default=True, help="First port; the others follow.")
@click.option("--threads", type=whole(1), default=1, show_default=True,
              help="CPU threads per server (servers x threads should not exceed the cores).")
@click.option("--ctx", type=whole(64), default=4096, show_default=True,
              help="Context of one request (one slot) in tokens; llama-server gets "
                   "-c ctx x parallel.")
@click.option("--gpu-layers", type=whole(-1), default=0, show_default=True,
              help="Layers to offload to a GPU (-1: all).")
@click.option("--api-key", envvar="PAW_SERVER_API_KEY",
              help="Require this key from clients (PAW sends it with --api-key too).")
@click.option("--llama-server", "binary", type=click.Path(dir_okay=False),
              help="The llama-server executable (default: PAW_LLAMA_SERVER, PATH, or PAW's "
                   "own build).")
@click.option("--build-llama-server", "build", is_flag=True,
              help="Build llama-server from the llama-cpp-python source package (pip "
                   "fetches it) into PAW's cache folder, print its path, and exit.")
@click.option("--restart/--no-restart", default=True, show_default=True,
              help="Restart a server that dies (back-off 1, 2, 4, ... 30 s) and say when "
                   "it is ready again; --no-restart leaves it down.")
@db_option
def serve_command(model_name: str, engine: str, count: int, parallel: int, host: str,
                  port: int, threads: int, ctx: int, gpu_layers: int, api_key: str | None,
                  binary: str | None, build: bool, restart: bool, db_path: str) -> None:
    """Start N llama.cpp servers of one model; Ctrl-C or SIGTERM stops them.

    Prints the pool's URLs. Point an audit at them with PAW_SERVERS=URL,URL (or
    `--servers URL,URL`): each item's requests go to one server, every slot is kept busy,
    a failed server's items move to the others, and everything is stored in this
    machine's SQLite file.
    """
    import signal
    import time

    from workbench.models.pool import Supervisor, start_pool
    from workbench.models.registry import check_model_file, resolve_model

    if build:
        from workbench.models.llama_server import build_llama_server, cache_dir

        if not (cache_dir() / "llama-server").exists():
            click.echo("building llama-server (minutes; the log is beside the binary) ...",
                       err=True)
        path, seconds = build_llama_server()
        click.echo(f"{path}\t" + (f"(built in {seconds:.0f} s)" if seconds else
                                   "(already built; delete it to build again)"))
        return
    db = open_store(db_path)
    model = resolve_model(db, model_name)
    check_model_file(model)

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt  # SIGTERM stops the pool as Ctrl-C does

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        click.echo(f"starting {count} {engine} server(s) of {model.name} ...", err=True)
        with start_pool(model.path, count, engine=engine, host=host, port=port,
                        threads=threads, ctx=ctx, parallel=parallel, gpu_layers=gpu_layers,
                        binary=binary, api_key=api_key) as pool:
            for url, log, process in zip(pool.urls, pool.logs, pool.processes, strict=True):
                click.echo(f"{url}\t(pid {process.pid}, log {log})")
            click.echo(f"PAW_SERVERS={','.join(pool.urls)}")
            click.echo("serving; Ctrl-C stops the servers", err=True)
            try:
                if restart:
                    supervisor = Supervisor(pool, lambda line: click.echo(f"paw: {line}",
                                                                          err=True))
                    while True:
                        supervisor.step()
                        time.sleep(1.0)
                reported: set[int] = set()
                while any(p.poll() is None for p in pool.processes):
                    for k, process in enumerate(pool.processes):
                        if process.poll() is not None and k not in reported:
                            reported.add(k)  # the others go on serving
                            click.echo(f"paw: server {pool.urls[k]} exited (code "
                                       f"{process.returncode}; log {pool.logs[k]})", err=True)
                    time.sleep(1.0)
                click.echo("paw: every server exited", err=True)
            except KeyboardInterrupt:
                click.echo("paw: stopping the servers", err=True)
    finally:
        signal.signal(signal.SIGTERM, previous)


commands = [serve_command]
