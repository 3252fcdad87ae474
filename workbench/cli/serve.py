"""`paw serve`: start a local pool of llama.cpp servers for `paw run --servers` / `PAW_SERVERS`."""

from __future__ import annotations

import click

from workbench.cli.options import db_option, open_store, whole


@click.command("serve")
@click.option("--model", "model_name", default="default", show_default=True,
              help="Registered model name (see `paw models`).")
@click.option("--servers", "count", type=whole(1), default=2, show_default=True,
              help="Server processes to start.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; 0.0.0.0 lets other machines of your network in.")
@click.option("--port", type=click.IntRange(min=1, max=65535), default=8081,
              show_default=True, help="First port; the others follow.")
@click.option("--threads", type=whole(1), default=1, show_default=True,
              help="CPU threads per server (servers x threads should not exceed the cores).")
@click.option("--ctx", type=whole(64), default=4096, show_default=True,
              help="Context size of each server in tokens.")
@click.option("--gpu-layers", type=whole(-1), default=0, show_default=True,
              help="Layers to offload to a GPU (-1: all).")
@db_option
def serve_command(model_name: str, count: int, host: str, port: int, threads: int, ctx: int,
                  gpu_layers: int, db_path: str) -> None:
    """Start N llama.cpp servers (python -m llama_cpp.server) of one model; Ctrl-C stops them.

    Prints the pool's URLs. Point an audit at them with PAW_SERVERS=URL,URL (or
    `paw run --servers URL,URL`): each item's requests go to one server, a failed server's
    items move to the others, and everything is stored in this machine's SQLite file.
    Needs the server extra: pip install 'paw-workbench[server]'.
    """
    import time

    from workbench.models.pool import start_pool
    from workbench.models.registry import check_model_file, resolve_model

    db = open_store(db_path)
    model = resolve_model(db, model_name)
    check_model_file(model)
    click.echo(f"starting {count} server(s) of {model.name} ...", err=True)
    with start_pool(model.path, count, host=host, port=port, threads=threads, ctx=ctx,
                    gpu_layers=gpu_layers) as pool:
        for url, log in zip(pool.urls, pool.logs):
            click.echo(f"{url}\t(log {log})")
        click.echo(f"PAW_SERVERS={','.join(pool.urls)}")
        click.echo("serving; Ctrl-C stops the servers", err=True)
        try:
            while pool.alive():
                time.sleep(1.0)
            click.echo("paw: a server exited; stopping the pool", err=True)
        except KeyboardInterrupt:
            pass


commands = [serve_command]
