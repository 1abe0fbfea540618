"""The readings of a name that `names` accepts, each on examples of its own (none of them
from the hand-judged sets), with the longer names of other entities it must still refuse,
and the period an answer gives for a name."""

from __future__ import annotations

import pytest

from chronoprobe.probes.judging import Gold, judge


def names(answer: str, gold: Gold) -> bool:
    return judge(answer, gold)["names"]


MIT = Gold(["Massachusetts Institute of Technology"])
LSE = Gold(["London School of Economics"])
ECOWAS = Gold(["Economic Community of West African States"])
IBM = Gold(["International Business Machines"])
NYT = Gold(["New York Times"])
GALAXY = Gold(["LA Galaxy"])


@pytest.mark.parametrize(
    ("answer", "gold"),
    [
        ("MIT", MIT),
        ("He studied at MIT.", MIT),
        ("LSE", LSE),
        ("ECOWAS", ECOWAS),  # the initial of "of" kept
        ("IBM", IBM),
        ("I.B.M.", IBM),
        ("NY Times", NYT),  # a run of capitalised words by its initials
        ("Los Angeles Galaxy", GALAXY),  # a word written as initials, spelled out
        ("AT&T", Gold(["American Telephone and Telegraph"])),
        ("Simon & Schuster", Gold(["Simon and Schuster"])),
    ],
)
def test_initials_name_the_name(answer, gold):
    assert names(answer, gold)


def test_initials_must_be_written_as_initials_and_name_one_entity():
    assert not names("mit", MIT)  # a lower-case word is a word
    assert not names("the Mit", MIT)
    # the KG knows another London S... E...: the initials name neither
    exchange = Gold(["London School of Economics"], (), [["London Stock Exchange"]])
    assert not names("LSE", exchange)
    # a longer name with the initials is another entity's
    assert not names("MIT Press", MIT)
    assert not names("LSE Cities", LSE)


@pytest.mark.parametrize(
    ("answer", "gold"),
    [
        ("Oxford University", Gold(["University of Oxford"])),
        ("the University of Yale", Gold(["Yale University"])),
        ("Texas Governor", Gold(["Governor of Texas"])),
        ("Ohio's governor", Gold(["Governor of Ohio"])),
        ("Secretary of State of the United States", Gold(["United States Secretary of State"])),
        ("US Secretary of State", Gold(["United States Secretary of State"])),
        ("UK Prime Minister", Gold(["Prime Minister of the United Kingdom"])),
        ("the President of the USA", Gold(["President of the United States"])),
        ("President of the Russian Federation", Gold(["President of Russia"])),
    ],
)
def test_reordered_names_and_other_names_of_a_country(answer, gold):
    assert names(answer, gold)


@pytest.mark.parametrize(
    ("answer", "gold"),
    [
        ("Labour leader", Gold(["Leader of the Labour Party"])),  # reordered, without Party
        ("the Conservative chairman", Gold(["Chairman of the Conservative Party"])),
        ("UK PM", Gold(["Prime Minister of the United Kingdom"])),  # a country, then initials
        ("the Turkish PM", Gold(["Prime Minister of Turkey"])),
        ("US VP", Gold(["Vice President of the United States"])),
        ("the Kyrgyz Prime Minister", Gold(["Prime Minister of Kyrgyzstan"])),
        ("an Emirati citizen", Gold(["United Arab Emirates"])),
    ],
)
def test_reordered_names_without_a_type_word_and_a_country_with_initials(answer, gold):
    assert names(answer, gold)


def test_a_country_with_initials_is_no_other_office():
    assert not names("the Turkish PM", Gold(["President of Turkey"]))
    assert not names("UK DPM", Gold(["Prime Minister of the United Kingdom"]))
    assert not names("the UK pm", Gold(["Prime Minister of the United Kingdom"]))  # no initials
    assert not names("Labour leader", Gold(["Leader of the Conservative Party"]))


def test_a_reordered_name_is_still_refused_when_longer():
    oxford = Gold(["University of Oxford"])
    assert not names("Oxford Brookes University", oxford)
    assert not names("Oxford University Press", oxford)
    assert not names("Lieutenant Governor of Texas", Gold(["Governor of Texas"]))
    assert not names("Texas Lieutenant Governor", Gold(["Governor of Texas"]))


