"""How the in-process engine spends the cores: decoders × threads each × sequences per decoder.

On a CPU, one 1-thread batch decoder per core: llama.cpp's threads meet at a barrier after
every operation, and a small model's decode step is too short to amortise it, while two
contexts on one model share nothing but the read-only weights. Measured on the 2-core
reference machine with the embedded model (docs/runner.md, `bench/engine_limit.py
--rates-only`): one context with 2 threads decodes a single sequence about half as fast as
with 1 thread and gains little at width 8, where two 1-thread contexts decode ~1.7× one.
With a GPU doing the work, one decoder with every thread.

`PAW_DECODERS=N` overrides the number of decoders (the cores are then split between them);
the memory the decoders' KV caches need caps it (`decoders_that_fit`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from store.errors import UserError

MEMORY_SHARE = 0.5
"""Of the memory available now, the most the decoders' KV caches may take."""

MIN_CELLS = 2048
"""KV cells per sequence a decoder is made with at least (at most the context): one size
serves every stage of an audit, so the prompts cached in stage 1 are still there for the
F-block and the judge (a decoder that must grow is made anew, and loses them)."""


def decoder_cells(need: int, n_ctx: int) -> int:
    """Cells per sequence for decoders whose longest sequence needs `need`."""
    return max(need, min(n_ctx, MIN_CELLS))


@dataclass(frozen=True)
class Arrangement:
    """Decoders run at once, threads of each, and sequences each decodes per step."""

    decoders: int
    threads: int
    width: int

    @property
    def cores(self) -> int:
        """Cores kept busy."""
        return self.decoders * self.threads

    def describe(self) -> str:
        """For messages: '2 decoders × 1 thread × 8 sequences'."""
        d, t = self.decoders, self.threads
        return (f"{d} decoder{'s' * (d != 1)} × {t} thread{'s' * (t != 1)} × "
                f"{self.width} sequences")


def decoders_from_env() -> int | None:
    """`PAW_DECODERS` as a number of decoders, or None when unset.

    Raises:
        UserError: a value that is not a whole number ≥ 1.
    """
    value = os.environ.get("PAW_DECODERS", "").strip()
    if not value:
        return None
    if not value.isdigit() or int(value) < 1:
        raise UserError(f"PAW_DECODERS: expected a whole number of decoders ≥ 1, got {value!r}")
    return int(value)


def choose_arrangement(cores: int, width: int, *, gpu_layers: int = 0,
                       decoders: int | None = None) -> Arrangement:
    """The arrangement for `cores` cores and batch width `width`.

    Args:
        cores: cores to use (the `--threads` option, or the idle cores).
        width: sequences per decoder (`--batch`).
        gpu_layers: layers on a GPU (then one decoder with every thread).
        decoders: decoders wanted (default `PAW_DECODERS`, else one per core).
    """
    cores = max(1, cores)
    if gpu_layers:
        return Arrangement(1, cores, width)
    wanted = decoders or decoders_from_env() or cores
    count = max(1, min(wanted, cores))
    return Arrangement(count, max(1, cores // count), width)


def available_memory() -> int | None:
    """Bytes of memory available now (`MemAvailable` of /proc/meminfo), None if unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def decoders_that_fit(wanted: int, width: int, ctx_seq: int, bytes_per_cell: int,
                      available: int | None) -> int:
    """How many of `wanted` decoders' KV caches fit in `MEMORY_SHARE` of `available` (≥ 1).

    Each decoder holds `width` streams of `ctx_seq` cells of `bytes_per_cell` bytes
    (23 KB for the embedded model: 8 × 1,024 cells ≈ 190 MB; a 7–8B model ≈ 128 KB).
    """
    if available is None or bytes_per_cell <= 0:
        return wanted
    per_decoder = width * ctx_seq * bytes_per_cell
    return max(1, min(wanted, int(available * MEMORY_SHARE) // per_decoder))
