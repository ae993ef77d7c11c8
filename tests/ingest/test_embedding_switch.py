"""A source whose passages have no vectors from the run's embedder — indexed under another
embedding model, or under the other copy of the embedded one (int8 on VNNI CPUs, fp32 elsewhere:
a database moved between machines) — is embedded before a run, so dense search never silently
skips it, and the vectors already stored stay."""

from __future__ import annotations

import pytest

from core.errors import InputError


def test_a_source_indexed_with_another_embedder_gets_this_ones_vectors_before_a_run(tmp_path_factory, embedder, splitter):
    from core.retrieve.searcher import DenseRetriever
    from core.settings import Settings
    from core.workbench import Workbench
    from store.sources import get_source
    from tests.conftest import indexed_fixture

    db = indexed_fixture(tmp_path_factory, "moved", "scifact_mini_corpus.jsonl", "scifact", embedder, splitter)
    wb = Workbench(Settings())
    assert wb.embedder().ref.model_id == embedder.ref.model_id
    assert wb.unembedded_sources(db, ()) == []
    n = db.execute("SELECT count(*) FROM embeddings").fetchone()[0]
    with db.conn:  # as if indexed by another embedder
        db.execute("UPDATE embeddings SET model = 'another-embedder'")
    info = get_source(db, "moved")
    query = "Vitamin D deficiency is associated with disease"
    with pytest.raises(InputError, match="no vectors from the embedder"):  # never an empty dense search
        DenseRetriever(db, [info], wb.embedder())
    assert wb.unembedded_sources(db, ()) == ["moved"] == wb.unembedded_sources(db, ("moved",), "hybrid")
    assert wb.unembedded_sources(db, (), "bm25") == []  # a mode that never searches vectors embeds nothing
    wb.ensure_sources(db, ())
    assert wb.unembedded_sources(db, ()) == []
    assert len(DenseRetriever(db, [info], wb.embedder()).retrieve(query, 3)) == 3
    counts = dict(db.execute("SELECT model, count(*) FROM embeddings GROUP BY model").fetchall())
    assert counts == {"another-embedder": n, embedder.ref.model_id: n}  # nothing stored is lost
