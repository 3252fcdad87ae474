"""EDD (§3.5) against hand computations on fixed vectors, and through the store."""

from __future__ import annotations

import math

import numpy as np
import pytest

from analysis.robustness.definitions import edd


def test_three_vectors_by_hand() -> None:
    # Normalised: e1 = (1, 0), e2 = (0, 1), e3 = (1, 1)/√2.
    # cos12 = 0, cos13 = 1/√2, cos23 = 1/√2; mean = (2/√2)/3 = √2/3 = 0.47140.
    # EDD = 1 − √2/3 = 0.52860.
    value = edd(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]))
    assert value == pytest.approx(1 - math.sqrt(2) / 3, abs=1e-12)
    assert value == pytest.approx(0.528595, abs=1e-6)


def test_seven_explanations_one_orthogonal_by_hand() -> None:
    # Baseline and five prefixes identical (e), one prefix orthogonal (f): of the 21 pairs,
    # C(6,2) = 15 have cosine 1 and 6 have cosine 0; mean = 15/21 = 5/7; EDD = 2/7.
    e, f = [3.0, 4.0, 0.0], [0.0, 0.0, 2.0]
    value = edd(np.array([e] * 6 + [f]))
    assert value == pytest.approx(2 / 7, abs=1e-12)


def test_edd_normalises_lengths_and_ignores_order() -> None:
    x = np.array([[1.0, 2.0, 0.5], [0.2, 1.0, 3.0], [2.0, 0.1, 0.1], [1.0, 1.0, 1.0]])
    scaled = x * np.array([[1.0], [10.0], [0.01], [7.0]])
    assert edd(scaled) == pytest.approx(edd(x), abs=1e-12)
    assert edd(x[::-1]) == pytest.approx(edd(x), abs=1e-12)
    assert edd(np.array([[2.0, 1.0]] * 7)) == pytest.approx(0.0, abs=1e-12)


def test_edd_matches_sklearn_cosine_similarity() -> None:
    from sklearn.metrics.pairwise import cosine_similarity

    rng = np.random.default_rng(3)
    x = rng.normal(size=(7, 384))
    sims = cosine_similarity(x)
    expected = 1 - sims[np.triu_indices(7, k=1)].mean()
    assert edd(x) == pytest.approx(expected, abs=1e-12)


def test_edd_edge_cases() -> None:
    assert math.isnan(edd(np.array([[0.0, 0.0], [1.0, 0.0]])))  # an empty vector
    with pytest.raises(ValueError):
        edd(np.array([[1.0, 0.0]]))  # one explanation has no pair
    assert edd(np.array([[1.0, 0.0], [-1.0, 0.0]])) == pytest.approx(2.0)  # opposite


# ---------------------------------------------------------------- through the store


def _scripted_run(db, make_engine, embedder):
    from tests.robustness.conftest import scripted
    from workbench.robustness import RobustnessSpec, run_robustness
    from workbench.robustness.edd import embed_explanations

    spec = RobustnessSpec(dataset="demo", models=("fake",), item_ids=("demo-003", "demo-001"),
                          judge="fake", embedder="fake-letters", max_tokens=64)
    return run_robustness(db, spec, engine=make_engine(scripted), embed=lambda d, plan, emit:
                          embed_explanations(d, plan.audit.id, "fake-letters", embedder, emit))


def test_report_edd_is_edd_of_the_seven_explanations(demo_db, fake_model, make_engine) -> None:
    from analysis.robustness.data import edd_values, load_robustness
    from store.generations import get_generations
    from store.jobs import list_jobs
    from tests.robustness.conftest import FakeEmbedder
    from workbench.perturb import strip_final_answer

    outcome = _scripted_run(demo_db, make_engine, FakeEmbedder())
    frame = edd_values(load_robustness(demo_db, outcome.audit))
    assert len(frame) == 2 and (frame["n_vectors"] == 7).all()
    for row in frame.itertuples():
        jobs = [j for j in list_jobs(demo_db, outcome.audit_id, status="done")
                if j.item_id == row.item_id and j.role in ("baseline", "demographic")]
        assert len(jobs) == 7
        gens = get_generations(demo_db, [j.generation_key for j in jobs])
        texts = [strip_final_answer(g.output) for g in gens.values()]
        assert edd(FakeEmbedder().embed(texts)) == pytest.approx(row.edd, abs=1e-6)


def test_embedding_resumes_and_reuses_the_text_cache(demo_db, fake_model, make_engine) -> None:
    from tests.robustness.conftest import FakeEmbedder
    from workbench.robustness.edd import embed_explanations

    embedder = FakeEmbedder()
    first = _scripted_run(demo_db, make_engine, embedder)
    # Two items x 7 answers, but the scripted model repeats texts: embed_texts embeds each
    # distinct explanation once, and every generation gets its vector.
    assert first.embedded == 14
    distinct = sum(embedder.calls)
    assert 0 < distinct < 14
    assert embed_explanations(demo_db, first.audit_id, "fake-letters", embedder) == 0
    assert sum(embedder.calls) == distinct  # nothing embedded again
    # A fitted (non-cacheable) embedder re-embeds the whole run in one fit when one is missing.
    demo_db.execute("DELETE FROM embeddings WHERE id = (SELECT MIN(id) FROM embeddings)")
    fitted = FakeEmbedder(cacheable=False)
    assert embed_explanations(demo_db, first.audit_id, "fake-letters", fitted) == 14


def test_choose_embedder(db, monkeypatch) -> None:
    from store.errors import UserError
    from workbench.robustness.edd import choose_embedder

    monkeypatch.setattr("workbench.embed.minilm_available", lambda: True)
    assert choose_embedder(db, None) == ("minilm", None)
    monkeypatch.setattr("workbench.embed.minilm_available", lambda: False)
    spec, message = choose_embedder(db, None)
    assert spec == "tfidf" and "all-MiniLM-L6-v2" in message and "pip install" in message
    with pytest.raises(UserError, match="pip install"):
        choose_embedder(db, "minilm")
    assert choose_embedder(db, "tfidf") == ("tfidf", None)
    with pytest.raises(UserError, match="--embedder: expected"):
        choose_embedder(db, "bogus")


def test_every_edd_cell_names_its_embedder(demo_db, fake_model, make_engine, marked) -> None:
    from workbench.kinds import build_run_report
    from analysis.robustness.definitions import edd_comparable, edd_embedder_label
    from tests.robustness.helpers import hand, scripted_run

    assert edd_comparable("minilm") and not edd_comparable("tfidf")
    assert edd_embedder_label("tfidf") == "tfidf (not comparable with the paper's MiniLM EDD)"
    assert edd_embedder_label("minilm") == "minilm (all-MiniLM-L6-v2, the paper's)"
    outcome = scripted_run(demo_db, make_engine(hand))
    report = build_run_report(demo_db, outcome.audit_id, kind="robustness", n_boot=0)
    sections = {s.json_key: s for s in report.sections}
    label = "fake-letters (not comparable with the paper's MiniLM EDD)"
    for key in ("profiles", "edd"):
        frame = sections[key].frame
        assert set(frame["edd_embedder"]) == {label}
        # The embedder sits next to the EDD value it qualifies.
        columns = list(frame.columns)
        edd_column = "edd" if key == "profiles" else "mean_edd"
        assert columns.index("edd_embedder") == columns.index(edd_column + "_high") + 1
    assert "not on the scale of the paper's" in sections["profiles"].note
    assert report.meta["edd_embedder"] == label
