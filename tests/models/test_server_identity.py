"""Server identity by content (issue 36.1), on real server processes.

Two "other models" under the registered file's very name, each served for real:

- a one-layer model written with llama.cpp's `gguf` package under SmolLM2's own tokenizer
  (`tests/models/tiny_gguf.py`): same vocabulary, other parameter count and size;
- SmolLM2 itself with its final norm's weights halved (llama.cpp's `gguf` reader edits the
  copy in place): same vocabulary, parameter count and size, other weights — only the
  probe fingerprint can tell it.

Both are refused with both identities named; the genuine file under an alias is accepted.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from store import open_db
from store.errors import UserError
from tests.models.servers import llama_server_or_skip
from tests.models.tiny_gguf import write_tiny_model
from workbench.models import default_model
from workbench.models.identity import FLOOR
from workbench.models.pool import start_pool
from workbench.models.server import ServerPoolBackend

pytestmark = pytest.mark.model


def _model():
    return default_model(open_db(memory=True))


def _renamed_tiny(folder: Path, real: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return write_tiny_model(folder / real.name, "llama", tokenizer_from=real)


def _renamed_edited(folder: Path, real: Path) -> Path:
    import gguf
    import numpy as np

    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / real.name
    shutil.copyfile(real, copy)
    reader = gguf.GGUFReader(copy, "r+")
    norm = next(t for t in reader.tensors if t.name == "output_norm.weight")
    data = np.asarray(norm.data)
    data[...] = data * np.float32(0.5)
    del reader  # flush the memory map
    return copy


def test_renamed_other_models_are_refused_by_content_on_llama_cpp_server(tmp_path) -> None:
    model = _model()
    real = Path(model.path)
    for other, said in ((_renamed_tiny(tmp_path / "tiny", real), "after the probe prompt"),
                        (_renamed_edited(tmp_path / "edited", real), "after the probe prompt")):
        assert other.name == real.name and other.read_bytes() != real.read_bytes()
        with start_pool(str(other), 1, engine="python", threads=1,
                        log_dir=tmp_path / other.parent.name / "log") as served:
            with pytest.raises(UserError) as refused:
                ServerPoolBackend(model, served.urls)
        message = str(refused.value)
        assert "serves another model than 'default'" in message and said in message
        assert model.sha256[:12] in message and real.name in message


def test_the_genuine_file_under_an_alias_is_accepted(tmp_path) -> None:
    model = _model()
    with start_pool(model.path, 1, engine="python", threads=1, log_dir=tmp_path,
                    extra_args=("--model_alias", "clinic-model")) as served:
        backend = ServerPoolBackend(model, served.urls)
        try:
            assert backend.infos[served.urls[0]].model_ids == ("clinic-model",)
            assert backend.fingerprint_gap[served.urls[0]] <= FLOOR
        finally:
            backend.close()


def test_llama_server_reports_and_fingerprint_both_checked(tmp_path) -> None:
    binary = llama_server_or_skip()
    model = _model()
    real = Path(model.path)
    tiny = _renamed_tiny(tmp_path / "tiny", real)
    with start_pool(str(tiny), 1, engine="llama-server", threads=1, binary=binary,
                    log_dir=tmp_path / "t") as served, \
            pytest.raises(UserError, match="reports n_params \\d+ for .* has 134515008"):
        ServerPoolBackend(model, served.urls)
    edited = _renamed_edited(tmp_path / "edited", real)
    with start_pool(str(edited), 1, engine="llama-server", threads=1, binary=binary,
                    log_dir=tmp_path / "e") as served, \
            pytest.raises(UserError, match="after the probe prompt"):
        ServerPoolBackend(model, served.urls)
    with start_pool(model.path, 1, engine="llama-server", threads=1, binary=binary,
                    log_dir=tmp_path / "g", extra_args=("--alias", "clinic-model")) as served:
        backend = ServerPoolBackend(model, served.urls)
        assert backend.fingerprint_gap[served.urls[0]] <= FLOOR
        backend.close()
