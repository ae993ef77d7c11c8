"""The English-only guard: sentences in another language are shown, noted and never verified.

claimscope's parser, embedder, verifier and LLM all read English. Checked anyway, a sentence in
another language gets a verdict that means nothing and enters the answer's factual precision:
"Paris est la capitale de la France." came out *supported* (+0.04) by the Notre-Dame de Paris
passage, "Der Hund ist braun." *not enough info*. The guard gives such a sentence's claims the
check-worthiness note ``not English (reads as French)`` instead; they are shown, dimmed, like a
question or an opinion. The guard is on with ``check --english-only`` or the settings'
``run.english_only``; it is off by default, since on sets it had never read it called 2 of
28,632 English sentences not English, one of them in a set of 1,927, above its rule's bound of
one in 2,000 (docs/benchmarks.md).

How a sentence is judged (parameters chosen on development data, then read once on held-out
sets: benchmarks/language_guard.py, docs/benchmarks.md "Text in another language"):

1. **Script.** When at least half of its letters are outside the Latin script (CJK, Cyrillic,
   Arabic, Devanagari …), it is not English.
2. **English function words.** A Latin-script sentence with three words or more that are no
   names (:func:`common_words`), at least two of them spaCy's English stop words making up at
   least ``ENGLISH_SHARE`` of them, is English, and nothing more is computed. Names and titles in other languages ("Diego María
   de la Concepción …", "Les Demoiselles d'Avignon") come with English function words around
   them.
3. **Otherwise, langid.py** (models/langid.py), on the same words: the sentence is not English when the identifier's most probable
   language is another one, with probability ≥ ``MIN_PROBABILITY``, and one of those words is a
   stop word of some other language in spaCy's lists (not an English one): positive evidence,
   since langid.py alone read English headlines as Nigerian Pidgin or French. What it reads as
   Nigerian Pidgin or Latin counts as English (``READ_AS_ENGLISH``).
4. **The whole text.** When most of a text's judged sentences are in another language, a
   sentence of it that rules 2–3 left as English but that has no English stop word at all
   (a short line, "El gato come pescado.") is taken to be in that language too.

Sentences of fewer than three words are not judged on their own ("Paris.", "U.S."): nothing
can tell their language.
"""

from __future__ import annotations

import importlib.util
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path

from core.decompose.base import Claim
from models.langid import LanguageIdentifier

MIN_WORDS = 3
ENGLISH_SHARE = 0.15  # of a sentence's words that are English stop words
MIN_PROBABILITY = 0.5  # langid.py's probability of the other language
MIN_SCRIPT_LETTERS = 2

# Rule 3 never calls these "not English": Nigerian Pidgin (pcm) is written with English words, and
# what langid.py reads as Latin is, in the sets measured, English with Latin terms (binomials,
# "et al.", "circa", a list of blood values), never a Latin sentence anyone checks
READ_AS_ENGLISH = frozenset({"en", "pcm", "la"})

_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")