@pytest.mark.parametrize(
    ("answer", "gold"),
    [
        ("Yale", Gold(["Yale University"])),
        ("Leicestershire", Gold(["Leicestershire County Cricket Club"])),
        ("Leicestershire CCC", Gold(["Leicestershire County Cricket Club"])),
        ("Labour", Gold(["Labour Party"])),
        ("Nestlé", Gold(["Nestlé S.A."])),
        ("Siemens", Gold(["Siemens AG"])),
        ("the Everton Football Club", Gold(["Everton F.C."])),
        ("the Gates Foundation", Gold(["Gates"])),  # a type word the answer adds
    ],
)
def test_a_type_word_may_be_left_out_or_added(answer, gold):
    assert names(answer, gold)


def test_dropping_a_type_word_drops_the_and_before_it():
    assert names("Dow Jones", Gold(["Dow Jones & Company"]))
    assert names("Dow Jones and Company", Gold(["Dow Jones & Company"]))


ENGLAND = "England national association football team"


@pytest.mark.parametrize(
    ("answer", "gold"),
    [
        ("England", Gold([ENGLAND])),
        ("He played for England.", Gold([ENGLAND, "Chelsea F.C."])),
        ("the England team", Gold([ENGLAND])),
        ("Switzerland", Gold(["Swiss national football team"])),  # the country of its adjective
        ("the US", Gold(["United States men's national soccer team"])),
        # the country's youth teams the KG knows are read otherwise
        ("England", Gold([ENGLAND], (), [["England national under-21 football team"]])),
    ],
)
def test_a_country_names_its_senior_national_football_team(answer, gold):
    assert names(answer, gold)


def test_a_country_names_no_other_team_of_it():
    assert not names("England", Gold(["England national under-21 football team"]))
    assert not names("Brazil", Gold(["Brazil Olympic football team"]))
    assert not names("England", Gold(["England national rugby union team"]))
    assert not names("England", Gold(["Chelsea F.C."], (), [[ENGLAND]]))
    assert not names("England", Gold(["England women's national football team"]))
    assert not names("England U21", Gold([ENGLAND]))


def test_a_short_form_is_no_other_entitys_longer_name():
    yale = Gold(["Yale University"])
    assert not names("Yale Law School", yale)
    assert not names("Yale School of Management", yale)
    # the KG knows two entities of that short form: it names neither
    both = Gold(["Boston University"], (), [["Boston College"]])
    assert names("Boston University", both)
    assert not names("Boston", Gold(["Boston University"], (), [["Boston Celtics", "Boston"]]))


@pytest.mark.parametrize(
    ("answer", "gold"),
    [
        ("Kamala Devi Harris", Gold(["Kamala Harris"])),  # a given name added
        ("Robert Francis Kennedy", Gold(["Robert Kennedy"])),
        ("John F. Kennedy", Gold(["John Fitzgerald Kennedy"])),  # a given name by its initial
        ("Ursula von der Leyen", Gold(["Ursula Gertrud von der Leyen"])),  # one dropped
        ("Kitano Takeshi", Gold(["Takeshi Kitano"])),  # the other order
        ("Keir Starmer", Gold(["Sir Keir Starmer"])),  # the label's honorific left out
        ("Dame Judi Dench", Gold(["Judi Dench"])),  # an honorific before
        ("Lt. Gen. Mark Milley", Gold(["Mark Milley"])),  # ranks before
        ("Rep. Nancy Pelosi", Gold(["Nancy Pelosi"])),
    ],
)
def test_a_person_by_other_given_names_titles_and_order(answer, gold):
    assert names(answer, gold)


@pytest.mark.parametrize(
    ("answer", "gold"),
    [
        ("Mauricio Roberto Pochettino Trossero", "Mauricio Pochettino"),
        ("Xavier Trias i Vidal de Llobatera", "Xavier Trias"),
        ("Mariano Rajoy Brey", "Mariano Rajoy"),
        ("Luis Enrique Martínez García", "Luis Enrique"),
    ],
)
def test_a_person_with_family_names_added_where_a_person_is_asked(answer, gold):
    assert names(answer, Gold([gold], relation="P286"))
    assert not names(answer, Gold([gold]))  # a team or a place, for all we know
    assert not names(answer, Gold([gold], relation="P286", distractors=[[answer]]))


