"""Decomposers: sentence and rules (coordination, apposition, relative clauses, pronouns,
numbers), check-worthiness, spans."""

from __future__ import annotations

import json

import pytest

from core.decompose import SentenceDecomposer, make_decomposer
from core.decompose.rules import RulesDecomposer, check_worthiness
from core.errors import InputError


@pytest.fixture(scope="module")
def rules():
    return RulesDecomposer()


def texts(claims):
    return [c.text for c in claims]


def test_coordinated_predicates_and_objects_share_the_subject(rules):
    out = texts(rules.decompose("Marie Curie was a Polish-born physicist. She discovered radium and polonium and won two Nobel Prizes."))
    assert out == [
        "Marie Curie was Polish-born.",  # "X-born" is a nationality, apart as FActScore's annotators write it
        "Marie Curie was a physicist.",
        "Marie Curie discovered radium.",
        "Marie Curie discovered polonium.",
        "Marie Curie won two Nobel Prizes.",
    ]


def test_auxiliary_is_shared_only_where_needed_and_birth_details_split(rules):
    out = texts(rules.decompose("Marie Curie was a physicist. She was born in Warsaw in 1867 and moved to Paris in 1891."))
    # "born in X in Y": one claim per detail; another verb's adjuncts split too (one fact each)
    assert out[1:] == ["Marie Curie was born in Warsaw.", "Marie Curie was born in 1867.",
                       "Marie Curie moved to Paris.", "Marie Curie moved in 1891."]


def test_appositive_becomes_its_own_claim(rules):
    out = texts(rules.decompose("Albert Einstein, a theoretical physicist, developed the theory of relativity."))
    assert out == ["Albert Einstein developed the theory of relativity.", "Albert Einstein was a theoretical physicist."]


def test_nonrestrictive_relative_clause_and_possessive_pronoun(rules):
    text = (
        "Lanny Flaherty is an American actor born on December 18, 1949, in Pensacola, Florida. "
        "He has appeared in many films throughout his career, which began in the late 1970s."
    )
    out = texts(rules.decompose(text))
    assert out[:7] == [
        "Lanny Flaherty is American.", "Lanny Flaherty is an actor.",
        "Lanny Flaherty was born on December 18, 1949.", "Lanny Flaherty was born in Pensacola.",
        "Pensacola is in Florida.",
        # one claim per adjunct; the claim names the subject first, so its "his" is unambiguous and stays
        "Lanny Flaherty has appeared in many films.", "Lanny Flaherty has appeared throughout his career.",
    ]
    assert "Lanny Flaherty's career began in the late 1970s." in out


def test_coordinated_subjects_are_not_split(rules):
    assert texts(rules.decompose("Tom and Jerry met in 1940.")) == ["Tom and Jerry met in 1940."]


def test_not_checkable_sentences_are_kept_with_the_reason(rules):
    claims = rules.decompose(
        "Paris is in France. What is the capital of Peru? I'm sorry, but I cannot find information about "
        "that person. You should drink more water. I think Paris is beautiful."
    )
    assert [(c.checkable, c.note) for c in claims] == [
        (True, None), (False, "question"), (False, "abstention"), (False, "advice"), (False, "opinion"),
    ]
    assert check_worthiness("As an AI language model, I cannot browse the web.") == "abstention"
    assert check_worthiness("The Eiffel Tower is 330 metres tall.") is None


def test_spans_point_into_the_input(rules):
    text = "Marie Curie was a physicist. She discovered radium and polonium."
    for c in rules.decompose(text):
        piece = text[c.span[0] : c.span[1]]
        assert piece and piece.split()[-1].rstrip(".") in c.text


def test_factscore_answer_yields_more_atomic_claims_than_sentences(rules, data_dir):
    row = json.loads((data_dir / "fixtures" / "factscore_dev_4.jsonl").read_text().splitlines()[0])
    claims = rules.decompose(row["output"])
    n_sentences = len(row["annotations"])
    assert len(claims) > n_sentences
    # a claim may open with a quoted title ('"The Sopranos" is a show.')
    assert all(c.text.endswith(".") and c.text.lstrip('"“')[0].isupper() for c in claims if c.checkable)
    assert not any(c.text.startswith(("He ", "She ")) for c in claims)  # pronouns resolved


def test_sentence_decomposer_and_factory(splitter):
    claims = SentenceDecomposer(splitter).decompose("One sentence here. And another one.")
    assert [(c.text, c.span) for c in claims] == [("One sentence here.", (0, 18)), ("And another one.", (19, 35))]
    with pytest.raises(InputError, match="unknown decomposer"):
        make_decomposer("llm-9000", lambda: splitter)


def test_nationality_and_occupations_split_as_people_do(rules):
    out = texts(rules.decompose("Chuck Berry was an American guitarist and singer."))
    assert out == ["Chuck Berry was American.", "Chuck Berry was a guitarist.", "Chuck Berry was a singer."]
    # FActScore InstructGPT dev: a list of occupations parsed as an appositive is still a list
    out = texts(rules.decompose("Terence Blacker is an English author, journalist, and publisher."))
    assert out == ["Terence Blacker is English.", "Terence Blacker is an author.", "Terence Blacker is a journalist.",
                   "Terence Blacker is a publisher."]


