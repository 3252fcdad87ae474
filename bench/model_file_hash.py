"""What hashing a model file on load costs: 5 GiB hashed vs read, side by side in one run.

Usage: .venv/bin/python bench/model_file_hash.py [SIZE_GIB] [DIR]

Writes a SIZE_GIB file (default 5) of random 64 MiB blocks in DIR (default /tmp), then
times, warm (page cache) and cold where the kernel lets us drop caches:
- reading it through (what llama.cpp's load must do at least once),
- `sha256_file` (what `check_model_file` runs when the file's state is not the one it
  last hashed to: no memo, or size/mtime/ctime/inode changed),
- `check_model_file` on an unchanged file in a new process (stat + the memo file).
Prints seconds and the hash/read ratio; deletes the file.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from store.records import ModelRecord  # noqa: E402
from workbench.models.gguf import sha256_file  # noqa: E402
from workbench.models import registry  # noqa: E402
from workbench.models.registry import _VERIFIED, check_model_file  # noqa: E402

BLOCK = 64 << 20


def _drop_caches() -> bool:
    try:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def _read_through(path: Path) -> None:
    with path.open("rb") as handle:
        while handle.read(8 << 20):
            pass


def _timed(fn, *args) -> float:
    started = time.perf_counter()
    fn(*args)
    return time.perf_counter() - started


def main(size_gib: float = 5.0, folder: str = tempfile.gettempdir()) -> None:
    os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="paw-bench-cache-")
    path = Path(folder) / "paw-bench-model.bin"
    block = os.urandom(BLOCK)
    n_blocks = int(size_gib * (1 << 30)) // BLOCK
    with path.open("wb") as out:
        for _ in range(n_blocks):
            out.write(block)
    size = path.stat().st_size
    try:
        digest = sha256_file(path)  # also warms the page cache
        model = ModelRecord(id=0, name="bench", path=str(path), sha256=digest, size_bytes=size)
        read_warm = _timed(_read_through, path)
        hash_warm = _timed(sha256_file, path)
        _VERIFIED.clear()
        registry._memo_file().unlink(missing_ok=True)
        check_no_memo = _timed(check_model_file, model)  # full hash, then remembered
        _VERIFIED.clear()  # as in a new process: only the memo file is left
        check_memo = _timed(check_model_file, model)
        print(f"file: {size / (1 << 30):.2f} GiB")
        print(f"warm: read {read_warm:.2f} s, sha256 {hash_warm:.2f} s "
              f"({size / hash_warm / 1e9:.2f} GB/s), hash/read {hash_warm / read_warm:.2f}x")
        print(f"check_model_file: no memo (full hash) {check_no_memo:.2f} s; unchanged file, "
              f"new process {check_memo * 1e3:.3f} ms")
        if _drop_caches():
            read_cold = _timed(_read_through, path)
            _drop_caches()
            hash_cold = _timed(sha256_file, path)
            print(f"cold: read {read_cold:.2f} s, sha256 {hash_cold:.2f} s, hash/read "
                  f"{hash_cold / read_cold:.2f}x")
        else:
            print("cold: not measured (cannot drop the page cache here)")
    finally:
        path.unlink(missing_ok=True)


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 5.0,
         sys.argv[2] if len(sys.argv) > 2 else tempfile.gettempdir())
