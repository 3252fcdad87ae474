"""One pool server: `python -m llama_cpp.server` with PAW's llama.cpp settings applied first.

`paw serve` starts one of these per endpoint. Arguments are llama_cpp.server's own
(`--model`, `--port`, `--n_ctx`, `--n_threads`, `--n_gpu_layers`, …). Before the server
loads its model this sets what `LlamaCppBackend` sets in-process: OpenMP threads that
sleep at barriers (`OMP_WAIT_POLICY=PASSIVE`), and no extra buffer types on CPUs with AMX,
where llama.cpp's AMX matmul crashed on batches of more than one token
(`workbench.models.backend.use_extra_buffers`).
"""

from __future__ import annotations

import contextlib
import os


def main() -> None:
    """Apply the settings, then hand over to llama_cpp.server's command line."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    from workbench.models.backend import model_params, use_extra_buffers

    settings = contextlib.ExitStack()
    settings.enter_context(model_params(use_extra_buffers()))  # for the server's lifetime
    from llama_cpp.server.__main__ import main as serve

    serve()


if __name__ == "__main__":
    main()
