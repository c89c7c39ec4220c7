"""Fill a store with demo reports until it holds N records, through the real ingest path.

Run as a script by bench/storage.py and bench/migrations.py: with PYTHONPATH set to a past
release's tree it fills the store with that release's own code (its migrations, its ingest),
so it imports nothing but the project's packages. Prints one line: reports, records, days.

    python bench/store_fill.py DATABASE_URL RECORDS LOCK_DIR
"""
from __future__ import annotations

import datetime as dt
import sys
import tempfile

# The demo makes ~7 records a report and ~140 records a day over its four domains; each batch
# is one year of days, further back each time, so the store spans as many years as it needs.
BATCH_DAYS = 365
END = dt.date(2026, 11, 1)


def fill(url: str, records: int, lock_dir: str) -> tuple[int, int, int]:
    from config import Config
    from demo import reports as generator
    from ingest.pipeline import ingest_paths
    from store import open_db
    from store.migrations import migrate
    from store.models import Domain, Organization, Record, Report

    config = Config(database_url=url, offline=True, lock_dir=lock_dir)
    database = open_db(url)
    with database.connection_context():
        migrate(database)
        org = Organization.create(name="Bench", plan="unlimited")
        for name in generator.DOMAINS:
            Domain.create(org=org, name=name, source="manual")
        stored, days, batch = 0, 0, 0
        while stored < records:
            end = END - dt.timedelta(days=BATCH_DAYS * batch)
            with tempfile.TemporaryDirectory(prefix="rua-fill-") as folder:
                wanted = []
                for report in generator.generate(seed=batch, days=BATCH_DAYS, end=end):
                    wanted.append(report)
                    stored += report.records
                    if stored >= records:
                        break
                generator.write_files(wanted, folder)
                for result in ingest_paths([folder], config=config, org=org):
                    if result.error:
                        raise SystemExit(f"{result.path}: {result.error}")
            days += (wanted[-1].day - wanted[0].day).days + 1
            batch += 1
        return Report.select().count(), Record.select().count(), days


if __name__ == "__main__":
    # This folder holds bench/ingest.py, which would hide the ingest package: the project's
    # packages come from PYTHONPATH (a past release's tree) or the installed checkout.
    sys.path.pop(0)
    reports, records, days = fill(sys.argv[1], int(sys.argv[2]), sys.argv[3])
    print(f"{reports} {records} {days}")
