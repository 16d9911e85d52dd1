"""Reading answer tables from text: every format, citations, and the broken files in tests/data/answers."""

from pathlib import Path

import pytest

from rig.formats.answer import Citation
from rig.formats.answer_text import ParseFailure, parse_table

DATA = Path(__file__).parent / "data" / "answers"
SPECIES = [["Boiga ceylonensis", "1890"], ["Lycodon travancoricus", "1890"]]


def parse(name: str):
    return parse_table((DATA / name).read_text(encoding="utf-8"), f"answers/{name}")


EMPTY = {"format": "sgr-rig/answer/1", "columns": [], "rows": [], "citations": [], "records": []}


def test_markdown_table_inside_prose_with_links_escaped_pipes_and_sources():
    a = parse("markdown.md")
    assert a.columns == ["Species", "Year", "Note"]
    assert a.rows == [
        ["Boiga ceylonensis", "1890", "type | lectotype"],  # link text kept, URL markup dropped, \| unescaped
        ["Lycodon travancoricus", "1890", "see http://127.0.0.1:8765/species/43."],  # a bare URL is text
        ["**Oligodon affinis**", "1890", ""],  # emphasis is left to the `strip_markdown` rule
    ]
    assert a.citations == [
        Citation(row=0, url="http://127.0.0.1:8765/species/42", excerpt="Boiga ceylonensis"),
        Citation(row=1, url="http://127.0.0.1:8765/species/43", excerpt="Lycodon travancoricus 1890 see"),
        Citation(url="http://127.0.0.1:8765/search?author=Boulenger&year=1890", excerpt="Advanced search results"),
        Citation(url="http://127.0.0.1:8765/about", excerpt=""),
    ]


def test_first_table_wins():
    text = "| A | B |\n|---|---|\n| 1 | 2 |\n\nand another:\n\n| C | D |\n|---|---|\n| 3 | 4 |\n"
    a = parse_table(text, "t")
    assert (a.columns, a.rows) == (["A", "B"], [["1", "2"]])


def test_markdown_header_only_and_one_column_tables():
    assert parse_table("| Species | Year |\n|---|---|\n", "t").model_dump() == {
        "format": "sgr-rig/answer/1", "columns": ["Species", "Year"], "rows": [], "citations": [], "records": []}
    assert parse_table("| Species |\n| --- |\n| Boiga |\n", "t").rows == [["Boiga"]]


def test_markdown_rows_are_cut_to_the_header_and_short_rows_stay_short():
    a = parse_table("| A | B |\n|---|---|\n| 1 | 2 | 3 |\n| 4 |\n", "t")
    assert a.rows == [["1", "2"], ["4"]]


def test_prose_with_a_stray_pipe_is_not_a_table():
    with pytest.raises(ParseFailure, match="no table found"):
        parse_table("The result is either 3 | 4, I am not sure.\n", "t")


@pytest.mark.parametrize("name", ["pipes.txt", "table.tsv"])
def test_plain_pipes_and_tsv(name):
    a = parse(name)
    assert (a.columns, a.rows, a.citations) == (["Species", "Year"], SPECIES, [])


def test_csv_after_prose_with_quoted_commas():
    a = parse("table.csv")
    assert a.columns == ["Carrier", "Flights", "Share"]
    assert a.rows == [["United Air Lines Inc.", "58,665", "17.4%"], ["Delta Air Lines Inc.", "48,110", "14.3%"]]


def test_csv_header_only_is_zero_rows():
    a = parse("header_only.csv")
    assert (a.columns, a.rows) == (["Carrier", "Flights"], [])


def test_csv_in_a_code_fence_with_links():
    a = parse_table("```csv\nSpecies,Year\n[Boiga](http://h/s/1),1890\n```\n", "t")
    assert a.rows == [["Boiga", "1890"]]
    assert a.citations == [Citation(row=0, url="http://h/s/1", excerpt="Boiga")]


def test_answer_json_with_number_cells_and_citations():
    a = parse("answer.json")
    assert (a.columns, a.rows) == (["Species", "Year"], SPECIES)
    assert a.citations == [
        Citation(row=0, url="http://127.0.0.1:8765/species/42", excerpt="Boiga ceylonensis"),
        Citation(url="http://127.0.0.1:8765/search?year=1890"),
    ]


def test_bare_list_of_row_objects():
    a = parse("rows.json")
    assert a.columns == ["Species", "Year", "Valid"]
    assert a.rows == [["Boiga ceylonensis", "1890", ""], ["Lycodon travancoricus", "1890", "true"], ["", "", ""]]
    assert parse_table("[]", "t").model_dump() == EMPTY


@pytest.mark.parametrize("text", ["", "   \n\n", "\ufeff"])
def test_empty_text_is_zero_rows_with_unknown_columns(text):
    assert parse_table(text, "t").model_dump() == EMPTY


def test_empty_file():
    assert parse("empty.txt").model_dump() == EMPTY


