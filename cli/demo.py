"""`rua demo`: an organization full of realistic reports and a key to read them, in seconds."""
from __future__ import annotations

import tempfile
from collections import Counter
from datetime import timedelta
from typing import TYPE_CHECKING

import click

from cli.common import fail
from cli.session import open_store
from demo.report_xml import RFC7489, RFC9990
from store import keys
from store.clock import utcnow

if TYPE_CHECKING:
    from store.models import ApiKey

ORG_NAME = "Demo"
OWNER = "owner@demo.example"
KEY_NAME = "demo"
KEY_DAYS = 7


def _organization():
    from store.models import Organization
    org = Organization.get_or_none(Organization.name == ORG_NAME)
    if org is not None:
        return org, "reused"
    return Organization.create(name=ORG_NAME, plan="free"), "created"


def _owner(org):
    from store.models import Member
    member = Member.get_or_none(Member.org == org, Member.email == OWNER)
    return member or Member.create(org=org, email=OWNER, role="owner")


def _domains(org) -> list[str]:
    from demo import reports as generator
    from store.models import Domain
    for name in generator.DOMAINS:
        if not Domain.get_or_none(Domain.org == org, Domain.name == name):
            Domain.create(org=org, name=name, source="manual")
    return list(generator.DOMAINS)


def _load_reports(config, org, seed: int, days: int) -> list[str]:
    """Write the generated reports as files and take them in as `rua ingest` would."""
    from demo import reports as generator, tls_reports
    from ingest.pipeline import ingest_paths   # the real ingest path: parse, classify, store
    tally, statuses, errors = Counter(), Counter(), []

    def counted():
        for report in generator.generate(seed=seed, days=days):
            tally.update(reports=1, records=report.records, messages=report.messages)
            yield report

    with tempfile.TemporaryDirectory(prefix="rua-demo-") as folder:
        generator.write_files(counted(), folder)
        tally.update(tls_reports=tls_reports.write_files(tls_reports.generate(seed, days), folder))
        # The demo's addresses are invented: looking them up would only cost time.
        for result in ingest_paths([folder], config=config.replace(offline=True), org=org):
            statuses[result.status] += 1
            if result.error:
                errors.append(f"{result.path}: {result.error}")
    lines = [f"generated {tally['reports']} reports ({tally['records']} records, "
             f"{tally['messages']} messages) and {tally['tls_reports']} TLS reports "
             f"over {days} days, seed {seed}",
             "ingested: " + ", ".join(f"{n} {status}" for status, n in sorted(statuses.items()))]
    return lines + [f"  {error}" for error in errors[:5]]


def _new_key(org, member) -> tuple[ApiKey, str, int]:
    """A read key that expires after KEY_DAYS; the demo keys printed before are revoked, so
    running the demo again and again leaves one working key, never a pile of them."""
    from store.models import ApiKey
    now = utcnow()
    revoked = (ApiKey.update(revoked_at=now)
               .where(ApiKey.org == org, ApiKey.member == member, ApiKey.name == KEY_NAME,
                      ApiKey.revoked_at.is_null())
               .execute())
    plaintext = keys.new_key()
    row = ApiKey.create(org=org, member=member, name=KEY_NAME, digest=keys.digest(plaintext),
                        prefix=keys.display_prefix(plaintext), scope="read",
                        created_at=now, expires_at=now + timedelta(days=KEY_DAYS))
    return row, plaintext, revoked


def _large_report(records: int, output: str, seed: int, dialect: str):
    from demo import reports as generator
    try:
        messages = generator.write_large_report(output, records, seed=seed, dialect=dialect)
    except OSError as exc:
        fail(f"cannot write {output}: {exc.strerror or exc}")
    click.echo(f"wrote one {dialect} report of {records} records ({messages} messages) to {output}")


@click.command()
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the generator: the same seed gives the same reports.")
@click.option("--days", type=click.IntRange(1, 3650), default=90, show_default=True,
              help="How many UTC days of reports, ending yesterday.")
@click.option("--records", type=click.IntRange(1), default=None,
              help="Benchmark mode: write ONE report of N records to --output and exit; "
                   "the database is not touched.")
@click.option("--output", type=click.Path(dir_okay=False), default=None,
              help="File for --records (a name ending in .gz is gzipped).")
@click.option("--dialect", type=click.Choice([RFC7489, RFC9990]),
              default=RFC7489, show_default=True,
              help="XML dialect of the --records report: RFC 7489, or RFC 9990 (DMARCbis, namespaced).")
@click.pass_obj
def demo(config, seed, days, records, output, dialect):
    """Load a demo organization and print a fresh API key for it on the last line.

    Creates (or reuses) the organization "Demo" on the free plan, its owner owner@demo.example
    and four monitored domains; when it has no reports yet, generates DAYS days of realistic
    aggregate reports (Google, Microsoft, Yahoo, Mail.ru, Comcast and a small ISP; RFC 7489
    and RFC 9990 XML; .zip, .xml.gz and .xml files) and ingests them exactly as `rua ingest`
    does. Every run revokes the demo key it printed before and prints a new read key for the
    owner, valid 7 days, alone on the last line of stdout, so `KEY=$(rua demo | tail -n1)`
    works. Running it again adds no data.

    With --records N --output FILE it only writes one large report, for benchmarks.
    """
    from store.migrations import migrate
    from store.models import Report
    if records is not None or output is not None:
        if records is None or output is None:
            fail("--records and --output go together")
        _large_report(records, output, seed, dialect)
        return
    with open_store(config, need_schema=False) as database:
        migrate(database)
        org, how = _organization()
        member = _owner(org)
        names = _domains(org)
        click.echo(f"organization {ORG_NAME} ({org.id}) {how}, plan {org.plan}")
        click.echo(f"owner {member.email}; domains {', '.join(names)}")
        existing = Report.select().where(Report.org == org).count()
        if existing:
            click.echo(f"{existing} reports already loaded: nothing generated")
        else:
            for line in _load_reports(config, org, seed, days):
                click.echo(line)
            click.echo(f"{Report.select().where(Report.org == org).count()} reports stored")
        row, plaintext, revoked = _new_key(org, member)
        if revoked:
            click.echo(f"revoked {revoked} earlier demo key(s)")
        click.echo(f"new read key {row.id} (prefix {row.prefix}) for {member.email}, "
                   f"expires {row.expires_at:%Y-%m-%d}:")
    click.echo(plaintext)