def test_a_family_name_alone_names_a_person_where_a_person_is_asked():
    harris = Gold(["Kamala Harris"], relation="P6")
    assert names("Harris", harris)
    assert names("Vice President Harris", Gold(["Kamala Harris"]))  # a title says a person
    assert not names("Harris", Gold(["Kamala Harris"]))  # a team or a place, for all we know
    # another entity the KG knows with that family name: neither is named
    bush = Gold(["George W. Bush"], (), [["George H. W. Bush", "George Bush"]], relation="P6")
    assert not names("Bush", bush)
    assert not names("George Bush", bush)  # the father's alias, written, beats a reading
    assert names("George Walker Bush", Gold(["George W. Bush", "George Walker Bush"]))


def test_a_person_is_not_named_by_another_persons_longer_name():
    gold = Gold(["Kamala Harris"], relation="P6")
    assert not names("Kamala Harris Jones", Gold(["Kamala Harris"], (), [["Kamala Harris Jones"]]))
    assert not names("Kamala Harris Jones", Gold(["Kamala Harris"]))  # no person asked
    assert not names("Ken Griffey Jr.", Gold(["Ken Griffey"], relation="P286"))  # the son
    assert not names("Harris Tweed", gold)
    assert not names("Team Kamala Harris", gold)
    assert not names("Kamala h. Harris", gold)  # a lower-case letter is no initial
    assert not names("J. Harris", gold)  # no given name said in full


@pytest.mark.parametrize(
    ("answer", "gold"),
    [
        ("a Democrat", Gold(["Democratic Party"])),
        ("the Socialists", Gold(["Socialist Party"])),
        ("She is a Conservative.", Gold(["Conservative Party"])),
        ("the Scottish Greens", Gold(["Scottish Green Party"])),
        ("the Labour Party of the United Kingdom", Gold(["Labour Party"])),
        ("the British Labour Party", Gold(["Labour Party"])),
    ],
)
def test_a_party_by_its_members_or_with_its_country(answer, gold):
    assert names(answer, gold)


def test_a_party_by_its_members_is_no_other_party():
    assert not names("a Democrat", Gold(["Democratic Party"], (), [["Democratic Party"]]))
    assert not names("a Republican senator", Gold(["Republican Party"]))
    assert not names("the Republicans", Gold(["Republican Party"], (), [["The Republicans"]]))


def test_a_space_or_a_hyphen_inside_a_name_does_not_matter():
    assert names("Co-operative Group", Gold(["Cooperative Group"]))
    assert names("Al Ahly", Gold(["Al-Ahly"]))
    assert names("DeSantis Ron", Gold(["Ron De Santis"]))


@pytest.mark.parametrize(
    ("answer", "period", "correct"),
    [
        ("the 2014 Prime Minister of Canada", "2020", False),
        ("the 2014 Prime Minister of Canada", "2014", True),
        ("Prime Minister of Canada (2006-2015)", "2020", False),
        ("Prime Minister of Canada (2006-2015)", "2010", True),
        ("Prime Minister of Canada, since 2016", "2015", False),
        ("Prime Minister of Canada, since 2016", "2019-Q3", True),
        ("Prime Minister of Canada until January 2001", "2001", True),
        ("Prime Minister of Canada until January 2001", "2002-05", False),
        ("Prime Minister of Canada in 2008", "2012", False),
        ("As of 2019, the Prime Minister of Canada", "2020", False),
        ("In 2020, the Prime Minister of Canada", "2020", True),
        ("Prime Minister of Canada, which he became in 2006", "2010", True),  # said of him
        ("Prime Minister of Canada", "2020", True),
    ],
)
def test_a_period_the_answer_gives_for_the_name_must_overlap_the_one_asked(answer, period, correct):
    assert names(answer, Gold(["Prime Minister of Canada"], period=period)) == correct


def test_words_of_the_question_are_no_name_of_the_answer_s_own():
    gold = Gold(["Chelsea F.C."], question="Eden Hazard plays for ___.")
    assert names("Eden Hazard, the Belgian winger, plays for Chelsea.", gold)
    assert not names("Eden Hazard, the Belgian winger, plays for Chelsea.", Gold(["Chelsea F.C."]))
    assert not names("Romelu Lukaku, the Belgian striker, plays for Chelsea.", gold)
