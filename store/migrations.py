"""Numbered schema migrations, applied in order on open.

Each migration is a function of the database that runs inside one transaction opened by
:func:`store.db.open_db`; ``meta.schema_version`` records the last one applied. Never edit a
released migration: add a new one (later issues add columns this way).

Table overview (version 1):
- ``sources``/``documents``/``passages``: knowledge sources, chunked into passages of at most
  128 words with 32 words overlap (ICAT, seed 004 §5.4); each passage keeps its sentences'
  character offsets in the document so evidence can be cited sentence by sentence.
- ``passages_fts``: an FTS5 index over passage title and text, kept in sync by triggers.
- ``embeddings``: one float32 vector per (passage, embedding model); the FAISS index beside
  the database is rebuilt from these, so it is a cache that can always be regenerated.
- ``runs``/``claims``/``evidence``/``verdicts``/``scores``: one verification run each.
- ``model_manifest``: which model files produced a run (id/path, sha256, quantisation,
  prompt hashes, thresholds), for reproducibility.
"""

from __future__ import annotations

from collections.abc import Callable

import sqlite_utils


def current_version(db: sqlite_utils.Database) -> int:
    if "meta" not in db.table_names():
        return 0
    row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    return int(row[0]) if row else 0


def _v1_initial(db: sqlite_utils.Database) -> None:
    statements = [
        """CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)""",
        """CREATE TABLE sources (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            format TEXT NOT NULL,
            path TEXT,
            attribution TEXT,
            licence TEXT,
            chunk_words INTEGER NOT NULL,
            chunk_overlap INTEGER NOT NULL,
            n_documents INTEGER NOT NULL DEFAULT 0,
            n_passages INTEGER NOT NULL DEFAULT 0,
            index_seconds REAL,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),
            updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))
        )""",
        """CREATE TABLE documents (
            id INTEGER PRIMARY KEY,
            source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
            ext_id TEXT NOT NULL,
            title TEXT NOT NULL DEFAULT '',
            url TEXT,
            date TEXT,
            text TEXT NOT NULL,
            meta TEXT,
            content_hash TEXT NOT NULL,
            UNIQUE (source_id, ext_id)
        )""",
        """CREATE TABLE passages (
            id INTEGER PRIMARY KEY,
            document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
            idx INTEGER NOT NULL,
            title TEXT NOT NULL DEFAULT '',
            text TEXT NOT NULL,
            char_start INTEGER NOT NULL,
            char_end INTEGER NOT NULL,
            first_sentence INTEGER NOT NULL,
            sentences TEXT NOT NULL,
            UNIQUE (document_id, idx)
        )""",
        "CREATE INDEX passages_source ON passages(source_id)",
        """CREATE VIRTUAL TABLE passages_fts USING fts5(
            title, text, tokenize = 'porter unicode61 remove_diacritics 2'
        )""",
        """CREATE TRIGGER passages_ai AFTER INSERT ON passages BEGIN
            INSERT INTO passages_fts(rowid, title, text) VALUES (new.id, new.title, new.text);
        END""",
        """CREATE TRIGGER passages_ad AFTER DELETE ON passages BEGIN
            DELETE FROM passages_fts WHERE rowid = old.id;
        END""",
        """CREATE TABLE embeddings (
            passage_id INTEGER NOT NULL REFERENCES passages(id) ON DELETE CASCADE,
            model TEXT NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (passage_id, model)
        )""",
        """CREATE TABLE runs (
            id INTEGER PRIMARY KEY,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),
            status TEXT NOT NULL DEFAULT 'pending',
            input_text TEXT NOT NULL,
            input_hash TEXT NOT NULL,
            config TEXT NOT NULL DEFAULT '{}'
        )""",
        """CREATE TABLE claims (
            id INTEGER PRIMARY KEY,
            run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            idx INTEGER NOT NULL,
            text TEXT NOT NULL,
            span_start INTEGER,
            span_end INTEGER,
            checkable INTEGER NOT NULL DEFAULT 1,
            status TEXT NOT NULL DEFAULT 'pending',
            UNIQUE (run_id, idx)
        )""",
        """CREATE TABLE evidence (
            id INTEGER PRIMARY KEY,
            claim_id INTEGER NOT NULL REFERENCES claims(id) ON DELETE CASCADE,
            passage_id INTEGER NOT NULL REFERENCES passages(id),
            rank INTEGER NOT NULL,
            fused_score REAL,
            bm25_score REAL,
            bm25_rank INTEGER,
            dense_score REAL,
            dense_rank INTEGER,
            UNIQUE (claim_id, passage_id)
        )""",
        """CREATE TABLE verdicts (
            id INTEGER PRIMARY KEY,
            claim_id INTEGER NOT NULL REFERENCES claims(id) ON DELETE CASCADE,
            label TEXT NOT NULL,
            support REAL,
            deciding_evidence_id INTEGER REFERENCES evidence(id),
            probabilities TEXT,
            model TEXT,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))
        )""",
        """CREATE TABLE scores (
            id INTEGER PRIMARY KEY,
            run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            kind TEXT NOT NULL,
            value REAL,
            detail TEXT,
            UNIQUE (run_id, kind)
        )""",
        """CREATE TABLE model_manifest (
            id INTEGER PRIMARY KEY,
            run_id INTEGER REFERENCES runs(id) ON DELETE CASCADE,
            role TEXT NOT NULL,
            model_id TEXT NOT NULL,
            path TEXT,
            sha256 TEXT,
            revision TEXT,
            quantisation TEXT,
            prompt_hashes TEXT,
            thresholds TEXT,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))
        )""",
    ]
    for sql in statements:
        db.execute(sql)