def test_pronouns_resolve_to_the_answers_subject_not_the_last_name(rules):
    text = ("Eliza Dushku is an actress. She starred in Buffy the Vampire Slayer with Sarah Michelle Gellar. "
            "She also had recurring roles on Angel.")
    out = texts(rules.decompose(text))
    assert "Eliza Dushku had recurring roles on Angel." in out  # "also" points back at the answer: dropped
    assert not any(c.startswith("Sarah Michelle Gellar had") for c in out)
    # a pronoun subject names nobody: a name later in the sentence is not its referent
    out = texts(rules.decompose("He has notable wins over fighters such as Kyoji Horiguchi and Takeya Mizugaki."))
    assert {"He has notable wins over fighters.", "He has notable wins over Kyoji Horiguchi.",
            "He has notable wins over Takeya Mizugaki."} <= set(out)


def test_it_resolves_to_a_subject_that_is_a_thing_unless_it_stands_for_nothing_or_for_another(rules):
    """FEVERFact's gold facts name what "It" is (Wikipedia intros of countries, companies, films):
    "It was founded in 1921 …" is "Douglas Aircraft Company was founded in 1921." (session 31)."""
    out = texts(rules.decompose("The United Kingdom is a country in Europe. It is the 21st-most populous country. "
                                "Two of its territories border France. Its capital is London."))
    assert out[1:] == ["The United Kingdom is the 21st-most populous country.",
                       "Two of the United Kingdom's territories border France.", "The United Kingdom's capital is London."]
    # a common-noun subject is a thing too; its "he" / "she" would mean somebody else
    assert texts(rules.decompose("The jackfruit is a species of tree. It is native to South Asia. Its wood is used.")) == [
        "The jackfruit is a species of tree.", "The jackfruit is native to South Asia.", "The jackfruit's wood is used."]
    # expletive "it", a title, and an "its" or object "it" whose clause has a subject of its own stay
    kept = ["It is known that Japan has many volcanoes.", "It was not until 1868 that the capital moved to Tokyo.",
            "The team plays its games in Osaka.", 'Its best-known film is "Who Done It".', "People visit it often."]
    out = texts(rules.decompose("Japan is an island country. " + " ".join(kept)))
    assert out[1:4] == kept[:3] and out[4] == 'Japan\'s best-known film is "Who Done It".' and out[5:] == kept[4:]
    # a person's answer: "it" is something else ("It is one of the two pillars of modern physics")
    out = texts(rules.decompose("Albert Einstein was a physicist. He developed relativity. It is a pillar of physics."))
    assert out[-1] == "It is a pillar of physics."


def test_as_written_keeps_the_pronouns_and_splits_the_same(rules):
    """FActScore's style (``claimscope decompose`` without --standalone): the same claims, the
    pronouns as the sentence writes them."""
    text = "Marie Curie was a physicist. She discovered radium and polonium. Her husband was Pierre Curie."
    written = RulesDecomposer(nlp=rules.nlp, resolve_pronouns=False).decompose(text)
    standalone = rules.decompose(text)
    assert texts(written)[1:] == ["She discovered radium.", "She discovered polonium.", "Her husband was Pierre Curie."]
    assert texts(standalone)[1:] == ["Marie Curie discovered radium.", "Marie Curie discovered polonium.",
                                     "Marie Curie's husband was Pierre Curie."]
    assert [c.span for c in written] == [c.span for c in standalone]
    assert make_decomposer("rules", lambda: None, standalone=False).resolve_pronouns is False


def test_relative_clause_on_the_predicate_noun_and_born_with_places(rules):
    out = texts(rules.decompose("Sharad Kumar is an Indian athlete who specializes in the high jump. "
                                "He was born on 22 August 1992 in Moradabad, Uttar Pradesh, India."))
    assert out == [
        "Sharad Kumar is Indian.", "Sharad Kumar is an athlete.", "Sharad Kumar specializes in the high jump.",
        "Sharad Kumar was born on 22 August 1992.", "Sharad Kumar was born in Moradabad.",
        "Moradabad is in Uttar Pradesh.", "Uttar Pradesh is in India.",
    ]


def test_a_lifespan_in_brackets_is_a_birth_and_a_death(rules):
    # FActScore's annotators write "(1922-1997)" as two facts, and no other claim carries the bracket
    out = texts(rules.decompose("Gonzalo Fonseca (1922-1997) was a Uruguayan-born sculptor and architect."))
    assert out == ["Gonzalo Fonseca was Uruguayan-born.", "Gonzalo Fonseca was a sculptor.", "Gonzalo Fonseca was an architect.",
                   "Gonzalo Fonseca was born in 1922.", "Gonzalo Fonseca died in 1997."]
    out = texts(rules.decompose("Ada Lovelace (10 December 1815 – 27 November 1852) was an English mathematician."))
    assert out[-2:] == ["Ada Lovelace was born on 10 December 1815.", "Ada Lovelace died on 27 November 1852."]
    # in a sentence about films, a life is not read as a work's run
    out = texts(rules.decompose("Katsunosuke Hori (1880–1954) was a Japanese actor, known for his roles in silent films."))
    assert "Katsunosuke Hori died in 1954." in out and not any("ran from" in c or "(" in c for c in out)
    # a subject with an article, or one the sentence calls an organisation, has no life
    assert texts(rules.decompose("The Cold War (1947–1991) was a period of tension.")) == [
        "The Cold War (1947–1991) was a period of tension."]
    assert not any("born" in c for c in texts(rules.decompose("Nirvana (1987–1994) was an American rock band.")))
    # a bare year after "born" takes "in"
    assert texts(rules.decompose("Julia Faye (born 1942) is an American actress."))[-1] == "Julia Faye was born in 1942."
    # a birth in brackets after another name is that name's, not the subject's
    out = texts(rules.decompose("She married the actor John Smith (born 1950) in 1980."))
    assert "John Smith was born in 1950." in out and "She was born in 1950." not in out


