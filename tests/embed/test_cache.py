"""embed_texts: vectors cached by (embedder, version, text hash), duplicates once, TF-IDF never."""

from __future__ import annotations

import numpy as np
import pytest

from store.errors import UserError
from workbench.embed import Embedder, embed_texts, get_embedder, parse_embedders, text_sha256


class CountingEmbedder(Embedder):
    """A bag-of-letters embedder that records every text it is asked to embed."""

    id = "letters"
    version = "v1"
    batch_size = 2

    def __init__(self) -> None:
        self.name = "letters"
        self.seen: list[str] = []

    def _embed(self, texts):
        self.seen += texts
        return np.array([[t.count(c) for c in "abcde"] for t in texts], dtype=float)


def test_each_text_embedded_once_and_stored(db):
    emb = CountingEmbedder()
    texts = ["abc", "bcd", "abc", "eee", "bcd"]
    first = embed_texts(db, emb, texts)
    assert emb.seen == ["abc", "bcd", "eee"]  # duplicates embedded once, in first-seen order
    assert first.shape == (5, 5) and first.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0, rtol=1e-6)
    np.testing.assert_array_equal(first[0], first[2])
    # "abc" -> (1,1,1,0,0)/sqrt(3)
    np.testing.assert_allclose(first[0], np.array([1, 1, 1, 0, 0]) / np.sqrt(3), rtol=1e-6)
    assert db.execute("SELECT COUNT(*) FROM text_embeddings").fetchone()[0] == 3

    again = embed_texts(db, emb, ["eee", "abc"])
    assert emb.seen == ["abc", "bcd", "eee"]  # nothing embedded twice
    np.testing.assert_array_equal(again, first[[3, 0]])


def test_cache_key_is_embedder_version_and_text_hash(db):
    emb = CountingEmbedder()
    embed_texts(db, emb, ["abc"])
    row = db.execute("SELECT embedder, version, text_sha256, dim FROM text_embeddings").fetchone()
    assert row == ("letters", "v1", text_sha256("abc"), 5)
    emb.version = "v2"  # another version of the embedder does not reuse v1's vectors
    embed_texts(db, emb, ["abc"])
    assert emb.seen == ["abc", "abc"]


def test_empty_text_is_the_zero_vector(db):
    emb = CountingEmbedder()
    vectors = embed_texts(db, emb, ["", "abc", "   "])
    assert emb.seen == ["abc"]
    assert not vectors[0].any() and not vectors[2].any()


def test_progress_reports_batches(db):
    calls = []
    embed_texts(db, CountingEmbedder(), ["a", "b", "c"], on_progress=lambda d, t: calls.append((d, t)))
    assert calls == [(2, 3), (3, 3)]


def test_tfidf_by_hand_and_not_stored(db):
    emb = get_embedder("tfidf", db)
    vectors = embed_texts(db, emb, ["cat dog", "cat fish"])
    # smooth idf = ln((1 + n)/(1 + df)) + 1, n = 2: idf(cat) = 1, idf(dog) = idf(fish) =
    # ln(3/2) + 1 = 1.405465; doc 1 = (cat 1, dog 1.405465, fish 0) / sqrt(2.975332)
    # = (1, 1.405465, 0) / 1.724915 = (0.579739, 0.814802, 0); cos = 0.579739^2 = 0.336097.
    np.testing.assert_allclose(sorted(vectors[0]), [0.0, 0.579739, 0.814802], atol=1e-6)
    assert float(vectors[0] @ vectors[1]) == pytest.approx(0.336097, abs=1e-6)
    assert db.execute("SELECT COUNT(*) FROM text_embeddings").fetchone()[0] == 0


def test_tfidf_with_no_word_gives_zero_vectors(db):
    vectors = embed_texts(db, get_embedder("tfidf", db), ["!", "?"])
    assert vectors.shape[0] == 2 and not vectors.any()


@pytest.mark.parametrize("spec", ["bogus", "llama", "minilm:x", "tfidf:2", ""])
def test_bad_specs_are_one_line_errors(spec):
    with pytest.raises(UserError, match="--embedders"):
        parse_embedders(spec if spec else ",")


def test_parse_keeps_order_and_drops_duplicates():
    assert parse_embedders("tfidf, llama:default:last,tfidf") == ("tfidf", "llama:default:last")


def test_llama_embedder_of_an_unknown_model_is_a_user_error(db):
    from store.errors import NotFound

    with pytest.raises((UserError, NotFound), match="nosuchmodel"):
        get_embedder("llama:nosuchmodel", db)


def test_llama_pooling_must_be_known(db):
    with pytest.raises(UserError, match="pooling"):
        get_embedder("llama:default:max", db)