# langid.py's codes (ISO 639-1) for the names the note shows; any other code is shown as it is
LANGUAGE_NAMES = {
    "af": "Afrikaans", "am": "Amharic", "ar": "Arabic", "az": "Azerbaijani", "be": "Belarusian", "bg": "Bulgarian",
    "bn": "Bengali", "br": "Breton", "bs": "Bosnian", "ca": "Catalan", "cs": "Czech", "cy": "Welsh", "da": "Danish",
    "de": "German", "el": "Greek", "en": "English", "eo": "Esperanto", "es": "Spanish", "et": "Estonian",
    "eu": "Basque", "fa": "Persian", "fi": "Finnish", "fo": "Faroese", "fr": "French", "ga": "Irish",
    "gl": "Galician", "gu": "Gujarati", "he": "Hebrew", "hi": "Hindi", "hr": "Croatian", "ht": "Haitian Creole",
    "hu": "Hungarian", "hy": "Armenian", "id": "Indonesian", "is": "Icelandic", "it": "Italian", "ja": "Japanese",
    "jv": "Javanese", "ka": "Georgian", "kk": "Kazakh", "km": "Khmer", "kn": "Kannada", "ko": "Korean",
    "ku": "Kurdish", "ky": "Kyrgyz", "la": "Latin", "lb": "Luxembourgish", "lo": "Lao", "lt": "Lithuanian",
    "lv": "Latvian", "mg": "Malagasy", "mk": "Macedonian", "ml": "Malayalam", "mn": "Mongolian", "mr": "Marathi",
    "ms": "Malay", "mt": "Maltese", "nb": "Norwegian", "ne": "Nepali", "nl": "Dutch", "nn": "Norwegian Nynorsk",
    "no": "Norwegian", "oc": "Occitan", "or": "Odia", "pa": "Punjabi", "pl": "Polish", "ps": "Pashto",
    "pt": "Portuguese", "qu": "Quechua", "ro": "Romanian", "ru": "Russian", "rw": "Kinyarwanda", "se": "Northern Sami",
    "si": "Sinhala", "sk": "Slovak", "sl": "Slovenian", "sq": "Albanian", "sr": "Serbian", "sv": "Swedish",
    "sw": "Swahili", "ta": "Tamil", "te": "Telugu", "th": "Thai", "tl": "Tagalog", "tr": "Turkish", "ug": "Uyghur",
    "uk": "Ukrainian", "ur": "Urdu", "vi": "Vietnamese", "vo": "Volapük", "wa": "Walloon", "xh": "Xhosa",
    "zh": "Chinese", "zu": "Zulu",
    "und": "another script",  # letters mostly outside the Latin script that langid.py still calls English
}


def note_for(lang: str) -> str:
    """The check-worthiness note of a sentence in ``lang``."""
    return f"not English (reads as {LANGUAGE_NAMES.get(lang, lang)})"


def common_words(sentence: str) -> list[str]:
    """The sentence's words that are no names, lower-cased: its first word and every word that
    does not start with a capital. A list of names ("Augustus, Tiberius, Caligula, Claudius,
    and Nero.", "… include Maribor, Ptuj, Kranj …") tells nothing of the language it is
    written in, and langid.py reads such names as Latin or Slovenian."""
    words = _WORD.findall(sentence)
    return [w.lower() for i, w in enumerate(words) if i == 0 or not w[0].isupper()]


def latin_share(text: str) -> tuple[float, int]:
    """(share of the letters in Latin script, number of letters); (1.0, 0) without letters."""
    letters = [ch for ch in text if ch.isalpha()]
    if not letters:
        return 1.0, 0
    latin = sum(unicodedata.name(ch, "").startswith("LATIN") for ch in letters)
    return latin / len(letters), len(letters)