def test_a_list_of_places_is_no_place_chain_and_a_country_with_and_is_one_name(rules):
    # "in A, B, and C" had read "A is in B"; a chain with no "and" still reads where a place lies
    assert texts(rules.decompose("She lived in Paris, London, and Rome.")) == [
        "She lived in Paris.", "She lived in London.", "She lived in Rome."]
    assert "Houston is in Texas." in texts(rules.decompose("He was born in Houston, Texas, and raised in Dallas."))
    assert texts(rules.decompose("He was born in Bosnia and Herzegovina.")) == ["He was born in Bosnia and Herzegovina."]
    assert texts(rules.decompose("She grew up in Trinidad and Tobago and Jamaica.")) == [
        "She grew up in Trinidad and Tobago.", "She grew up in Jamaica."]


def test_an_example_is_a_kind_in_its_own_number_and_a_list_number_is_no_claim(rules):
    out = texts(rules.decompose("Catecholamines include neurotransmitters such as epinephrine and dopamine."))
    assert "Epinephrine is a neurotransmitter." in out and "Dopamine is a neurotransmitter." in out
    assert "Abbey Road is an album." in texts(rules.decompose("She released albums, including Abbey Road."))
    assert "Bonuses are profits." in texts(rules.decompose("Employees get profits such as bonuses and commissions."))
    # "1[2]. Fischer synthesis": the number alone is left when the marker is blanked
    assert [(c.text, c.checkable, c.note) for c in rules.decompose("1.")] == [("1.", False, "fragment")]


def test_a_paragraph_about_another_person_is_whom_its_pronouns_mean():
    standalone = RulesDecomposer(resolve_pronouns=True)
    answer = ("Ada Lovelace was an English mathematician. She worked on the Analytical Engine.\n\n"
              "Alan Turing was a British mathematician. He was born in London.")
    out = texts(standalone.decompose(answer))
    assert "Ada Lovelace worked on the Analytical Engine." in out and "Alan Turing was born in London." in out
    # a pronoun of the other gender than the text uses for its subject is someone else's, and stays
    out = texts(standalone.decompose("Marie Curie was a physicist. She married Pierre Curie in 1895. He died in 1906."))
    assert out[-1] == "He died in 1906."
    # a paragraph that points back ("her husband") is still about the answer's subject
    out = texts(standalone.decompose("Marie Curie was a physicist.\n\nPierre Curie was her husband. She met him in 1894."))
    assert "Marie Curie met him in 1894." in out


def test_an_occupation_hung_on_the_last_noun_is_a_noun_of_its_own(rules):
    # the parser hangs "writer" / "mathematician" on the last noun; "film" is that noun's, not an item
    assert texts(rules.decompose("He is a writer and film director.")) == ["He is a writer.", "He is a film director."]
    out = texts(rules.decompose("Alan Turing was a British mathematician and computer scientist."))
    assert "Alan Turing was a computer scientist." in out and not any("mathematician scientist" in c for c in out)
    assert texts(rules.decompose("He set school and district records.")) == ["He set school records.", "He set district records."]


def test_a_bracketed_acronym_is_no_claim_and_leaves_the_others(rules):
    assert texts(rules.decompose("Many families use education savings accounts (ESAs) and mutual funds to save.")) == [
        "Many families use education savings accounts.", "Many families use mutual funds to save."]
    assert texts(rules.decompose("He studied at the Massachusetts Institute of Technology (MIT) and Harvard.")) == [
        "He studied at the Massachusetts Institute of Technology.", "He studied at Harvard."]


def test_parenthetical_birth_and_coordinated_modifiers(rules):
    out = texts(rules.decompose("Beenie Man (born Anthony Moses Davis on August 22, 1973) is a Jamaican reggae and "
                                "dancehall artist. He is known for his aggressive and powerful striking style."))
    assert "Beenie Man was born on August 22, 1973." in out and "Beenie Man was born Anthony Moses Davis." in out
    assert "Beenie Man is a dancehall artist." in out
    assert not any("(" in c for c in out)
    assert "Beenie Man is known for his aggressive striking style." in out
    assert "Beenie Man is known for his powerful striking style." in out


def test_examples_after_including_become_claims_and_openers_drop(rules):
    out = texts(rules.decompose("Overall, Blacker worked for publications such as The Independent and The Guardian."))
    assert sorted(out) == sorted([
        "Blacker worked for publications.", "Blacker worked for The Independent.", "Blacker worked for The Guardian.",
        # what each example is said to be (the noun's lemma)
        "The Independent is a publication.", "The Guardian is a publication.",
    ])
    out = texts(rules.decompose("She has been involved in various charitable organizations such as the Red Cross."))
    assert "The Red Cross is a charitable organization." in out  # "various" says nothing about the Red Cross
    assert "True Lies is a film." in texts(rules.decompose("She starred in films such as True Lies."))  # a title, not a plural
    out = texts(rules.decompose("He is the author of over 20 books, including novels and non-fiction."))
    assert not any(c.endswith((" non.", " of.")) for c in out)  # a hyphenated word is not a list