def test_truncated_markdown_keeps_the_short_last_row():
    assert parse("truncated.md").rows == [["Boiga ceylonensis", "1890"], ["Lycodon trav"]]


def test_a_link_in_prose_before_the_table_is_not_json_and_cites_the_whole_answer():
    a = parse_table("[Search](http://h/search) gave:\n\n| A | B |\n|---|---|\n| 1 | 2 |\n", "t")
    assert (a.columns, a.rows) == (["A", "B"], [["1", "2"]])
    assert a.citations == [Citation(url="http://h/search", excerpt="Search")]


@pytest.mark.parametrize(
    "name,message",
    [
        ("truncated.json", "answers/truncated.json: invalid JSON at line 1 column 75: Unterminated string starting at"),
        ("no_columns.json", ("answers/no_columns.json: JSON object has neither a 'columns' nor a 'records' field "
                            '(answer.json: {"columns": [...], "rows": [[...]]} and/or {"records": [...]})')),
        ("list_of_lists.json", "answers/list_of_lists.json: a JSON list must hold row objects; item 0 is list"),
        ("nested_cell.json", ("answers/nested_cell.json: rows[0][1]: a cell must be a string, number, boolean or null, "
                              "got list")),
        ("citation_without_url.json", ("answers/citation_without_url.json: answer.json field citations.0.url: "
                                      "Field required")),
        ("unterminated.csv", "answers/unterminated.csv: CSV line 3: unexpected end of data"),
        ("stray_quote.csv", "answers/stray_quote.csv: CSV line 2: ',' expected after '\"'"),
        ("prose.txt", ("answers/prose.txt: no table found: expected a pipe or Markdown table with a header row, "
                      "TSV or CSV with a header, or answer.json")),
        ("sentence.txt", ("answers/sentence.txt: no table found: expected a pipe or Markdown table with a header "
                         "row, TSV or CSV with a header, or answer.json")),
    ],
)
def test_broken_files_fail_with_exact_messages(name, message):
    with pytest.raises(ParseFailure) as info:
        parse(name)
    assert str(info.value) == message
    assert info.value.source == f"answers/{name}"


def test_json_list_of_scalars_is_a_parse_failure():
    with pytest.raises(ParseFailure, match="^t: a JSON list must hold row objects; item 1 is int$"):
        parse_table('[{"A": "x"}, 2]', "t")


def test_prose_line_with_a_pipe_right_above_a_markdown_table():
    a = parse_table("Results | as of today\n| A | B |\n|---|---|\n| 1 | 2 |\n", "t")
    assert (a.columns, a.rows) == (["A", "B"], [["1", "2"]])


def test_autolinks_a_references_list_and_every_url_after_it():
    text = ("| A | B |\n|---|---|\n| x | <http://h/1> |\n\n**References:**\n\n"
            "[1]: http://h/search?q=x (search page)\n2. [About](http://h/about)\n\nThanks!\n- http://h/ignored\n")
    a = parse_table(text, "t")
    assert a.rows == [["x", "http://h/1"]]
    assert a.citations == [
        Citation(row=0, url="http://h/1", excerpt="x"),
        Citation(url="http://h/search?q=x", excerpt="search page"),
        Citation(url="http://h/about", excerpt="About"),
        Citation(url="http://h/ignored", excerpt=""),  # a URL anywhere outside the table supports the whole answer
    ]


# --- answers as products write them (docs/grading.md "Answers as written") ------------------------------------------

SYN = "http://127.0.0.1:9/syn"


@pytest.mark.parametrize("name", ["ragged.txt", "ragged.csv"])
def test_a_ragged_table_is_rows_with_missing_or_cut_cells_not_a_parse_failure(name):
    a = parse(name)
    assert a.columns == ["Dest", "Airport", "Flights"]
    assert a.rows == [["BOS", "Boston Logan", "30"], ["ORD", "Chicago O'Hare"], ["SFO", "San Francisco", "10"]]


@pytest.mark.parametrize("text,rows", [
    ("arXiv ID|Title|Year\n9901.00001|A\n", [["9901.00001", "A"]]),  # the only row is short
    ("arXiv ID|Title|Year\n9901.00001|A|1999|v2\n", [["9901.00001", "A", "1999"]]),  # the only row is long
    ("arXiv ID\tTitle\tYear\n9901.00001\tA\n9901.00002\tB\t1999\n", [["9901.00001", "A"], ["9901.00002", "B", "1999"]]),
    ("arXiv ID,Title,Year\n9901.00001,A,1999,v2\n9901.00002,B,1999\n", [["9901.00001", "A", "1999"], ["9901.00002", "B", "1999"]]),
])
def test_ragged_rows_in_every_text_format(text, rows):
    a = parse_table(text, "t")
    assert (a.columns, a.rows) == (["arXiv ID", "Title", "Year"], rows)


