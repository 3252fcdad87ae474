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
        # One text alone gives the vector it got among others, bit for bit.
        alone = embedder.embed([TEXTS[1]])
        np.testing.assert_array_equal(alone[0], vectors[1])
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


SHORT = "Hi."
LONG = " ".join(["Severe abdominal pain radiating to the back suggests acute pancreatitis."]
                * 30)  # about 450 tokens


def test_a_vector_does_not_depend_on_what_was_embedded_before(db, tmp_path):
    # Before: within one llama.cpp call, the vector of TEXTS[0] moved by 1.2e-7 after a
    # short text and by 0.086 after a long one, so a cached vector depended on which run
    # embedded the text first. Now: bit-identical first, after a short text, after a long
    # one, in one batch or across calls, and from a fresh model load.
    text = TEXTS[0]
    with get_embedder("llama:default", db, threads=1) as embedder:
        first = embedder.embed([text])[0]
        after_short = embedder.embed([SHORT, text])[1]
        after_long = embedder.embed([LONG, text])[1]
        embedder.embed([LONG])
        next_call = embedder.embed([text])[0]
    for vector in (after_short, after_long, next_call):
        np.testing.assert_array_equal(vector, first)
    # Through the cache: two stores that meet the text in different company agree.
    from store import open_db

    one, two = open_db(tmp_path / "one.db"), open_db(tmp_path / "two.db")
    with get_embedder("llama:default", one, threads=1) as a, \
            get_embedder("llama:default", two, threads=1) as b:
        np.testing.assert_array_equal(embed_texts(one, a, [LONG, SHORT, text])[2],
                                      embed_texts(two, b, [text, LONG])[0])
