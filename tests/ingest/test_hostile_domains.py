"""Reports cannot grow an organization without bound: automatic domains stop at their caps."""
import pytest

from ingest.pipeline import ingest_paths
from ingest.storing import DomainCaps, over_cap
from store.models import Domain, Event, Report
from tests.factories import make_domain, make_org
from tests.ingest import xmlbuild


@pytest.fixture
def org(database):
    org = make_org("Acme")
    make_domain(org, "example.com")
    return org


def subdomain_zip(names):
    return xmlbuild.zipped({f"{name}.xml": xmlbuild.report_bytes(domain=name, report_id=name)
                            for name in names})


def test_over_cap_names_the_setting_that_is_reached():
    caps = DomainCaps(total=3, per_day=2)
    assert over_cap(2, 1, caps) is None
    assert over_cap(3, 0, caps) == "RUA_MAX_AUTO_DOMAINS=3"
    assert over_cap(1, 2, caps) == "RUA_MAX_AUTO_DOMAINS_PER_DAY=2"


def test_a_zip_of_many_subdomains_stops_at_the_cap_and_keeps_the_rest(org, config, tmp_path):
    config = config.replace(max_auto_domains=5, max_auto_domains_per_day=50)
    names = [f"s{n}.example.com" for n in range(12)]
    path = tmp_path / "many.zip"
    path.write_bytes(subdomain_zip(names[:4] + ["example.com"] + names[4:]))
    [result] = list(ingest_paths([str(path)], config=config))
    assert result.status == "refused"
    assert "RUA_MAX_AUTO_DOMAINS=5" in result.error and "rua domain add" in result.error
    assert result.error.endswith("(and 6 more refused)")
    assert Domain.select().where(Domain.org == org.id, Domain.source == "auto").count() == 5
    # the report for the monitored domain, and those within the cap, are all stored
    assert Report.select().count() == 6
    [event] = Event.select().where(Event.org == org.id)
    assert event.type == "auto_domain_cap" and "RUA_MAX_AUTO_DOMAINS=5" in event.title


def test_the_daily_cap_refuses_before_the_total_one(org, config, tmp_path):
    config = config.replace(max_auto_domains=100, max_auto_domains_per_day=2)
    path = tmp_path / "day.zip"
    path.write_bytes(subdomain_zip([f"d{n}.example.com" for n in range(4)]))
    [result] = list(ingest_paths([str(path)], config=config))
    assert "RUA_MAX_AUTO_DOMAINS_PER_DAY=2" in result.error
    assert len(result.reports) == 2


def test_a_domain_added_by_hand_is_never_capped(org, config, tmp_path):
    config = config.replace(max_auto_domains=0, max_auto_domains_per_day=0)
    make_domain(org, "mine.example.com")
    good = tmp_path / "mine.xml"
    good.write_bytes(xmlbuild.report_bytes(domain="mine.example.com"))
    stranger = tmp_path / "stranger.xml"
    stranger.write_bytes(xmlbuild.report_bytes(domain="x.example.com"))
    results = list(ingest_paths([str(good), str(stranger)], config=config))
    assert [r.status for r in results] == ["stored", "refused"]
    assert Domain.get(Domain.name == "mine.example.com").source == "both"
    assert Report.select().count() == 1
