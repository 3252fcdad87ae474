"""GPU offload: `--gpu-layers` through both back-ends, on a GPU build only (skipped otherwise).

llama-cpp-python is CPU-only unless it was built with a GPU backend
(`CMAKE_ARGS="-DGGML_CUDA=on"`, `-DGGML_METAL=on`, …; docs/runner.md, "GPU"). Without one
these tests are skipped with that reason; nothing is simulated.
"""

from __future__ import annotations

import pytest

from store import open_db
from store.generations import get_generations
from store.models import model_metadata
from tests.models.conftest import add_vignettes
from workbench.models import GenerationRequest, Runner, Sampler, default_model
from workbench.models.backend import LlamaCppBackend

pytestmark = pytest.mark.model


def _gpu_build() -> bool:
    import llama_cpp

    return bool(llama_cpp.llama_supports_gpu_offload())


needs_gpu = pytest.mark.skipif(
    not _gpu_build(), reason="this llama-cpp-python build has no GPU backend "
    "(rebuild with CMAKE_ARGS=\"-DGGML_CUDA=on\" or \"-DGGML_METAL=on\")")


def _requests(items):
    return [GenerationRequest(item=i, mode=mode, template=template,
                              sampler=Sampler(max_tokens=tokens))
            for i in items for mode, template, tokens in
            (("cot", "neutral_cot@1", 32), ("direct", "direct@1", 4))]


@needs_gpu
def test_in_process_offload_generates_and_checks_batching() -> None:
    db = open_db(memory=True)
    items = add_vignettes(db)
    model = default_model(db)
    backend = LlamaCppBackend(model.path, context_length=model.context_length, gpu_layers=-1)
    try:
        runner = Runner(db, model, backend=backend, gpu_layers=-1)
        summary = runner.run(_requests(items))
        assert summary.generated == 6 and summary.errors == 0
        for gen in get_generations(db, summary.keys).values():
            assert sum(gen.option_probs.values()) == pytest.approx(1.0, abs=1e-9)
        # The batching verdict on the GPU is its own (kernels differ from the CPU's).
        assert runner.batch_verdict is not None
        assert model_metadata(db, model.id)["batch_check"]["gpu_layers"] == -1
    finally:
        backend.close()


@needs_gpu
def test_server_pool_offload(tmp_path) -> None:
    pytest.importorskip("fastapi", reason="the server extra is not installed")
    from workbench.models.pool import start_pool
    from workbench.models.server import ServerPoolBackend

    db = open_db(memory=True)
    items = add_vignettes(db)
    model = default_model(db)
    with start_pool(model.path, 1, gpu_layers=-1, log_dir=tmp_path) as pool:
        summary = Runner(db, model, backend=ServerPoolBackend(model, pool.urls)).run(
            _requests(items))
    assert summary.generated == 6 and summary.errors == 0
