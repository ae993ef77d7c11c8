"""The stages of a run, built from settings: models loaded once, pipelines per thread.

The TUI runs the pipeline in worker threads; an SQLite connection belongs to the thread
that opened it, so every worker opens its own connection (:meth:`Workbench.open_db`) and
asks for a :class:`~core.pipeline.runner.Pipeline` bound to it. The models behind the stages
(embedder, sentence splitter, NLI or LLM verifier, decomposer) are heavy and thread-safe
for one caller at a time, so they are loaded once per workbench, lazily, under a lock —
never at import time, so the app opens before torch is even imported.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.settings import ENV_CONFIG, Settings

if TYPE_CHECKING:  # annotations only: a command that never opens the store or indexes starts without them
    import sqlite_utils

    from core.ingest.index import Progress


@dataclass(frozen=True)
class RunOptions:
    """What a run is configured with (the settings screen and the input bar edit these).
    No defaults of its own: it is always made :meth:`from_settings`, so every default lives
    in core.settings (and the thresholds' in core.verify.base.Thresholds)."""

    decomposer: str
    verifier: str
    sources: tuple[str, ...]
    mode: str
    k: int
    grounding: bool
    support: float
    refute: float
    conflict: float
    verdict_rule: str
    sentence_choice: str
    english_only: bool

    @classmethod
    def from_settings(cls, s: Settings) -> RunOptions:
        return cls(
            decomposer=s.decomposer, verifier=s.verifier, sources=tuple(s.sources), mode=s.mode, k=s.top_k,
            grounding=s.grounding, support=s.support_threshold, refute=s.refute_threshold,
            conflict=s.conflict_threshold, verdict_rule=s.verdict_rule, sentence_choice=s.sentence_choice,
            english_only=s.english_only,
        )

    def with_(self, **kw: Any) -> RunOptions:
        return replace(self, **kw)


class Workbench:
    """Builds pipelines over the settings' database with models shared between threads."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._lock = threading.RLock()
        self._models: dict[tuple[str, ...], Any] = {}

    def with_settings(self, settings: Settings) -> Workbench:
        """A workbench with new settings that shares this one's loaded models: the model
        cache is keyed by model spec and device, so a changed spec loads afresh and an
        unchanged one is reused (the settings screen, and tests, rely on this)."""
        other = Workbench(settings)
        other._lock, other._models = self._lock, self._models
        return other

    def open_db(self) -> sqlite_utils.Database:
        from store import open_db

        return open_db(self.settings.db_path)

    def _model(self, key: tuple[str, ...], load: Callable[[], Any]) -> Any:
        with self._lock:
            if key not in self._models:
                self._models[key] = load()
            return self._models[key]

    def embedder(self):
        from models.embed import load_embedder

        return self._model(("embedder", self.settings.embedder), lambda: load_embedder(self.settings.embedder))

    def spacy(self):
        """The embedded spaCy pipeline, loaded once and shared by the sentence splitter, the
        rules decomposer, the subject terms, the claim subject and NER (each runs only the
        pipes it needs per call: models/nlp.py) — a check loaded it three times before."""
        from models.nlp import SpacyPipeline

        return self._model(("spacy",), SpacyPipeline)

    def splitter(self):
        from models.nlp import SpacySentenceSplitter

        return self._model(("splitter",), lambda: SpacySentenceSplitter(pipeline=self.spacy()))

    def claim_subject(self):
        """A claim's entities and subject phrase (the retriever's subject rule), on the shared spaCy."""
        from models.nlp import SpacyClaimSubject

        return self._model(("claim-subject",), lambda: SpacyClaimSubject(pipeline=self.spacy()))

    def searcher(self, db: sqlite_utils.Database):
        """A retriever over ``db`` (the calling thread's connection) on the shared models."""
        from core.retrieve.searcher import Searcher

        return Searcher(db, self.embedder, rrf_k=self.settings.rrf_k, entities_factory=self.claim_subject,
                        title_maps=self._model(("title-maps",), dict))

    def index_splitter(self):
        """The sentence splitter for indexing a source: spaCy's rule-based sentencizer instead of
        the parser (~11× faster on wiki-vital, 99.3 % of its boundaries: docs/benchmarks.md,
        issue 18 "Indexing"); the parser still splits answers, given documents and expansions."""
        from models.nlp import SpacySentenceSplitter

        return self._model(("splitter", "index"), lambda: SpacySentenceSplitter(pipe="sentencizer"))

    def llm(self):
        """The GGUF chat model of the settings (ICAT-A aspects, LLM alignment)."""
        from models.llm import load_llm

        return self._model(("llm", self.settings.llm), lambda: load_llm(self.settings.llm))

    def nli(self, spec: str):
        """The verifier's pair model: an NLI cross-encoder (embedded, HF id or folder), or
        the LLM judge for ``llm`` / a ``.gguf`` path (any GGUF can serve as the verifier)."""
        if spec == "llm" or spec.endswith(".gguf"):
            from models.llm_judge import load_llm_judge

            gguf = self.settings.llm if spec == "llm" else spec
            return self._model(("judge", gguf), lambda: load_llm_judge(gguf))
        from models.nli import load_nli

        return self._model(("nli", spec, self.settings.device), lambda: load_nli(spec, device=self.settings.device))

    def verifier(self, options: RunOptions):
        from core.verify.base import Thresholds
        from core.verify.verifier import Verifier
        from models.nlp import SubjectTerms

        thresholds = Thresholds(support=options.support, refute=options.refute, conflict=options.conflict,
                                sentence_choice=options.sentence_choice)
        terms = self._model(("subject-terms",), lambda: SubjectTerms(pipeline=self.spacy())) if options.grounding else None
        return Verifier(self.nli(options.verifier), thresholds, subject_terms=terms, verdict_rule=options.verdict_rule)

    def decomposer(self, name: str, standalone: bool = True):
        """A decomposer by name; ``standalone`` claims (a check's) name the answer's subject
        instead of an opening pronoun (core.decompose.make_decomposer)."""
        from core.decompose import BOTH_WAYS, make_decomposer

        llm = self.settings.llm if name == "llm" else None
        standalone = standalone or name not in BOTH_WAYS  # the others write one way: one instance each
        return self._model(("decomposer", name, llm or "", standalone),
                           lambda: make_decomposer(name, self.splitter, llm, self.spacy, standalone=standalone))

    def entities(self):
        """spaCy NER of the embedded English pipeline (claim entity overlap, seed 001 §4.1)."""
        from models.nlp import SpacyEntities

        return self._model(("entities",), lambda: SpacyEntities(pipeline=self.spacy()))

    def characterizer(self):
        """Per-evidence context characteristics (seed 001 §4.1) with NER and the site lists;
        a ``factcheck_domains.txt`` / ``unreliable_domains.txt`` beside the config file
        replaces the shipped list of that name (core/diagnostics/characteristics.py)."""
        from core.diagnostics.characteristics import Characterizer, load_domain_lists
        from core.settings import default_config_path

        def build():
            config = Path(os.environ.get(ENV_CONFIG) or default_config_path()).expanduser()
            return Characterizer(entities=self.entities().entities, domains=load_domain_lists(config.parent))

        return self._model(("characterizer",), build)

    def context_usage(self, shots: int = 3):
        """The ACU scorer (seed 001 §5) over the settings' LLM."""
        from core.diagnostics.acu import ContextUsageScorer

        return self._model(("acu", self.settings.llm, str(shots)), lambda: ContextUsageScorer(self.llm(), shots))

    def expander(self, mode: str):
        """The query expander a retrieval mode needs (None for bm25 / dense / hybrid): the
        settings' LLM with HyDE's prompt preset, or Query2doc's generic prompt."""
        from core.retrieve.expand import METHODS, Expander, ExpansionParams

        if mode not in METHODS:
            return None
        preset = self.settings.hyde_prompt if mode == "hyde" else "query2doc"
        params = ExpansionParams(n=self.settings.expansion_n, max_tokens=self.settings.expansion_max_tokens)
        return Expander(self.llm(), mode, preset, params)

    def warm_up(self, options: RunOptions) -> None:
        """Load every model a run with ``options`` needs, so the first run starts at once."""
        self.embedder()
        self.splitter()
        self.claim_subject()  # retrieval's subject rule (hybrid): else loaded on a run's first search
        self.verifier(options)
        self.decomposer(options.decomposer)
        self.characterizer()  # the inspector's evidence characteristics need spaCy's NER
        if options.mode in ("hybrid", "hybrid-sentence") and self.settings.db_path:
            self._warm_titles(options.sources)
        if options.mode in ("hyde", "query2doc"):
            self.llm().llama  # noqa: B018 — loads the GGUF weights now

    def _warm_titles(self, names: tuple[str, ...]) -> None:
        """The subject rule's title map of the run's sources, shared with every later searcher
        (~0.5 s of a first run on 2 cores otherwise); nothing when they are not indexed yet."""
        from core.errors import ClaimscopeError

        db = self.open_db()
        try:
            searcher = self.searcher(db)
            searcher.title_index(searcher.sources(list(names) or None))
        except ClaimscopeError:
            pass  # no source yet (a built-in is indexed on the first run)
        finally:
            db.close()

    def pipeline(self, db: sqlite_utils.Database, options: RunOptions, progress: Progress | None = None):
        """A pipeline on ``db`` (the calling thread's connection); built-in sources the run
        needs are indexed first (once), reporting to ``progress``."""
        from core.pipeline.runner import Pipeline

        self.ensure_sources(db, options.sources, progress, options.mode)
        return Pipeline(
            db, self.decomposer(options.decomposer), self.searcher(db), self.verifier(options),
            sources=list(options.sources) or None, k=options.k, mode=options.mode,
            expander=self.expander(options.mode), splitter=self.splitter(),
            language_guard=self.language_guard() if options.english_only else None,
        )

    def language_guard(self):
        """The English-only guard (core/language.py), shared like the models: its identifier loads once."""
        from core.language import LanguageGuard

        return self._model(("language_guard",), LanguageGuard)

    def missing_builtins(self, db: sqlite_utils.Database, names: tuple[str, ...]) -> list[str]:
        """Built-in sources a run over ``names`` needs indexed first: those asked for (or, on
        an empty database, the default wiki-vital) that the database does not hold yet."""
        from core.ingest.sources import BUILTINS, WIKI_VITAL
        from store.sources import get_source, list_sources

        wanted = list(names or ([] if list_sources(db) else [WIKI_VITAL.name]))
        return [n for n in wanted if n in BUILTINS and get_source(db, n) is None]

    def ensure_sources(
        self, db: sqlite_utils.Database, names: tuple[str, ...], progress: Progress | None = None, mode: str | None = None,
    ) -> None:
        """Index the built-in sources :meth:`missing_builtins` names, once, and give the sources
        :meth:`unembedded_sources` names this embedder's vectors when the retrieval ``mode``
        searches them (any mode when None), and their sentence vectors when the mode scores
        sentences (a database indexed before sentence vectors were stored: once, with progress);
        unknown names fail later with the searcher's message."""
        from core.ingest.index import add_source, ensure_embeddings, ensure_sentence_vectors
        from core.ingest.sources import BUILTINS, load_builtin

        for name in self.missing_builtins(db, names):
            builtin = BUILTINS[name]
            add_source(
                db, name, load_builtin(name), fmt="builtin", path=None, embedder=self.embedder(),
                splitter=self.index_splitter(), attribution=builtin.attribution, licence=builtin.licence,
                chunk_words=self.settings.chunk_words, chunk_overlap=self.settings.chunk_overlap,
                progress=progress,
            )
        for name in self.unembedded_sources(db, names, mode):
            ensure_embeddings(db, name, self.embedder(), progress)
        for name in self.sources_without_sentence_vectors(db, names, mode):
            ensure_sentence_vectors(db, name, self.embedder(), progress)

    def sources_without_sentence_vectors(
        self, db: sqlite_utils.Database, names: tuple[str, ...], mode: str | None,
    ) -> list[str]:
        """Sources of a run over ``names`` (every source when empty) whose sentence vectors from
        this run's embedder look unbuilt (core.ingest.index.sentence_vectors_missing), when the
        retrieval ``mode`` scores sentences by their vectors (core.retrieve.searcher.SENTENCE_VECTOR_MODES)."""
        from core.ingest.index import sentence_vectors_missing
        from core.retrieve.searcher import SENTENCE_VECTOR_MODES
        from store.sources import get_source, list_sources

        if mode not in SENTENCE_VECTOR_MODES:
            return []
        infos = [get_source(db, n) for n in names] if names else list_sources(db)
        model = self.embedder().ref.model_id
        return [s.name for s in infos if s is not None and sentence_vectors_missing(db, s.name, model)]

    def unembedded_sources(self, db: sqlite_utils.Database, names: tuple[str, ...], mode: str | None = None) -> list[str]:
        """Sources of a run over ``names`` (every source when empty) with passages that have no
        vector from this run's embedder — indexed under another embedding model, or under the
        other copy of this one (the int8 copy is the default only on CPUs where its products are
        exact, so a database moved between machines meets the other id: models/embed.py). Dense
        search skips passages without vectors, so a run embeds them first (once). None of them when the
        retrieval ``mode`` does not search vectors (BM25 alone, query2doc)."""
        from core.retrieve.searcher import VECTOR_MODES
        from store.sources import embedding_fingerprint, get_source, list_sources

        if mode is not None and mode not in VECTOR_MODES:
            return []
        infos = [get_source(db, n) for n in names] if names else list_sources(db)
        model = self.embedder().ref.model_id
        return [s.name for s in infos
                if s is not None and int(embedding_fingerprint(db, s.id, model).split(":")[0]) < s.n_passages]


def cluster_stages(settings: Settings, options: RunOptions, db: sqlite_utils.Database | None):
    """(decomposer, verifier, searcher, language guard or None) of a run with ``options`` over ``db``, built on a
    cluster worker (core/pipeline/cluster.py) — here, in the composition root, so the
    pipeline layer never imports the workbench. Passed to Ray as
    ``functools.partial(cluster_stages, settings, options)``. ``db`` None (a batch against given
    documents) builds no searcher, so the worker never loads the embedder."""
    wb = Workbench(settings)
    return (wb.decomposer(options.decomposer), wb.verifier(options), wb.searcher(db) if db is not None else None,
            wb.language_guard() if options.english_only else None)