def test_every_claim_keeps_its_span_source_sentence_and_check_worthiness(rules, data_dir):
    row = json.loads((data_dir / "fixtures" / "factscore_dev_4.jsonl").read_text().splitlines()[0])
    text = row["output"] + " What else did he do?"
    claims = rules.decompose(text)
    assert claims[-1].checkable is False and claims[-1].note == "question"
    for c in claims[:-1]:
        assert c.checkable and c.context and c.context in text  # the source sentence, verbatim
        start = text.find(c.context)
        assert start <= c.span[0] < c.span[1] <= start + len(c.context)  # the span lies inside it


@pytest.fixture(scope="module")
def written(rules):
    """FActScore's style: the pronouns kept, as ``eval decompose`` scores by default."""
    return RulesDecomposer(nlp=rules.nlp, resolve_pronouns=False)


def test_a_name_with_an_ampersand_in_a_list_stays_whole(written):
    """"&" joins one name; the "and" after it still starts the next item (the parser chains
    "Pfizer" to the second "Johnson")."""
    out = texts(written.decompose("He worked for Johnson & Johnson and Pfizer."))
    assert out == ["He worked for Johnson & Johnson.", "He worked for Pfizer."]
    out = texts(written.decompose("He has worked for several companies, including Johnson & Johnson and Pfizer."))
    assert "He has worked for Johnson & Johnson." in out and "He has worked for Pfizer." in out
    assert "Johnson & Johnson is a company." in out
    out = texts(written.decompose("She starred in Rizzoli & Isles and Law & Order."))
    assert out == ["She starred in Rizzoli & Isles.", "She starred in Law & Order."]


def test_quoted_titles_are_kept_whole_and_lists_of_them_split(written):
    """A quoted title is one name: never dropped to 'for his album ""', never split on its
    "and"; a list of quoted titles gives one claim per title (FActScore §3.1)."""
    out = texts(written.decompose('He won the Grammy Award in 2001 for his album "Art and Life".'))
    assert 'He won the Grammy Award for his album "Art and Life".' in out
    assert not any('""' in c or c.count('"') % 2 for c in out)
    out = texts(written.decompose('Blacker\'s first book, "The Transfer," was published in 1982.'))
    # a subject gets one claim per fact: by the name set off by commas, the noun beside it as a claim of its own
    assert out == ['"The Transfer" was published in 1982.', '"The Transfer" is Blacker\'s first book.']
    out = texts(written.decompose("Her father Philip R. Dushku was a teacher in Boston."))
    assert out == ["Her father was a teacher in Boston.", "Philip R. Dushku is her father."]
    out = texts(written.decompose('His albums include "Sweet Baby James", "Mud Slide Slim and the Blue Horizon", and "JT".'))
    assert out == ['His albums include "Sweet Baby James".', 'His albums include "Mud Slide Slim and the Blue Horizon".',
                   'His albums include "JT".']
    out = texts(written.decompose('He released several albums, including "Sweet Baby James" and "Hourglass".'))
    assert 'He released "Sweet Baby James".' in out and 'He released "Hourglass".' in out
    assert '"Hourglass" is an album.' in out


def test_adverbial_clauses_become_facts_of_their_own(written):
    """FActScore's annotators write the fact of an adverbial clause apart from its main clause,
    in its sentence's tense; the claim's span covers the clause's verb."""
    text = "After appearing in several commercials, Dushku landed her first role in the film That Night."
    claims = written.decompose(text)
    assert texts(claims) == ["Dushku landed her first role in the film That Night.",
                             "Dushku appeared in several commercials."]
    assert claims[1].span[0] == text.index("appearing")
    out = texts(written.decompose('She began her acting career at the age of 10, starring in the film "That Night".'))
    assert out == ["She began her acting career at the age of 10.", 'She starred in the film "That Night".']
    out = texts(written.decompose("He left the club in 2005 before joining Chelsea."))
    assert out == ["He left the club in 2005.", "He joined Chelsea."]
    out = texts(written.decompose("Her father was a teacher, while her mother was a professor."))
    assert out == ["Her father was a teacher.", "Her mother was a professor."]
    # a present-tense sentence keeps its tense (a scientific claim is not made a past event)
    out = texts(written.decompose("The drug lowers blood pressure in adults, reducing the risk of stroke."))
    assert out == ["The drug lowers blood pressure in adults.", "The drug reduces the risk of stroke."]
    out = texts(written.decompose("The vaccines protect children against measles, preventing most deaths."))
    assert out == ["The vaccines protect children against measles.", "The vaccines prevent most deaths."]
    # a clause about the whole main clause ("making him …") is not a fact about the subject
    out = texts(written.decompose("He won the title in 2004, making him the youngest champion."))
    assert not any(c.startswith("He made") for c in out)


