"""A model file changed in place is caught before its generations are stored under the old
hash: size, mtime, ctime and inode are compared with the state last hashed, else a full hash."""

from __future__ import annotations

import os
import shutil

import pytest

from store.errors import UserError
from workbench.models import registry
from workbench.models.registry import check_model_file, embedded_model_path, register_model


@pytest.fixture
def model_copy(db, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(registry, "_VERIFIED", {})
    path = tmp_path / "m.gguf"
    shutil.copyfile(embedded_model_path(), path)
    return register_model(db, path, "m"), path


def test_an_unchanged_file_is_not_rehashed(model_copy, monkeypatch):
    model, _ = model_copy
    registry._VERIFIED.clear()  # a new process: only the memo written at registration
    monkeypatch.setattr(registry, "sha256_file", lambda path: pytest.fail("re-hashed"))
    check_model_file(model)


def test_an_edit_keeping_size_and_mtime_is_caught(db, model_copy):
    model, path = model_copy
    stat = path.stat()
    with path.open("r+b") as handle:  # flip one byte in the middle of the weights
        handle.seek(stat.st_size // 2)
        byte = handle.read(1)
        handle.seek(stat.st_size // 2)
        handle.write(bytes([byte[0] ^ 0xFF]))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # mtime put back; ctime moved
    assert path.stat().st_size == stat.st_size and path.stat().st_mtime_ns == stat.st_mtime_ns
    with pytest.raises(UserError, match="changed since it was registered"):
        check_model_file(model)
    with pytest.raises(UserError, match="changed since it was registered"):
        register_model(db, path, "m")  # same place and size is not the same file


def test_a_touched_but_identical_file_passes_after_one_full_hash(model_copy, monkeypatch):
    model, path = model_copy
    os.utime(path)  # mtime changes, content does not
    calls = []
    real = registry.sha256_file
    monkeypatch.setattr(registry, "sha256_file", lambda p: calls.append(p) or real(p))
    check_model_file(model)
    check_model_file(model)
    assert len(calls) == 1
