"""The boolean search syntax of the complaint register and the literature archive (rig.sites.querylang), and how
each site reads a query: its normal form, its errors, and the single-field parts the archive's state is read from."""

from __future__ import annotations

import pytest

from rig.sites.complaints.query import QueryError, parse_query
from rig.sites.papers.query import SearchError, parse_search, scope_params
from rig.sites.querylang import Leaf, Op, QuerySyntaxError, canonical, conjuncts, parse

FIELDS = {"title": "TITLE", "issue": "issue", "pub_year": "PUB_YEAR"}


@pytest.mark.parametrize(("query", "normal"), [
    ("medical OR doctor", "medical OR doctor"),
    ("  Medical   OR  DOCTOR ", "medical OR doctor"),
    ("medical or doctor", "medical AND or AND doctor"),  # operators are upper case: `or` is a word
    ("medical bills OR doctors", "(medical AND bills) OR doctors"),
    ('"Loan   Modification"', '"loan modification"'),
    ('"forbearance"', "forbearance"),  # a one-word phrase is the word
    ("overdraft AND NOT fee", "overdraft AND NOT fee"),
    ("(medical OR doctor) hospital", "(medical OR doctor) AND hospital"),
    ("NOT (a OR b)", "NOT (a OR b)"),
    ('Title:"Gene Therapies" AND pub_year:[2015 TO 2019]', 'TITLE:"gene therapies" AND PUB_YEAR:[2015 TO 2019]'),
    ("title:(gene OR cell)", "TITLE:gene OR TITLE:cell"),
    ("doctor*", "doctor*"),
    ("CTR-2016-5077", "ctr-2016-5077"),
])
def test_normal_form(query, normal):
    assert canonical(parse(query, FIELDS)) == normal
    assert canonical(parse(normal, FIELDS)) == normal  # the normal form reads back as itself


@pytest.mark.parametrize(("query", "message"), [
    ("(medical OR doctor", "the parenthesis at character 1 is never closed"),
    ("medical OR", "the query ends where a term was expected"),
    ('"loan modification', "the quotation mark at character 1 is never closed"),
    ("titel:gene", "unknown field 'titel' at character 1; the fields are PUB_YEAR, TITLE, issue"),
    ("medical )", "unexpected ')' at character 9"),
    ("AND doctor", "AND at character 1 needs a term before and after it"),
    ("pub_year:[2015 2019]", "must look like [2015 TO 2019]"),
    ("title:", "has no value"),
])
def test_errors_say_where(query, message):
    with pytest.raises(QuerySyntaxError, match=message.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        parse(query, FIELDS)


def test_tree_and_conjuncts():
    tree = parse('TITLE:"x y" AND (a OR b) AND NOT c', FIELDS)
    assert isinstance(tree, Op) and tree.name == "AND"
    parts = conjuncts(tree)
    assert parts[0] == Leaf("TITLE", "phrase", "x y") and isinstance(parts[1], Op)
    assert parts[2] == Op("NOT", (Leaf(None, "term", "c"),))
    assert parse("   ", FIELDS) is None and conjuncts(None) == []


def test_the_register_names_what_it_cannot_read():
    with pytest.raises(QueryError, match="Search term: the parenthesis"):
        parse_query({"search_term": "(medical"})
    with pytest.raises(QueryError, match="ranges"):
        parse_query({"search_term": "issue:[a TO b]"})
    with pytest.raises(QueryError, match="not a sub-product of Mortgage"):
        parse_query({"product": "Mortgage", "sub_product": "Store credit card"})
    with pytest.raises(QueryError, match="Choose a product before a sub-product"):
        parse_query({"sub_product": "Store credit card"})
    with pytest.raises(QueryError, match="'from' is after 'to'"):
        parse_query({"date_received_min": "2022-02-01", "date_received_max": "2022-01-01"})
    q = parse_query({"search_term": "medical  OR doctor", "product": "Debt collection", "tab": "trends"})
    assert q.interpreted == "medical OR doctor"
    assert q.params() == ("search_term=medical+OR+doctor&product=Debt+collection&tab=trends&interval=month"
                          "&trend_order=period")


@pytest.mark.parametrize(("query", "scope"), [
    ('TITLE:"Gene therapies to watch" AND PUB_YEAR:[2022 TO 2022] AND PUB_TYPE:review AND OPEN_ACCESS:y',
     "title=gene+therapies+to+watch&pub_year=2022..2022&pub_type=review&open_access=y"),
    ('auth:"Iwasaki K" AND pub_year:2017 AND open_access:yes', "author=iwasaki+k&pub_year=2017..2017&open_access=y"),
    ("CTR-2016-5077 AND PUB_TYPE:research-article", "terms=ctr-2016-5077&pub_type=research-article"),
    ("ABSTRACT:(base editing) AND (TITLE:liver OR TITLE:lung)",
     "abstract=base+AND+editing&expr=%28TITLE%3Aliver+OR+TITLE%3Alung%29"),
])
def test_the_archive_reads_a_query_as_single_field_parts(query, scope):
    assert scope_params(parse_search(query)) == scope + "&sort=relevance&page=1"


@pytest.mark.parametrize(("query", "message"), [
    ("PUB_YEAR:[2019 TO 2015]", "is empty"),
    ("PUB_YEAR:recent", "takes a year or a range"),
    ("PUB_TYPE:revue", "PUB_TYPE is one of research-article, review"),
    ("OPEN_ACCESS:maybe", "OPEN_ACCESS is y or n"),
    ("TITLE:[a TO b]", "Only PUB_YEAR takes a range"),
    ("gene (therapy", "The query cannot be read: the parenthesis at character 6 is never closed"),
])
def test_the_archive_names_what_it_cannot_read(query, message):
    with pytest.raises(SearchError, match=message.replace("(", r"\(")):
        parse_search(query)