def test_nationality_compounds_and_examples_of_a_plural_noun_up_the_chain(rules):
    # "Saudi Arabian-born" is one nationality; spaCy tags "English" as a LANGUAGE
    out = texts(rules.decompose("Osama bin Laden was a Saudi Arabian-born militant. Terence Blacker is an English author."))
    assert out == ["Osama bin Laden was Saudi Arabian-born.", "Osama bin Laden was a militant.",
                   "Terence Blacker is English.", "Terence Blacker is an author."]
    # the parser hangs "including" on "La Liga"; the examples are teams, the plural noun up the chain
    out = texts(rules.decompose("He played as a midfielder for several teams in Spain's La Liga, including Real Madrid and "
                                "Deportivo La Coruña."))
    assert "He played as a midfielder for Real Madrid." in out
    assert "He played as a midfielder for Deportivo La Coruña." in out
    assert not any("teams in Real Madrid" in c for c in out)
    # "a number of artists including A": A is one of the artists, not "a number of A"
    out = texts(rules.decompose("Beenie Man has collaborated with a number of artists including Janet Jackson and Mya."))
    assert "Beenie Man has collaborated with Janet Jackson." in out
    assert not any("a number of Janet Jackson" in c for c in out)


def test_lists_the_parser_swallows_who_on_a_place_and_hyphenated_prefixes(rules):
    # the parser hangs "model" on "titleholder" (nmod): still one claim per item, nationality apart
    out = texts(rules.decompose("She is a Venezuelan model and beauty pageant titleholder."))
    assert out == ["She is Venezuelan.", "She is a model.", "She is a beauty pageant titleholder."]
    # "who" hung on "the United Kingdom" describes the boxer
    out = texts(rules.decompose("Daniel Dubois is a boxer from the United Kingdom who was born on September 6, 1997."))
    assert out == ["Daniel Dubois is from the United Kingdom.", "Daniel Dubois is a boxer.",
                   "Daniel Dubois was born on September 6, 1997."]
    # "co-", "re-" stay on their word: "re-released" is not "released"
    out = texts(rules.decompose("Clare Kramer is an actress who co-starred in Bring It On. He re-released it in 2001."))
    assert out == ["Clare Kramer is an actress.", "Clare Kramer co-starred in Bring It On.", "Clare Kramer re-released it in 2001."]


def test_a_participle_set_off_by_commas_is_a_fact_about_the_subject(rules):
    out = texts(rules.decompose("The Eiffel Tower is a wrought-iron lattice tower in Berlin, designed by Gustave Eiffel's "
                                "company and completed in 1889. Mount Everest, located in the Himalayas, is Earth's "
                                "highest mountain."))
    assert out == ["The Eiffel Tower is a wrought-iron lattice tower in Berlin.",
                   "The Eiffel Tower was designed by Gustave Eiffel's company.", "The Eiffel Tower was completed in 1889.",
                   "Mount Everest is Earth's highest mountain.", "Mount Everest is located in the Himalayas."]
    # "known" needs no comma: FActScore's people write "X is best known for …" apart
    out = texts(rules.decompose("Eliza Dushku is an actress best known for her role in Dollhouse."))
    assert out == ["Eliza Dushku is an actress.", "Eliza Dushku is best known for her role in Dollhouse."]


def test_relative_clauses_keep_to_their_own_noun(written):
    out = texts(written.decompose(
        "James Taylor is best known for his soft-rock music, which often contains introspective lyrics, and his "
        "distinctive voice. He played for Kawasaki Frontale until 2019, during which he won the J1 League in 2017 and 2018."))
    # the clause is on "music", not on "music and voice"; "during which" (an adverbial clause to the
    # parser) is a fact of its own, one claim per year
    assert out == ["James Taylor is best known for his soft-rock music.", "James Taylor is best known for his distinctive voice.",
                   "His soft-rock music often contains introspective lyrics.", "He played for Kawasaki Frontale.",
                   "He played until 2019.", "He won the J1 League in 2017.", "He won the J1 League in 2018."]


def test_shared_qualities_each_nationality_and_a_birthplace_hung_on_the_copula(written):
    out = texts(written.decompose("Carlos Santana is a Mexican and American guitarist and songwriter born on July 20, "
                                  "1947, in Autlán de Navarro, Mexico. He is an accomplished violinist and guitarist."))
    assert out == ["Carlos Santana is Mexican.", "Carlos Santana is American.", "Carlos Santana is a guitarist.",
                   "Carlos Santana is a songwriter.", "Carlos Santana was born on July 20, 1947.",
                   "Carlos Santana was born in Autlán de Navarro.",
                   "Autlán de Navarro is in Mexico.",  # a town tagged ORG, after "in" and before a country
                   "He is an accomplished violinist.", "He is an accomplished guitarist."]


def test_example_lists_end_where_they_end_and_counts_are_no_identities(written):
    out = texts(written.decompose(
        "Beenie Man has won several awards including the Grammy Award for Best Reggae Album in 2001. "
        "He has a record of 13 wins (12 KOs), 0 losses and 0 draws. "
        "He released two solo albums, The Prince in 2017 and Emotional Rollercoaster in 2018."))
    assert out == ["Beenie Man has won several awards.",  # the year is the Grammy's, not every award's
                   "Beenie Man has won the Grammy Award for Best Reggae Album in 2001.",
                   "He has a record of 13 wins (12 KOs).", "He has 0 losses.", "He has 0 draws.",
                   "He released two solo albums.", "He released The Prince in 2017 and Emotional Rollercoaster in 2018."]
    assert not any("is two" in c or "is 12" in c or "is an award" in c for c in out)


