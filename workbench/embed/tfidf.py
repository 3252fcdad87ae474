"""TF-IDF embedder (scikit-learn): fitted on the texts of each call, never cached.

A TF-IDF vector depends on the whole corpus it was fitted on (the vocabulary and every
inverse document frequency), so the same text gets a different vector in another corpus.
Storing it would need the corpus in the cache key; fitting is cheap (milliseconds for the
2k texts of a DBPA test), so PAW refits on every call and stores nothing. DBPA calls it
once per test on the pooled 2k outputs of both conditions: the fit never sees which
condition a text came from, so the permutation null stays exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from workbench.embed.base import Embedder

if TYPE_CHECKING:
    import numpy as np

TFIDF_SETTINGS = {"lowercase": True, "ngram_range": (1, 1), "norm": "l2", "smooth_idf": True,
                  "sublinear_tf": False}
"""scikit-learn's `TfidfVectorizer` defaults, spelt out: they are part of the method."""


class TfidfEmbedder(Embedder):
    """TF-IDF over word unigrams, fitted on the texts passed to one `embed` call."""

    id = "tfidf"
    cacheable = False

    def __init__(self, name: str = "tfidf") -> None:
        import sklearn

        self.name = name
        self.version = f"sklearn={sklearn.__version__};" + ";".join(
            f"{k}={v}" for k, v in sorted(TFIDF_SETTINGS.items()))
        self.description = ("TF-IDF (scikit-learn TfidfVectorizer defaults: word unigrams, "
                            "lowercase, smooth idf, L2 norm), fitted on the texts of each "
                            "call (in DBPA: the pooled 2k outputs of one test)")

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Fit on all of `texts` at once (one corpus) and return their L2-normalised rows."""
        import numpy as np

        from workbench.embed.base import l2_normalise

        texts = list(texts)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return l2_normalise(self._embed(texts))

    def _embed(self, texts: list[str]) -> np.ndarray:
        import numpy as np
        from sklearn.feature_extraction.text import TfidfVectorizer

        try:
            matrix = TfidfVectorizer(**TFIDF_SETTINGS).fit_transform(texts)
        except ValueError:  # empty vocabulary: no text has a word token
            return np.zeros((len(texts), 1), dtype=np.float32)
        return matrix.toarray().astype(np.float32)
