"""Real reports: after ingesting the corpus, every trend day equals the records summed straight."""
from datetime import datetime, timedelta

import orjson
import pytest
from peewee import fn

from ingest.pipeline import ingest_paths
from snapshotter import jobs
from store import snapshots
from store.models import DomainDay
from tests.factories import make_org
from tests.snapshotter.reports import straight_from_records


@pytest.mark.slow   # the whole corpus ingested first: seconds on Postgres
def test_trend_days_of_the_real_corpus_equal_the_records_summed_straight(corpus_dir, config, database):
    org = make_org()
    list(ingest_paths([str(corpus_dir / "aggregate")], config=config, org=org))
    last = DomainDay.select(fn.MAX(DomainDay.day)).where(DomainDay.org == org).scalar()
    last = last if not isinstance(last, str) else datetime.strptime(last, "%Y-%m-%d").date()
    now = datetime.combine(last, datetime.min.time()) + timedelta(hours=12)
    jobs.refresh_org(org.id, now)
    points = orjson.loads(snapshots.get(org.id, "trends").body)
    assert sum(p["total_messages"] for p in points) > 0
    for point in points:
        day = datetime.strptime(point["date"], "%Y-%m-%d").date()
        direct = straight_from_records(org, day, day)
        assert (point["total_messages"], point["compliant_messages"]) == \
            (direct["messages"], direct["compliant"]), day
    window = straight_from_records(org, last - timedelta(days=29), last)
    overview = orjson.loads(snapshots.get(org.id, "overview").body)["org_health"]
    assert (overview["total_messages"], overview["unique_source_ips"]) == (window["messages"], window["ips"])