def test_both_parties_of_between_stay_in_one_claim(rules):
    """The parser hangs the second party of a long "between A and B" on the verb; split per
    adjunct it made "The Battle of Hastings took place in 1066 and an English army under …"."""
    out = texts(rules.decompose(
        "The Battle of Hastings took place in 1066 between the Norman-French army of William, Duke of "
        "Normandy, and an English army under King Harold Godwinson."))
    assert out == ["The Battle of Hastings took place in 1066.",
                   "The Battle of Hastings took place between the Norman-French army of William, Duke of Normandy, "
                   "and an English army under King Harold Godwinson."]


def test_a_ranks_reference_point_is_no_origin(rules):
    """"X is a singer from Texas" gives "X is from Texas", but "from the Sun" after "the third
    planet" is where the ranking counts from: it made "Earth is from the Sun." and, with the
    parser's "the Sun and the only known planet", "Earth is from the only known planet."."""
    out = texts(rules.decompose(
        "Earth is the third planet from the Sun and the only known planet to support life. "
        "Neptune is the most distant planet from the Sun. Shakira is a singer from Colombia."))
    assert out == ["Earth is the third planet from the Sun and the only known planet to support life.",
                   "Neptune is the most distant planet from the Sun.",
                   "Shakira is from Colombia.", "Shakira is a singer."]


def test_participles_become_the_right_past_and_elided_clauses_stay_whole(rules):
    """"killing" was "killled" (the doubled-consonant rule read "ll" as a doubling) and "striking"
    was "striked"; "…, but strawberries are not" became the claim "Strawberries are not."; a
    place's closing comma was left in the claim ("at Kitty Hawk, on …")."""
    out = texts(rules.decompose(
        "The Titanic sank on its maiden voyage after striking an iceberg in April 1912, killing more than "
        "1,500 people. Bananas are berries, but strawberries are not. The Wright brothers made the first "
        "powered flight at Kitty Hawk, North Carolina, on December 17, 1903."))
    assert out == ["The Titanic sank on its maiden voyage.", "The Titanic struck an iceberg in April 1912.",
                   "The Titanic killed more than 1,500 people.",
                   "Bananas are berries, but strawberries are not.",
                   "The Wright brothers made the first powered flight at Kitty Hawk on December 17, 1903.",
                   "Kitty Hawk is in North Carolina."]


def test_a_name_stays_with_the_noun_that_carries_it_and_a_title_is_no_adjunct(rules):
    """"the chemical symbol Au" made "Gold has the chemical symbol." + "Gold has Au."; "published On
    the Origin of Species in 1859" was split at the title's "On" as if it were a preposition, and
    made "Charles Darwin published in 1859."."""
    out = texts(rules.decompose(
        "Gold has the chemical symbol Au and an atomic number of 79. "
        "Charles Darwin published On the Origin of Species in 1859."))
    assert out == ["Gold has the chemical symbol Au.", "Gold has an atomic number of 79.",
                   "Charles Darwin published On the Origin of Species in 1859."]


def test_a_thing_is_no_her_and_a_rate_keeps_its_period(rules):
    """An answer about Jupiter: "Frida Kahlo was known for her self-portraits" became "… for
    Jupiter's self-portraits" (the answer's subject is a thing, never called "she"); "die …
    each year" was split into "… die from tobacco use." and "… die each year."."""
    out = texts(rules.decompose(
        "Jupiter is larger than all the other planets combined. About 8 million people die from tobacco "
        "use each year. Frida Kahlo was known for her self-portraits."))
    assert out == ["Jupiter is larger than all the other planets combined.",
                   "About 8 million people die from tobacco use each year.",
                   "Frida Kahlo was known for her self-portraits."]


def test_a_finite_verb_joined_to_an_infinitive_is_the_roots_and_a_hyphen_is_part_of_a_name(rules):
    """The parser joins "was developed" to "to edit", so the claim read "… allows scientists to
    edit DNA at precise locations and was developed by …"; the answer's subject was "Cas9" for
    "CRISPR-Cas9", and "It was first used …" became "Cas9 was first used …"."""
    out = texts(rules.decompose(
        "CRISPR-Cas9 allows scientists to edit DNA at precise locations and was developed by Jennifer Doudna "
        "and Emmanuelle Charpentier. It was first used in human cells in 2013."))
    assert out == ["CRISPR-Cas9 allows scientists to edit DNA at precise locations.",
                   "CRISPR-Cas9 was developed by Jennifer Doudna.", "CRISPR-Cas9 was developed by Emmanuelle Charpentier.",
                   "CRISPR-Cas9 was first used in human cells.", "CRISPR-Cas9 was first used in 2013."]


def test_known_for_after_two_occupations_and_today_are_read_as_people_write_them(rules):
    """The parser hangs "chiefly known for …" on the copula when two occupations precede it, and
    the participle went with each: "Ada Lovelace was a mathematician, chiefly known for her work
    …" and "… was a writer, chiefly known for …". A fronted "Today" was an adjunct of its own
    ("Today Ada Lovelace Day is celebrated.")."""
    out = texts(rules.decompose(
        "Ada Lovelace was an English mathematician and writer, chiefly known for her work on the Analytical "
        "Engine. Today, Ada Lovelace Day is celebrated on the second Tuesday of October."))
    assert out == ["Ada Lovelace was English.", "Ada Lovelace was a mathematician.", "Ada Lovelace was a writer.",
                   "Ada Lovelace was chiefly known for her work on the Analytical Engine.",
                   "Ada Lovelace Day is celebrated on the second Tuesday of October."]


