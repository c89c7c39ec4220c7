"""CSV downloads: spreadsheet formulas neutralized, a header line, attachment headers."""
from __future__ import annotations

import pytest

from webapp.responses import csv_download, safe_cell


@pytest.mark.parametrize("value, expected", [
    ("=HYPERLINK(\"x\")", "'=HYPERLINK(\"x\")"), ("+1", "'+1"), ("-2+3", "'-2+3"), ("@SUM(A1)", "'@SUM(A1)"),
    ("\tx", "'\tx"), ("\rx", "'\rx"), ("google.com", "google.com"), ("", ""), (42, 42), (-1.5, -1.5),
    ("a=b", "a=b")])
def test_cells_a_spreadsheet_would_run_get_a_leading_quote(value, expected):
    assert safe_cell(value) == expected


def test_csv_download_is_an_attachment_with_the_named_columns(app):
    with app.test_request_context():
        resp = csv_download([{"a": "=1", "b": 2, "c": "ignored"}], ["a", "b"], "x.csv")
    assert resp.headers["Content-Type"] == "text/csv; charset=utf-8"
    assert resp.headers["Content-Disposition"] == 'attachment; filename="x.csv"'
    assert resp.get_data(as_text=True) == "a,b\r\n'=1,2\r\n"