def _v2_judgements(db: sqlite_utils.Database) -> None:
    """Every NLI judgement of a claim against one evidence unit (a sentence, a whole passage,
    or a set of ≤ 3 sentences), with all three probabilities (seed 004 §5.1.2: "all three NLI
    probabilities are stored for every pair"), plus verdict thresholds used."""
    db.execute(
        """CREATE TABLE judgements (
            id INTEGER PRIMARY KEY,
            claim_id INTEGER NOT NULL REFERENCES claims(id) ON DELETE CASCADE,
            evidence_id INTEGER NOT NULL REFERENCES evidence(id) ON DELETE CASCADE,
            unit TEXT NOT NULL CHECK (unit IN ('sentence', 'passage', 'set')),
            sentences TEXT NOT NULL,
            text TEXT NOT NULL,
            p_entailment REAL NOT NULL,
            p_neutral REAL NOT NULL,
            p_contradiction REAL NOT NULL,
            window INTEGER NOT NULL DEFAULT 0,
            n_windows INTEGER NOT NULL DEFAULT 1,
            grounded INTEGER NOT NULL DEFAULT 1,
            model TEXT NOT NULL
        )"""
    )
    db.execute("CREATE INDEX judgements_claim ON judgements(claim_id)")
    db.execute("ALTER TABLE verdicts ADD COLUMN deciding_judgement_id INTEGER REFERENCES judgements(id)")
    db.execute("ALTER TABLE verdicts ADD COLUMN thresholds TEXT")


def _v3_events(db: sqlite_utils.Database) -> None:
    """Pipeline events (claim found, evidence found, verdict ready, …), written as they happen
    so the CLI and the TUI show the same stream and a reopened run replays it."""
    db.execute(
        """CREATE TABLE events (
            id INTEGER PRIMARY KEY,
            run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            kind TEXT NOT NULL,
            claim_id INTEGER REFERENCES claims(id) ON DELETE CASCADE,
            payload TEXT NOT NULL DEFAULT '{}',
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
        )"""
    )
    db.execute("CREATE INDEX events_run ON events(run_id, id)")
    db.execute("ALTER TABLE runs ADD COLUMN external_id TEXT")


def _v4_embedding_cache(db: sqlite_utils.Database) -> None:
    """Vectors by (model, sha256 of the embedded text): re-indexing the same text — a source
    re-added under another name, a benchmark corpus, an unchanged passage of an edited
    document — never runs the embedder again."""
    db.execute(
        """CREATE TABLE embedding_cache (
            model TEXT NOT NULL,
            text_sha256 TEXT NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (model, text_sha256)
        ) WITHOUT ROWID"""
    )


def _v5_claim_context(db: sqlite_utils.Database) -> None:
    """Why a claim is not checkable (question, abstention, opinion, advice), the source
    sentence when the claim text was rewritten (decontextualised), and the ``[n]``
    citations it carried in a cited answer."""
    db.execute("ALTER TABLE claims ADD COLUMN note TEXT")
    db.execute("ALTER TABLE claims ADD COLUMN context TEXT")
    db.execute("ALTER TABLE claims ADD COLUMN citations TEXT")  # JSON list of [n] markers the claim carried