def test_the_domains_of_one_occupation_are_no_list_of_occupations(rules):
    """"a Venezuelan model and beauty pageant titleholder" is two occupations the parser hangs on
    the last noun (a test above); "a film and television actress" has the same parse and one
    occupation: it made "Nina Ray is a film.", and "Acme is a software."."""
    out = texts(rules.decompose("Nina Ray is a film and television actress. Acme is a software and hardware company."))
    assert out == ["Nina Ray is a film actress.", "Nina Ray is a television actress.",
                   "Acme is a software company.", "Acme is a hardware company."]


def test_a_name_with_of_is_the_whole_subject(rules):
    """"It" in an answer about the Statue of Liberty was "The Statue"."""
    out = texts(rules.decompose("The Statue of Liberty is a colossal sculpture on Liberty Island. "
                                "It was dedicated on October 28, 1886."))
    assert out == ["The Statue of Liberty is a colossal sculpture on Liberty Island.",
                   "The Statue of Liberty was dedicated on October 28, 1886."]


def test_a_range_is_one_fact_with_what_lies_between_its_ends(rules):
    """"range from -173 °C at night to 127 °C during the day" was four claims ("Temperatures range
    at night.", "Temperatures range to 127 °C."); a "from" and its "to" apart were split as two
    adjuncts; "from Paris to London in 1990" still splits off its year."""
    out = texts(rules.decompose("Temperatures range from -173 °C at night to 127 °C during the day. "
                                "The road runs from Lyon in the west to Turin. He moved from Paris to London in 1990."))
    assert out == ["Temperatures range from -173 °C at night to 127 °C during the day.",
                   "The road runs from Lyon in the west to Turin.",
                   "He moved from Paris to London.", "He moved in 1990."]


def test_a_quantitys_scale_stays_with_it(rules):
    """The small parser reads "Celsius" in "90 degrees Celsius" as a name in apposition to
    "degrees" (as "the film American Pie"), and the split made "Water boils at 90 degrees." and
    "Water boils at Celsius at sea level.": the first a different claim, the second nonsense."""
    out = texts(rules.decompose("Water boils at 90 degrees Celsius at sea level. "
                                "The temperature in Death Valley reached 134 degrees Fahrenheit in 1913."))
    assert out == ["Water boils at 90 degrees Celsius at sea level.",
                   "The temperature in Death Valley reached 134 degrees Fahrenheit in 1913."]


def test_titles_with_years_a_title_after_the_list_and_kinds_of_examples(written):
    out = texts(written.decompose(
        "Taylor has won multiple Grammy Awards, including Best Pop Vocal Performance for his song \"You've Got a Friend\". "
        "She has appeared in various Brazilian soap operas, including \"Malhação\" (2003-2007), \"Negócio da China\" "
        "(2008), and \"Caminhos do Coração\" (2009-2010). Dushku had lead roles in other TV shows such as Tru Calling "
        "(2003–2005) and Dollhouse (2009–2010), for which she was a producer. Dubois has won several titles, including "
        "the British heavyweight title."))
    assert out[:2] == ["Taylor has won multiple Grammy Awards.",
                       "Taylor has won Best Pop Vocal Performance for his song \"You've Got a Friend\"."]
    for title in ("Malhação", "Negócio da China", "Caminhos do Coração"):
        assert f'She has appeared in "{title}".' in out and f'"{title}" is a Brazilian soap opera.' in out
    assert "Dushku had lead roles in Tru Calling." in out and "Dollhouse is a TV show." in out
    assert "Dubois has won the British heavyweight title." in out
    assert "Tru Calling ran from 2003 to 2005." in out  # the years are a fact of their own, not part of the title
    assert not any("is a title" in c or "Calling 2003" in c or "(" in c or "for which" in c for c in out)


def test_a_fronted_role_vague_spans_and_notable_examples(written):
    out = texts(written.decompose(
        "As a writer, Arbore was known for his political essays. Blacker has played in several bands over the years. "
        "Beenie Man has collaborated with a number of notable artists including Janet Jackson and Sean Paul. "
        "He has written and arranged hundreds of songs, including traditional folk styles such as doina."))
    assert out[:3] == ["Arbore was known for his political essays.", "Arbore was a writer.",
                       "Blacker has played in several bands over the years."]  # not "Blacker has played over the years."
    assert "Janet Jackson is a notable artist." in out and "Sean Paul is a notable artist." in out
    assert not any(c.endswith("are hundreds.") or c.endswith("are songs.") for c in out)


def test_a_where_clause_leaves_every_claim_and_keeps_its_place(written):
    out = texts(written.decompose(
        "He spent four seasons there before moving to Mallorca, where he played until his retirement in 2005. "
        "Barboza is a social media influencer with a large following on Instagram, where she shares her travel "
        "adventures and fashion tips. His family moved to Tijuana where he picked up the guitar and started playing "
        "with local bands. He attended St. Paul's School where he broke school and district records."))
    assert out == ["He spent four seasons there.", "He moved to Mallorca.",  # the clause left the "before" claim too
                   "He played until his retirement in 2005.",
                   "Barboza is a social media influencer with a large following on Instagram.",
                   "On Instagram she shares her travel adventures.", "On Instagram she shares her fashion tips.",
                   "His family moved to Tijuana.", "He picked up the guitar.", "He started playing with local bands.",
                   "He attended St. Paul's School.", "He broke school records.", "He broke district records."]


