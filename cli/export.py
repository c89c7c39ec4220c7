"""`rua export`: every record of a period as CSV or JSON lines, written as it is read."""
from __future__ import annotations

import contextlib
import csv
import sys

import click

from cli.common import echo_err, fail
from cli.lookup import resolve_org
from cli.options import Day, OneOf
from cli.session import open_store


@click.command()
@click.argument("org_ref", metavar="ORG")
@click.option("--domain", help="Only the reports for this policy domain.")
@click.option("--from", "day_from", type=Day(), required=True,
              help="First day: reports that began on it or later.")
@click.option("--to", "day_to", type=Day(), required=True,
              help="Last day: reports that ended on it or earlier.")
@click.option("--format", "output", type=OneOf(("csv", "jsonl"), "format"), default="csv",
              show_default=True, help="csv: a header line, then a row per record; jsonl: one "
                                      "JSON object per record.")
@click.option("--output", "path", metavar="FILE", type=click.Path(dir_okay=False, writable=True),
              help="Write to FILE instead of standard output.")
@click.pass_obj
def export(config, org_ref, domain, day_from, day_to, output, path):
    """Write every record of ORG's reports from --from to --to (as GET /reports's from and to
    choose them), with its report's reporter, id, domain and days.

    Records are read and written a page at a time, so a long period needs no more memory than
    a short one. CSV cells that a spreadsheet would run as a formula start with ' (report fields
    come from strangers), as the API's downloads do. Records of reports older than
    RUA_RETENTION_DAYS are gone (`rua prune`): the export says how many reports of the period
    lost theirs.
    """
    from store import exports
    from store.domain_names import InvalidDomain, normalize
    if day_from > day_to:
        fail(f"--from {day_from} is after --to {day_to}")
    try:
        domain = normalize(domain) if domain else None
    except InvalidDomain as exc:
        fail(f"--domain: {exc}")
    with open_store(config):
        org = resolve_org(org_ref)
        period = exports.Period(org.id, day_from, day_to, domain)
        # A reader that goes away (`| head`) ends the export: click exits quietly on EPIPE.
        with _opened(path) as stream:
            count = _write(output, stream, exports.records(period))
        gone = exports.pruned(period)
    echo_err(f"rua export: {count:,} record{'' if count == 1 else 's'} of {org.name} from "
             f"{day_from} to {day_to}" + (f" for {domain}" if domain else ""))
    if gone.reports:
        echo_err(f"rua export: {gone.reports:,} report{'' if gone.reports == 1 else 's'} of the "
                 f"period ({gone.first_day} to {gone.last_day}) had their records deleted by "
                 f"retention (records_pruned_at): they are not in the export; their totals "
                 f"stay in /reports")


@contextlib.contextmanager
def _opened(path: str | None):
    """FILE (one clear line when it cannot be written), or standard output."""
    if path is None:
        yield sys.stdout
        return
    try:
        stream = open(path, "w", newline="", encoding="utf-8")
    except OSError as exc:
        fail(f"--output {path}: {exc.strerror or exc}")
    with stream:
        yield stream


def _write(output: str, stream, rows) -> int:
    """Write each row to stream as output says; how many were written."""
    from store.encoding import dumps, safe_cell
    from store.exports import NAMES
    count = 0
    if output == "csv":
        writer = csv.writer(stream, lineterminator="\r\n")
        writer.writerow(NAMES)
        for row in rows:
            writer.writerow([safe_cell(_cell(value, dumps)) for value in row])
            count += 1
        return count
    for row in rows:
        stream.write(dumps(dict(zip(NAMES, row))).decode() + "\n")
        count += 1
    return count


def _cell(value, dumps):
    """A CSV cell: JSON columns (lists) as JSON text, none as empty."""
    if value is None:
        return ""
    if isinstance(value, (list, dict)):
        return dumps(value).decode()
    return value