def _v6_annotations_cache(db: sqlite_utils.Database) -> None:
    """Human annotations beside the model's verdicts, a cache of stage outputs across runs,
    and the decomposer's original text of a claim the user edited.

    - ``annotations``: a person's (or an imported dataset's) judgement of a claim: ``label`` is
      the human verdict (supported / refuted / not_enough_info / conflicting) when known,
      ``judgement`` says whether the model's verdict was ``correct`` or ``wrong``; both are
      kept apart from the model's verdict so agreement can be computed (seed 002 §4, seed
      003 §5 report annotator agreement the same way).
    - ``stage_cache``: one stage's output (JSON) keyed on (stage, the manifest of the models
      and settings that produced it, sha256 of its input), so the same claim checked again
      with the same models is never recomputed, in this run or another.
    - ``claims.original_text``: set when the user edits a claim; the claim is then
      re-verified alone and the decomposer's text stays on record.
    """
    db.execute(
        """CREATE TABLE annotations (
            id INTEGER PRIMARY KEY,
            claim_id INTEGER NOT NULL REFERENCES claims(id) ON DELETE CASCADE,
            verdict_id INTEGER REFERENCES verdicts(id) ON DELETE SET NULL,
            label TEXT CHECK (label IS NULL OR label IN ('supported', 'refuted', 'not_enough_info', 'conflicting')),
            judgement TEXT CHECK (judgement IS NULL OR judgement IN ('correct', 'wrong')),
            origin TEXT NOT NULL DEFAULT 'user',
            annotator TEXT,
            note TEXT,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
        )"""
    )
    db.execute("CREATE INDEX annotations_claim ON annotations(claim_id)")
    db.execute(
        """CREATE TABLE stage_cache (
            stage TEXT NOT NULL,
            manifest_key TEXT NOT NULL,
            input_sha256 TEXT NOT NULL,
            output TEXT NOT NULL,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),
            PRIMARY KEY (stage, manifest_key, input_sha256)
        ) WITHOUT ROWID"""
    )
    db.execute("ALTER TABLE claims ADD COLUMN original_text TEXT")


def _v7_expansions_context_usage(db: sqlite_utils.Database) -> None:
    """Query expansions (seed 000) and context-usage scores (seed 001 §5).

    - ``expansions``: the LLM-written pseudo-documents a claim was retrieved with (HyDE or
      Query2doc), with the prompt preset, the generating model (id, sha256) and the sampling
      parameters. Kept apart from ``evidence`` on purpose: generated text is never evidence,
      never shown as evidence and never passed to the verifier (seed 000's argument; seeds.md
      §1.1 item 4). ``matched`` is the leakage audit's answer (1 / 0; NULL: not audited).
    - ``expansion_matches``: one row per (premise, generated sentence) pair of the leakage
      audit (seed 000 §3.3; seeds.md §1.4 step 5), so the UI can show which generated
      sentence restates which evidence.
    - ``context_usage``: P(True/None/False) for the claim alone and with one evidence piece,
      ΔP and the ACU sum on the [-3, 3] scale (seed 001 §5, Eq. 1–2), per evidence row and
      model; ``stance_source`` says whether the stance came from the verifier or a person.
    - ``runs.claim_date``: when the checked text was written or published (YYYY[-MM[-DD]]),
      so evidence published after it can be flagged (seed 001 §4.1, "published after claim").
    """
    db.execute(
        """CREATE TABLE expansions (
            id INTEGER PRIMARY KEY,
            claim_id INTEGER NOT NULL REFERENCES claims(id) ON DELETE CASCADE,
            method TEXT NOT NULL CHECK (method IN ('hyde', 'query2doc')),
            preset TEXT NOT NULL,
            documents TEXT NOT NULL,
            model TEXT NOT NULL,
            model_sha256 TEXT,
            params TEXT NOT NULL,
            seconds REAL,
            matched INTEGER,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
        )"""
    )
    db.execute("CREATE INDEX expansions_claim ON expansions(claim_id)")
    db.execute(
        """CREATE TABLE expansion_matches (
            id INTEGER PRIMARY KEY,
            expansion_id INTEGER NOT NULL REFERENCES expansions(id) ON DELETE CASCADE,
            evidence_id INTEGER REFERENCES evidence(id) ON DELETE CASCADE,
            premise TEXT NOT NULL,
            doc_index INTEGER NOT NULL,
            sentence_index INTEGER NOT NULL,
            sentence TEXT NOT NULL,
            label TEXT NOT NULL CHECK (label IN ('entailment', 'neutral', 'contradiction')),
            p_entailment REAL NOT NULL
        )"""
    )
    db.execute("CREATE INDEX expansion_matches_expansion ON expansion_matches(expansion_id)")
    db.execute(
        """CREATE TABLE context_usage (
            id INTEGER PRIMARY KEY,
            claim_id INTEGER NOT NULL REFERENCES claims(id) ON DELETE CASCADE,
            evidence_id INTEGER NOT NULL REFERENCES evidence(id) ON DELETE CASCADE,
            model TEXT NOT NULL,
            model_sha256 TEXT,
            shots INTEGER NOT NULL,
            stance TEXT NOT NULL,
            stance_source TEXT NOT NULL CHECK (stance_source IN ('verifier', 'human')),
            p_claim TEXT NOT NULL,
            p_evidence TEXT NOT NULL,
            delta TEXT NOT NULL,
            acu_sum REAL NOT NULL,
            repulsion INTEGER NOT NULL,
            memory_conflict INTEGER,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
            UNIQUE (evidence_id, model, shots, stance)
        )"""
    )
    db.execute("CREATE INDEX context_usage_claim ON context_usage(claim_id)")
    db.execute("ALTER TABLE runs ADD COLUMN claim_date TEXT")


