"""Domain records shared by every package: frozen dataclasses mirroring store rows."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

ItemKind = Literal["mcq", "binary"]


@dataclass(frozen=True)
class Item:
    """One question: multiple choice (labels A..E) or binary (labels Yes/No[/Maybe]).

    `options` keeps the display order; its keys are the answer labels the runner reads
    the option distribution over, and `gold` is one of them.
    """

    source_id: str
    kind: ItemKind
    question: str
    options: dict[str, str]
    gold: str
    context: str | None = None
    subject: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    source_line: int | None = None
    id: int | None = None
    dataset_id: int | None = None

    @property
    def labels(self) -> tuple[str, ...]:
        """Answer labels in display order (e.g. ('A','B','C','D') or ('Yes','No'))."""
        return tuple(self.options)


@dataclass(frozen=True)
class ModelRecord:
    """A registered model file (GGUF) and what its metadata says about it."""

    id: int
    name: str
    path: str
    sha256: str
    backend: str = "llama_cpp"
    size_bytes: int | None = None
    architecture: str | None = None
    quantization: str | None = None
    context_length: int | None = None
    chat_template: str | None = None
    prefix_cache_safe: bool = True