def _spacy_stop_words(code: str) -> frozenset[str]:
    import spacy.lang

    path = Path(spacy.lang.__path__[0]) / code / "stop_words.py"
    if not code.isalpha() or not path.is_file():
        return frozenset()
    spec = importlib.util.spec_from_file_location(f"_claimscope_stop_words_{code}", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        return frozenset(w.lower() for w in module.STOP_WORDS)
    except Exception:  # a list spaCy cannot give is no evidence, not an error
        return frozenset()


@dataclass(frozen=True)
class Reading:
    """How the guard read one sentence: ``lang`` is None when it reads as English (or cannot be
    judged), else the other language's code; ``english_words`` and ``words`` feed rule 4."""

    lang: str | None
    english_words: int
    words: int
    how: str  # "script", "stop words", "langid", "too short", "text"


class LanguageGuard:
    """Judges sentences (see the module docstring). One per workbench (core/workbench.py), shared by
    its pipelines; the identifier loads only when a sentence reaches rule 3 (or rule 1, to name the
    language), so an English answer usually never loads it."""

    def __init__(self, identifier: LanguageIdentifier | None = None) -> None:
        self._identifier = identifier

    @property
    def identifier(self) -> LanguageIdentifier:
        if self._identifier is None:
            self._identifier = LanguageIdentifier()
        return self._identifier

    @cached_property
    def _english_stop_words(self) -> frozenset[str]:
        from spacy.lang.en.stop_words import STOP_WORDS  # spaCy's own list; the parser is loaded anyway

        return frozenset(w.lower() for w in STOP_WORDS)

    def read(self, sentence: str) -> Reading:
        share, letters = latin_share(sentence)
        if letters >= MIN_SCRIPT_LETTERS and share < 0.5:
            lang, _ = self.identifier.classify(sentence)
            return Reading(lang if lang != "en" else "und", 0, len(_WORD.findall(sentence)), "script")
        words = common_words(sentence)
        english = sum(w.replace("’", "'") in self._english_stop_words for w in words)
        if len(words) < MIN_WORDS:
            return Reading(None, english, len(words), "too short")
        if english >= 2 and english >= ENGLISH_SHARE * len(words):
            return Reading(None, english, len(words), "stop words")
        lang, p = self.identifier.classify(" ".join(words))
        if lang not in READ_AS_ENGLISH and p >= MIN_PROBABILITY and any(w in self._foreign_stop_words for w in words):
            return Reading(lang, english, len(words), "langid")
        return Reading(None, english, len(words), "langid")

    @cached_property
    def _foreign_stop_words(self) -> frozenset[str]:
        import spacy.lang

        codes = sorted(d.name for d in Path(spacy.lang.__path__[0]).iterdir() if d.name not in ("en", "xx"))
        return frozenset().union(*(_spacy_stop_words(c) for c in codes)) - self._english_stop_words

    def read_text(self, sentences: list[str]) -> list[Reading]:
        """Each sentence's reading, with rule 4: in a text mostly in one other language, a
        sentence without any English stop word is taken to be in it."""
        readings = [self.read(s) for s in sentences]
        main = main_language(readings)
        if main is None:
            return readings
        return [Reading(main, r.english_words, r.words, "text")
                if r.lang is None and r.english_words == 0 and r.words >= 1 else r for r in readings]

    def document_language(self, text: str, sentences: int = 40) -> str | None:
        """The other language a document is written in (None: English, or too little to tell),
        read on its first ``sentences`` sentences (a rough split at ., ! or ? and line breaks is
        enough to tell a language): for the warning about given documents the verifier cannot read."""
        parts = [p for p in _ROUGH_SENTENCES.split(text) if p.strip()][:sentences]
        return main_language([self.read(p) for p in parts])


_ROUGH_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")


def main_language(readings: list[Reading]) -> str | None:
    """The other language most of the judged readings are in (rule 4), or None."""
    judged = [r for r in readings if r.how != "too short"]
    foreign = Counter(r.lang for r in judged if r.lang is not None)
    if not foreign or sum(foreign.values()) * 2 <= len(judged):
        return None
    return foreign.most_common(1)[0][0]


def mark_other_languages(claims: list[Claim], guard: LanguageGuard) -> list[Claim]:
    """``claims`` with those whose sentence reads as another language made not checkable, noted
    :func:`note_for` their language. A claim's sentence is its ``context`` (the sentence it was
    rewritten from) or its own text; a claim already not checkable keeps its note."""
    sentences = list(dict.fromkeys(c.context or c.text for c in claims))
    lang = {s: r.lang for s, r in zip(sentences, guard.read_text(sentences), strict=True)}
    return [replace(c, checkable=False, note=note_for(lang[c.context or c.text]))
            if c.checkable and lang[c.context or c.text] is not None else c for c in claims]


def other_languages(texts: list[str], guard: LanguageGuard) -> Counter[str]:
    """How many of ``texts`` (a run's checked claims) read as each other language: what the
    warnings of a run made in every language report (the CLI's stderr line, the workbench's
    notification)."""
    return Counter(r.lang for r in guard.read_text(texts) if r.lang is not None) if texts else Counter()


def language_names(langs: Counter[str], most: int | None = None) -> str:
    """"Spanish, German": the languages of :func:`other_languages`, most frequent first."""
    return ", ".join(LANGUAGE_NAMES.get(lang, lang) for lang, _ in langs.most_common(most))