def _v8_evidence_stages(db: sqlite_utils.Database) -> None:
    """``evidence.stages``: every retrieval stage's score and rank for the passage, as JSON
    ``{stage: [score, rank]}`` (e.g. bm25, dense, fusion, subject), so the inspector can show
    why a passage ranked where it did. NULL for evidence stored before this version."""
    db.execute("ALTER TABLE evidence ADD COLUMN stages TEXT")


def _v9_sentence_vectors(db: sqlite_utils.Database) -> None:
    """``sentence_vectors``: each sentence of a source embedded alone at index time, by (model,
    sha256 of the sentence text), as float16 (core.ingest.index.ensure_sentence_vectors), so a
    search scores a passage's sentences without embedding them. float16 halves the row so it
    stays inside its B-tree page; a ranking by cosine moves by about 1e-4 at most.

    And ``embedding_cache`` rebuilt as a rowid table: WITHOUT ROWID stores each row in an index
    B-tree, whose rows keep about 1 KB in the page, so every 1.5 KB float32 vector spilled into an
    overflow page of its own (measured on wiki-vital: 4.7 KB a row, 50.8 MB for 10,842 vectors;
    2.2 KB a row as a rowid table)."""
    db.execute(
        """CREATE TABLE sentence_vectors (
            model TEXT NOT NULL,
            text_sha256 TEXT NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (model, text_sha256)
        ) WITHOUT ROWID"""
    )
    db.execute(
        """CREATE TABLE embedding_cache_rowid (
            model TEXT NOT NULL,
            text_sha256 TEXT NOT NULL,
            vector BLOB NOT NULL,
            UNIQUE (model, text_sha256)
        )"""
    )
    db.execute("INSERT INTO embedding_cache_rowid(model, text_sha256, vector) SELECT model, text_sha256, vector FROM embedding_cache")
    db.execute("DROP TABLE embedding_cache")
    db.execute("ALTER TABLE embedding_cache_rowid RENAME TO embedding_cache")


Migration = tuple[int, str, Callable[[sqlite_utils.Database], None]]

MIGRATIONS: list[Migration] = [
    (1, "initial schema: sources, passages, FTS5, embeddings, runs, manifest", _v1_initial),
    (2, "judgements: every claim–evidence NLI result; verdict thresholds", _v2_judgements),
    (3, "events: the pipeline's stream per run; runs.external_id", _v3_events),
    (4, "embedding_cache: vectors by (model, text hash)", _v4_embedding_cache),
    (5, "claims.note (why not checkable), .context (source sentence), .citations", _v5_claim_context),
    (6, "annotations (human labels), stage_cache, claims.original_text", _v6_annotations_cache),
    (7, "expansions + leakage-audit pairs (seed 000), context_usage / ACU, runs.claim_date (seed 001)", _v7_expansions_context_usage),
    (8, "evidence.stages: each retrieval stage's score and rank", _v8_evidence_stages),
    (9, "sentence_vectors (float16, by model and text hash); embedding_cache as a rowid table", _v9_sentence_vectors),
]
SCHEMA_VERSION = MIGRATIONS[-1][0]
