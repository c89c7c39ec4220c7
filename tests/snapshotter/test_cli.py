"""`rua snapshot` through click's runner against the test database."""
import pytest

from store import snapshots
from store.models import Organization
from tests.factories import make_org
from tests.snapshotter.reports import TODAY, report_on


def test_snapshot_without_options_refreshes_the_dirty_organizations(rua):
    dirty, clean = make_org(), make_org()
    report_on(dirty, "example.com", TODAY, [{"count": 3}])
    result = rua("snapshot")
    assert result.exit_code == 0, result.output
    assert "refreshed 1 organization(s)" in result.stdout
    assert snapshots.get(dirty.id, "overview") is not None
    assert snapshots.get(clean.id, "overview") is None
    assert Organization.get_by_id(dirty.id).dirty_since is None


def test_snapshot_org_by_name_and_all(rua):
    one, two = make_org(name="one"), make_org(name="two")
    assert rua("snapshot", "--org", "one").exit_code == 0
    assert snapshots.get(one.id, "overview") is not None and snapshots.get(two.id, "overview") is None
    result = rua("snapshot", "--all")
    assert result.exit_code == 0 and "refreshed 2 organization(s)" in result.stdout
    assert snapshots.get(two.id, "health", "x") is None and snapshots.get(two.id, "trends") is not None


def test_snapshot_daily_writes_yesterdays_history_row_for_cron(rua):
    from datetime import timedelta
    from store.clock import utcnow
    from store.models import ScoreHistory
    org = make_org()
    yesterday = utcnow().date() - timedelta(days=1)
    report_on(org, "example.com", yesterday, [{"count": 3}])
    result = rua("snapshot", "--daily")
    assert result.exit_code == 0, result.output
    assert yesterday in [r.day for r in ScoreHistory.select().where(ScoreHistory.org == org.id)]


@pytest.mark.parametrize("args, fragment", [
    (["--org", "nobody"], "no organization 'nobody'"),
    (["--org", "x", "--all"], "give one of"),
    (["--all", "--daily"], "give one of"),
])
def test_snapshot_refuses_bad_options_with_one_line(rua, args, fragment):
    result = rua("snapshot", *args)
    assert result.exit_code == 2 and fragment in result.stderr and result.stdout == ""


REPORT = """<?xml version="1.0"?>
<feedback>
  <report_metadata><org_name>reporter.example</org_name><email>r@reporter.example</email>
    <report_id>snap-1</report_id><date_range><begin>1774915200</begin><end>1775001600</end></date_range>
  </report_metadata>
  <policy_published><domain>example.com</domain><adkim>r</adkim><aspf>r</aspf><p>reject</p>
    <sp>reject</sp><pct>100</pct></policy_published>
  <record><row><source_ip>192.0.2.1</source_ip><count>7</count>
    <policy_evaluated><disposition>none</disposition><dkim>pass</dkim><spf>pass</spf></policy_evaluated></row>
    <identifiers><header_from>example.com</header_from></identifiers>
    <auth_results><dkim><domain>example.com</domain><result>pass</result></dkim>
      <spf><domain>example.com</domain><result>pass</result></spf></auth_results></record>
</feedback>
"""


@pytest.mark.parametrize("flag, refreshed", [(["--snapshot"], True), ([], False)])
def test_ingest_with_snapshot_refreshes_what_it_touched_right_after(rua, tmp_path, flag, refreshed):
    org = make_org(name="acme")
    path = tmp_path / "report.xml"
    path.write_text(REPORT)
    result = rua("ingest", "--org", "acme", *flag, str(path))
    assert result.exit_code == 0, result.output
    assert (snapshots.get(org.id, "overview") is not None) is refreshed
    assert (Organization.get_by_id(org.id).dirty_since is None) is refreshed
    if refreshed:
        assert "snapshots: refreshed 1 organization(s)" in result.stdout
        assert snapshots.get(org.id, "compliance", "example.com") is not None