def test_a_lead_in_sentence_with_commas_right_above_a_ragged_csv_is_not_its_header():
    a = parse_table("The routes, busiest first:\nDest,Airport,Flights\nBOS,Boston Logan\nORD,Chicago O'Hare,20\n", "t")
    assert (a.columns, a.rows) == (["Dest", "Airport", "Flights"], [["BOS", "Boston Logan"], ["ORD", "Chicago O'Hare", "20"]])


def test_works_cited_footnotes_bind_to_the_rows_that_carry_their_markers():
    a = parse("works_cited.md")
    assert a.rows == [["BOS", "Boston Logan", "30"], ["ORD", "Chicago O'Hare", "20"], ["SFO", "San Francisco", "10"]]
    assert a.citations == [
        Citation(url=f"{SYN}/search#view=carriers", excerpt="Carrier ranking, JFK departures"),  # [1] is in the prose
        Citation(row=0, url=f"{SYN}/search", excerpt="30"),  # the marked cell's value is the excerpt
        Citation(row=1, url=f"{SYN}/search", excerpt="20"),
        Citation(row=2, url=f"{SYN}/search", excerpt="10"),
        Citation(row=2, url=f"{SYN}/search?dest=SFO", excerpt="10"),
    ]


def test_a_sources_line_prose_links_and_bracketed_footnotes():
    a = parse("sources_line.md")
    assert a.rows == [["BOS", "30"], ["ORD", "20"], ["SFO", "10"]]
    assert a.citations == [
        Citation(url=f"{SYN}/search", excerpt="route table"),  # a link in the prose above the table
        Citation(url=f"{SYN}/search", excerpt="Flight search"),  # the Sources: line, a Markdown link ...
        Citation(url=f"{SYN}/", excerpt=""),  # ... a bare URL ...
        Citation(url=f"{SYN}/search#view=carriers", excerpt=""),  # ... and an autolink
        Citation(row=0, url=f"{SYN}/search", excerpt="30"),  # `[1] URL`
        Citation(row=1, url=f"{SYN}/search", excerpt="20"),
        Citation(row=2, url=f"{SYN}/search", excerpt="10"),  # `[^2]: <URL> "title"`
    ]


@pytest.mark.parametrize("cell,value,keys", [
    ("1882 [1]", "1882", ["1"]),
    ("1882[1][2]", "1882", ["1", "2"]),
    ("1882 [1, 2]", "1882", ["1", "2"]),
    ("1882 [1-2]", "1882", ["1", "2"]),
    ("1882 [^2]", "1882", ["2"]),
    ("[Boiga][2] ceylonensis", "Boiga ceylonensis", ["2"]),
])
def test_footnote_markers_are_stripped_from_the_cell_and_bind_it(cell, value, keys):
    text = f"| Name | Year |\n|---|---|\n| x | {cell} |\n\n[1]: http://h/one\n[2]: http://h/two\n"
    a = parse_table(text, "t")
    assert a.rows == [["x", value]]
    urls = {"1": "http://h/one", "2": "http://h/two"}
    assert a.citations == [Citation(row=0, url=urls[k], excerpt=value) if k in keys else Citation(url=urls[k])
                           for k in urls]  # a definition no cell refers to supports the whole answer


def test_a_link_whose_text_is_a_number_is_a_footnote_of_its_row():
    a = parse_table("| Name | Year |\n|---|---|\n| Boiga | 1882 [1](http://h/s/1) |\n", "t")
    assert a.rows == [["Boiga", "1882"]]
    assert a.citations == [Citation(row=0, url="http://h/s/1", excerpt="1882")]


def test_a_number_linked_alone_in_its_cell_is_the_value():
    a = parse_table("| ID | Name |\n|---|---|\n| [13](http://h/r/13) | Boiga |\n", "t")
    assert a.rows == [["13", "Boiga"]]
    assert a.citations == [Citation(row=0, url="http://h/r/13", excerpt="13")]


def test_a_footnote_no_cell_carries_supports_the_whole_answer_and_its_marker_never_sticks():
    text = "| Name | Year |\n|---|---|\n| Boiga | 1882 [3] |\n\n1. [Species page](http://h/s/1)\n2. http://h/search\n"
    a = parse_table(text, "t")
    assert a.rows == [["Boiga", "1882"]]  # [3] has no definition: stripped all the same
    assert a.citations == [Citation(url="http://h/s/1", excerpt="Species page"), Citation(url="http://h/search", excerpt="")]


def test_citations_of_any_scheme_and_relative_urls_are_kept():
    text = ("| A | B |\n|---|---|\n| x [1] | y |\n\n[1]: /rel/page Some title\n[2]: file:///etc/passwd\n"
            "- [home](file:///etc/)\n")
    assert parse_table(text, "t").citations == [
        Citation(row=0, url="/rel/page", excerpt="x"),
        Citation(url="file:///etc/passwd", excerpt=""),
        Citation(url="file:///etc/", excerpt="home"),
    ]


def test_two_prose_lines_with_commas_are_still_no_table():
    with pytest.raises(ParseFailure, match="no table found"):
        parse_table("Hmm, well.\nI looked at the page, twice, and found nothing.\n", "t")
