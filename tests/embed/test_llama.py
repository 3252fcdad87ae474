"""llama.cpp embeddings of the embedded SmolLM2 GGUF: stated pooling, unit norm, cached."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.embed import embed_texts, get_embedder

pytestmark = pytest.mark.model

TEXTS = ["The patient has community-acquired pneumonia. Answer: A",
         "Severe abdominal pain suggests pancreatitis. Answer: B",
         "The patient has community-acquired pneumonia. Answer: A"]


def test_llama_embeddings_are_unit_vectors_and_cached(db):
    with get_embedder("llama:default", db, threads=1) as embedder:
        assert embedder.id == "llama.cpp"
        assert "pooling=mean" in embedder.version
        assert embedder.model.sha256 in embedder.version
        vectors = embed_texts(db, embedder, TEXTS)
        assert vectors.shape == (3, 576)  # SmolLM2-135M's embedding length
        np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
        np.testing.assert_array_equal(vectors[0], vectors[2])
        assert 0.0 < float(vectors[0] @ vectors[1]) < 0.9999
        # One text alone gives the vector it got among others (one sequence per decode).
        alone = embedder.embed([TEXTS[1]])
        assert np.abs(alone[0] - vectors[1]).max() < 1e-5
    assert db.execute("SELECT COUNT(*) FROM text_embeddings").fetchone()[0] == 2
    # A new embedder object finds every vector stored: the model is never loaded.
    again = get_embedder("llama:default", db)
    np.testing.assert_array_equal(embed_texts(db, again, TEXTS), vectors)
    assert again._llm is None


def test_last_token_pooling_is_another_version(db):
    with get_embedder("llama:default:last", db, threads=1) as last:
        mean = get_embedder("llama:default", db)
        assert last.version != mean.version and "pooling=last" in last.version
        vector = last.embed(TEXTS[:1])
        assert vector.shape == (1, 576)
        np.testing.assert_allclose(np.linalg.norm(vector), 1.0, rtol=1e-5)