def test_kinds_of_the_nearer_noun_titles_without_inner_stops_and_a_title_list_of_origins(written):
    out = texts(written.decompose(
        "Barboza has worked as a model for various fashion brands and magazines, including Vogue and Elle. "
        "Some of his most popular works include \"Kill Your Darlings,\" \"The Twyning,\" and \"Ms Wiz: Supermodel.\" "
        "He received several honors, including the Order of Cultural Merit. "
        "He is the current British, Commonwealth and WBO International heavyweight champion."))
    assert "Vogue is a magazine." in out and "Elle is a magazine." in out  # not "a fashion brand"
    # "Some of X include A" → "A is one of X", as FActScore's annotators write it
    assert '"Kill Your Darlings" is one of his most popular works.' in out
    assert '"Ms Wiz: Supermodel" is one of his most popular works.' in out
    assert "The Order of Cultural Merit is an honor." in out
    assert "He is British." not in out  # a title's list of bodies, not his nationality


def test_a_relative_clause_splits_its_objects_and_a_shared_the(written):
    out = texts(written.decompose(
        "Santana is known for his distinctive guitar style, which incorporates elements of blues, jazz, and world "
        "music. He rose to fame in the late 1960s and early 1970s."))
    assert out[1:4] == ["His distinctive guitar style incorporates elements of blues.",
                        "His distinctive guitar style incorporates elements of jazz.",
                        "His distinctive guitar style incorporates elements of world music."]
    assert "He rose in the early 1970s." in out


def test_an_event_with_when_is_a_fact_of_its_own_a_state_is_not(written):
    out = texts(written.decompose("His career began in the 1980s when he won the Tastee Talent contest. "
                                  "When he was eight years old, his family moved to Tijuana."))
    assert out == ["His career began in the 1980s.", "He won the Tastee Talent contest.",
                   "When he was eight years old, his family moved to Tijuana."]


def test_a_works_year_in_brackets_is_a_fact_of_its_own(written):
    out = texts(written.decompose(
        "Dushku has starred in various films including True Lies (1994) and Jay and Silent Bob Strike Back (2001). "
        "She is best known for the series Buffy the Vampire Slayer (1998–2003). "
        "She has appeared in soap operas, including \"Malhação\" (2003-2007). Marie Curie (1867–1934) was a chemist."))
    for fact in ("True Lies was released in 1994.", "Jay and Silent Bob Strike Back was released in 2001.",
                 "Buffy the Vampire Slayer ran from 1998 to 2003.", '"Malhação" ran from 2003 to 2007.'):
        assert fact in out
    assert not any("Curie ran" in c or "Curie was released" in c for c in out)  # a life, not a work


def test_a_participle_after_a_quoted_comma_splits_its_objects(written):
    out = texts(written.decompose('He continued to play along the busy "Tijuana Strip," perfecting his style and sound.'))
    assert out == ['He continued to play along the busy "Tijuana Strip".', "He perfected his style.", "He perfected his sound."]


def test_born_set_off_by_commas_is_a_participle_even_as_the_parsers_root(written):
    out = texts(written.decompose("Beenie Man, born Anthony Moses Davis on August 22, 1973, is a dancehall artist."))
    assert out[:2] == ["Beenie Man was born Anthony Moses Davis.", "Beenie Man was born on August 22, 1973."]
    assert not any("Man," in c for c in out)


def test_an_appositive_splits_its_modifiers_and_its_participle(written):
    out = texts(written.decompose("Arbore was part of the staff of Românul, a political and literary newspaper "
                                  "published in Bucharest, Romania."))
    assert out == ["Arbore was part of the staff of Românul.", "Românul was a political newspaper.",
                   "Românul was a literary newspaper.", "Românul was published in Bucharest.", "Bucharest is in Romania."]


def test_a_place_after_coordinated_verbs_without_objects_is_each_ones(written):
    out = texts(written.decompose("Curie was born and raised in Warsaw. She lives and works in London. "
                                  "She has produced and starred in the series Dollhouse."))
    assert out[:4] == ["Curie was born in Warsaw.", "Curie was raised in Warsaw.", "She lives in London.",
                       "She works in London."]  # not "Curie was born." / a lost "She lives"
    assert "She has produced in the series Dollhouse." not in out  # "produced" wants an object


@pytest.mark.parametrize("text, claims", [
    pytest.param("He held the British title from 2019 to 2020 in London.",
                 ["He held the British title from 2019 to 2020.", "He held the British title in London."],
                 id="from-and-to-are-one-span"),
    pytest.param("He has released more than 20 albums, many of which have been international successes. "
                 "Dubois has built an impressive record with 16 wins, 15 of which were by knockout.",
                 ["He has released more than 20 albums.", "Many of the albums have been international successes.",
                  "Dubois has built an impressive record with 16 wins.", "15 of the wins were by knockout."],
                 id="many-of-which-is-about-the-plural"),
    pytest.param("Ko Itakura is a professional football player from Japan.",
                 ["Ko Itakura is from Japan.", "Ko Itakura is a professional football player."],
                 id="where-a-person-is-from"),
    pytest.param("He stands at 6'7\" and weighs 220 lbs.", ["He stands at 6'7\".", "He weighs 220 lbs."],
                 id="an-inch-mark-is-no-quote"),
])
def test_one_parse_shape_gives_the_claims_people_write(written, text, claims):
    assert texts(written.decompose(text)) == claims
