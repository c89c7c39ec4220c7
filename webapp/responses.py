"""Downloads: CSV with neutralized cells, and JSON attachments."""
from __future__ import annotations

import csv
import io
from urllib.parse import urlencode

from flask import Response, request

from store.encoding import dumps, safe_cell


def _attachment(body: bytes | str, mimetype: str, filename: str) -> Response:
    response = Response(body, content_type=mimetype)
    response.headers["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def csv_download(rows, columns, filename: str) -> Response:
    """rows (dicts) as a CSV attachment with a header line; only the named columns."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([safe_cell(row[c]) for c in columns])
    return _attachment(out.getvalue(), "text/csv; charset=utf-8", filename)


def json_download(value, filename: str) -> Response:
    return _attachment(dumps(value), "application/json", filename)


def with_more(response: Response, page, total: int) -> Response:
    """A download of one page says how many rows match (X-Total-Count) and, when more follow,
    where the next page is (Link rel="next", RFC 8288): the same request at the next offset."""
    response.headers["X-Total-Count"] = str(total)
    following = page.offset + page.limit
    if following < total:
        query = request.args.to_dict(flat=False)
        query["offset"] = [str(following)]
        url = f"{request.base_url}?{urlencode(query, doseq=True)}"
        response.headers["Link"] = f'<{url}>; rel="next"'
    return response
