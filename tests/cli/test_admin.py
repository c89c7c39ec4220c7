"""`rua` admin commands through click's runner against the real test database (SQLite or Postgres)."""
from __future__ import annotations

import datetime
import os

import click
import pytest
from click.testing import CliRunner

from cli import main
from store import db, keys
from store.ids import normalize_ulid
from store.models import ApiKey, Domain, Member, Organization
from tests.factories import make_domain, make_key, make_member, make_org
from tests.store.scratch import empty_database_url


@pytest.fixture
def rua(database, config):
    """Run `rua ARGS…` with RUA_DATABASE_URL set to the test database; return click's Result."""
    runner = CliRunner()

    def invoke(*args, url=None):
        result = runner.invoke(main, [str(a) for a in args],
                               env={"RUA_DATABASE_URL": url or config.database_url})
        db.initialize(database)  # the command pointed the shared proxy at its own connection
        return result
    return invoke


def assert_refused(result, *fragments):
    """Exit status 2, one `rua: error:` line on stderr naming the problem, nothing on stdout."""
    assert result.exit_code == 2, (result.stdout, result.stderr, result.exception)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("rua: error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0]
    assert result.stdout == ""


def ok(result) -> list[str]:
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    return result.stdout.splitlines()


def all_commands(group=main, path=()):
    for name, command in sorted(group.commands.items()):
        yield path + (name,)
        if isinstance(command, click.Group):
            yield from all_commands(command, path + (name,))


ADMIN = [p for p in all_commands() if p[0] in ("init", "org", "plan", "member", "key", "domain")]


# --- help ------------------------------------------------------------------------------------

def test_rua_help_lists_the_admin_commands():
    listed = CliRunner().invoke(main, ["--help"]).stdout
    for name in ("init", "org", "plan", "member", "key", "domain"):
        assert f"\n  {name} " in listed


@pytest.mark.parametrize("path", ADMIN, ids=" ".join)
def test_every_admin_command_explains_itself(path):
    result = CliRunner().invoke(main, [*path, "--help"])
    assert result.exit_code == 0
    summary = result.stdout.split("\n\n")[1].strip()
    assert len(summary) > 20, result.stdout


# --- init and the schema -----------------------------------------------------------------------

def test_init_creates_the_schema_then_has_nothing_to_apply(rua, tmp_path):
    with empty_database_url(tmp_path) as url:
        first, second = ok(rua("init", url=url)), ok(rua("init", url=url))
        assert first == ["applied migration 1: initial schema", first[-1]]
        assert first[-1].startswith("schema version 1 (latest 1)")
        assert second[0] == "nothing to apply" and second[-1] == first[-1]
        ok(rua("org", "create", "Acme", url=url))


@pytest.mark.parametrize("command", [("org", "list"), ("org", "create", "Acme"),
                                     ("key", "list", "Acme"), ("domain", "list", "Acme")])
def test_a_command_before_init_says_to_run_init(rua, tmp_path, command):
    with empty_database_url(tmp_path) as url:
        assert_refused(rua(*command, url=url), "run `rua init` first")
        if url.startswith("sqlite"):
            assert not (tmp_path / "empty.db").exists()


def test_an_unreachable_server_is_one_line_not_a_traceback(rua):
    url = "postgresql://rua:secret@127.0.0.1:1/rua?connect_timeout=2"
    result = rua("org", "list", url=url)
    assert_refused(result, "cannot use the database postgresql://rua:***@127.0.0.1:1/rua")
    assert "secret" not in result.stderr


def test_a_sqlite_path_that_cannot_be_made_is_one_line(rua, tmp_path):
    (tmp_path / "plain-file").write_text("")
    assert_refused(rua("init", url=f"sqlite:///{tmp_path}/plain-file/rua.db"), "cannot use")


def test_an_unsupported_database_url_is_refused(rua):
    assert_refused(rua("org", "list", url="mysql://localhost/rua"), "unsupported database URL")


# --- organizations and plans ---------------------------------------------------------------------

def test_org_create_prints_only_the_new_id(rua):
    lines = ok(rua("org", "create", "Acme Corp", "--plan", "team"))
    assert len(lines) == 1 and normalize_ulid(lines[0]) == lines[0]
    org = Organization.get_by_id(lines[0])
    assert (org.name, org.plan) == ("Acme Corp", "team")


def test_org_create_defaults_to_the_free_plan(rua):
    assert Organization.get_by_id(ok(rua("org", "create", "Acme"))[0]).plan == "free"


@pytest.mark.parametrize("args, fragment", [
    (("Acme",), "already exists"),
    (("New", "--plan", "gold"), "unknown plan 'gold'"),
    (("   ",), "cannot be empty"),
    (("x" * 201,), "at most 200"),
    (("01ARZ3NDEKTSV4RRFFQ69G5FAV",), "looks like an organization id"),
])
def test_org_create_refuses_bad_input(rua, args, fragment):
    make_org("Acme")
    assert_refused(rua("org", "create", *args), fragment)
    assert Organization.select().count() == 1


def test_org_list_shows_id_name_and_plan_per_line(rua):
    acme, beta = make_org("Acme", plan="team"), make_org("Beta Org", plan="none")
    lines = ok(rua("org", "list"))
    assert [line.split() for line in lines] == [[acme.id, "Acme", "team"],
                                                [beta.id, "Beta", "Org", "none"]]


def test_org_list_of_an_empty_store_prints_nothing(rua):
    assert ok(rua("org", "list")) == []


@pytest.mark.parametrize("how", ["id", "lower-case id", "name"])
def test_plan_set_accepts_the_org_by_id_or_name(rua, how):
    org = make_org("Acme")
    ref = {"id": org.id, "lower-case id": org.id.lower(), "name": "Acme"}[how]
    assert ok(rua("plan", "set", ref, "unlimited")) == ["Acme: plan free -> unlimited"]
    assert Organization.get_by_id(org.id).plan == "unlimited"


def test_plan_set_refuses_an_unknown_plan_or_org(rua):
    make_org("Acme")
    assert_refused(rua("plan", "set", "Acme", "premium"), "unknown plan 'premium'")
    assert_refused(rua("plan", "set", "Nobody", "team"), "no organization 'Nobody'")
    assert Organization.get(Organization.name == "Acme").plan == "free"


# --- members -------------------------------------------------------------------------------------

def test_member_add_stores_the_address_in_lower_case_with_its_role(rua):
    org = make_org("Acme")
    ok(rua("member", "add", "Acme", " Ana@Example.COM ", "--role", "analyst"))
    member = Member.get(Member.org == org)
    assert (member.email, member.role) == ("ana@example.com", "analyst")
    assert ok(rua("member", "list", org.id)) == [f"{member.id}  ana@example.com  analyst"]


@pytest.mark.parametrize("args, fragment", [
    (("Acme", "ana@example.com", "--role", "viewer"), "already a member of Acme"),
    (("Acme", "ANA@example.com", "--role", "viewer"), "already a member of Acme"),
    (("Acme", "bob@example.com", "--role", "king"), "unknown role 'king'"),
    (("Acme", "not-an-address", "--role", "viewer"), "not an e-mail address"),
    (("Nobody", "bob@example.com", "--role", "viewer"), "no organization 'Nobody'"),
])
def test_member_add_refuses_bad_input(rua, args, fragment):
    make_member(make_org("Acme"), email="ana@example.com")
    assert_refused(rua("member", "add", *args), fragment)
    assert Member.select().count() == 1


def test_the_same_person_may_belong_to_two_organizations(rua):
    make_member(make_org("Acme"), email="ana@example.com")
    make_org("Beta")
    ok(rua("member", "add", "Beta", "ana@example.com", "--role", "billing"))
    assert Member.select().count() == 2


# --- keys ----------------------------------------------------------------------------------------

@pytest.fixture
def acme(database):
    org = make_org("Acme")
    make_member(org, email="ana@example.com", role="admin")
    return org


def every_stored_value(database):
    """Every value of every column of every table, as text, for secrets that must not be there."""
    for table in database.get_tables():
        for row in database.execute_sql(f'SELECT * FROM "{table}"').fetchall():
            for value in row:
                if isinstance(value, (bytes, bytearray, memoryview)):
                    value = bytes(value).decode("latin-1")
                yield table, str(value)


def test_key_create_prints_the_key_alone_on_the_last_line_once(rua, acme):
    result = rua("key", "create", "Acme", "--member", "ana@example.com", "--name", "grafana")
    plaintext = ok(result)[-1]
    assert keys.well_formed(plaintext)
    assert result.stdout.count(plaintext) == 1 and plaintext not in result.stderr
    row = ApiKey.get(ApiKey.org == acme)
    assert (row.name, row.scope, row.expires_at, row.revoked_at) == ("grafana", "read", None, None)
    assert row.digest == keys.digest(plaintext) and row.prefix == plaintext[:12]
    assert row.member.email == "ana@example.com"


def test_key_create_never_stores_the_key(rua, acme, database):
    plaintext = ok(rua("key", "create", "Acme", "--member", "ana@example.com"))[-1]
    body = plaintext[len("rua_"):]
    leaks = [(table, value) for table, value in every_stored_value(database)
             if plaintext in value or body in value]
    assert leaks == []


def test_key_create_takes_scope_expiry_and_the_org_by_id(rua, acme):
    ok(rua("key", "create", acme.id.lower(), "--member", "ana@example.com", "--scope", "full",
           "--expires", "2099-01-31"))
    row = ApiKey.get(ApiKey.org == acme)
    assert row.scope == "full" and row.expires_at == datetime.datetime(2099, 1, 31)


def test_key_create_for_an_org_without_api_access_warns(rua, acme):
    acme.plan = "none"
    acme.save()
    result = rua("key", "create", "Acme", "--member", "ana@example.com")
    assert keys.well_formed(ok(result)[-1]) and "plan none" in result.stderr


@pytest.mark.parametrize("args, fragment", [
    (("Nobody", "--member", "ana@example.com"), "no organization 'Nobody'"),
    (("Acme", "--member", "bob@example.com"), "'bob@example.com' is not a member of Acme"),
    (("Beta", "--member", "ana@example.com"), "is not a member of Beta"),
    (("Acme", "--member", "ana@example.com", "--scope", "admin"), "unknown scope 'admin'"),
    (("Acme", "--member", "ana@example.com", "--expires", "31/01/2099"), "not a date"),
    (("Acme", "--member", "ana@example.com", "--expires", "20990131"), "not a date"),
    (("Acme", "--member", "ana@example.com", "--expires", "2099-02-30"), "not a date"),
    (("Acme", "--member", "ana@example.com", "--expires", "2020-01-01"), "not in the future"),
    (("Acme", "--member", "ana@example.com", "--name", "n" * 201), "at most 200"),
])
def test_key_create_refuses_bad_input_and_writes_nothing(rua, acme, args, fragment):
    make_org("Beta")
    assert_refused(rua("key", "create", *args), fragment)
    assert ApiKey.select().count() == 0


def test_key_list_shows_id_name_prefix_scope_last_use_and_state(rua, acme):
    used, _ = make_key(acme, name="grafana", last_used_at=datetime.datetime(2026, 3, 1, 8, 0, 5))
    fresh, _ = make_key(acme, scope="full", expires_at=datetime.datetime(2099, 1, 1))
    rows = {line.split()[0]: line.split()[1:] for line in ok(rua("key", "list", "Acme"))}
    assert rows == {
        used.id: ["grafana", used.prefix, "read", "last", "used", "2026-03-01T08:00:05Z", "active"],
        fresh.id: ["-", fresh.prefix, "full", "last", "used", "never", "expires", "2099-01-01T00:00:00Z"],
    }


def test_a_revoked_key_stays_listed(rua, acme):
    row, _ = make_key(acme, name="old")
    ok(rua("key", "revoke", row.id))
    revoked_at = ApiKey.get_by_id(row.id).revoked_at
    assert revoked_at is not None
    (line,) = ok(rua("key", "list", "Acme"))
    assert line.startswith(row.id) and f"revoked {revoked_at:%Y-%m-%dT%H:%M:%SZ}" in line


def test_revoking_twice_keeps_the_first_time(rua, acme):
    row, _ = make_key(acme, revoked_at=datetime.datetime(2026, 1, 2, 3, 4, 5))
    assert "already revoked at 2026-01-02T03:04:05Z" in ok(rua("key", "revoke", row.id.lower()))[0]
    assert ApiKey.get_by_id(row.id).revoked_at == datetime.datetime(2026, 1, 2, 3, 4, 5)


@pytest.mark.parametrize("key_id", ["01ARZ3NDEKTSV4RRFFQ69G5FAV", "not-an-id"])
def test_revoking_an_unknown_key_is_refused(rua, acme, key_id):
    make_key(acme)
    assert_refused(rua("key", "revoke", key_id), f"no API key with id '{key_id}'")
    assert ApiKey.select().where(ApiKey.revoked_at.is_null(False)).count() == 0


def test_key_list_of_an_unknown_org_is_refused(rua):
    assert_refused(rua("key", "list", "Nobody"), "no organization 'Nobody'")


# --- domains -------------------------------------------------------------------------------------

@pytest.mark.parametrize("typed, stored", [("Example.COM.", "example.com"),
                                            ("bücher.example", "xn--bcher-kva.example")])
def test_domain_add_stores_the_normal_form_as_manual(rua, acme, typed, stored):
    assert ok(rua("domain", "add", "Acme", typed)) == [f"{stored} (manual) in Acme"]
    assert [(d.name, d.source) for d in Domain.select()] == [(stored, "manual")]


def test_adding_a_domain_its_reports_introduced_makes_it_both(rua, acme):
    make_domain(acme, name="example.com", source="auto")
    ok(rua("domain", "add", "Acme", "EXAMPLE.com"))
    assert [(d.name, d.source) for d in Domain.select()] == [("example.com", "both")]


@pytest.mark.parametrize("source", ["manual", "both"])
def test_adding_a_domain_twice_is_refused(rua, acme, source):
    make_domain(acme, name="example.com", source=source)
    assert_refused(rua("domain", "add", "Acme", "example.com"), "already monitored by Acme")
    assert [d.source for d in Domain.select()] == [source]


@pytest.mark.parametrize("name", ["exa mple.com", "localhost", "bad-.example", "192.0.2.1", "a..b"])
def test_domain_add_refuses_an_invalid_name(rua, acme, name):
    assert_refused(rua("domain", "add", "Acme", name), "invalid domain name")
    assert Domain.select().count() == 0


def test_domain_add_refuses_an_unknown_org(rua):
    assert_refused(rua("domain", "add", "Nobody", "example.com"), "no organization 'Nobody'")


def test_the_same_domain_may_be_monitored_by_two_organizations(rua, acme):
    make_domain(make_org("Beta"), name="example.com")
    ok(rua("domain", "add", "Acme", "example.com"))
    assert Domain.select().count() == 2


def test_domain_list_shows_name_source_and_state(rua, acme):
    make_domain(acme, name="b.example", source="auto", dmarc_state="verified")
    make_domain(acme, name="a.example")
    make_domain(make_org("Beta"), name="c.example")
    assert [line.split() for line in ok(rua("domain", "list", "Acme"))] == [
        ["a.example", "manual", "pending"], ["b.example", "auto", "verified"]]


@pytest.mark.parametrize("source", ["manual", "auto"])
def test_domain_remove_deletes_a_single_source_domain(rua, acme, source):
    make_domain(acme, name="example.com", source=source)
    assert ok(rua("domain", "remove", "Acme", "Example.com")) == ["removed example.com from Acme"]
    assert Domain.select().count() == 0


def test_removing_a_both_domain_leaves_it_as_auto(rua, acme):
    make_domain(acme, name="example.com", source="both")
    ok(rua("domain", "remove", "Acme", "example.com"))
    assert [d.source for d in Domain.select()] == ["auto"]


def test_removing_an_unmonitored_domain_is_refused(rua, acme):
    make_domain(make_org("Beta"), name="example.com")
    assert_refused(rua("domain", "remove", "Acme", "example.com"), "Acme does not monitor example.com")
    assert Domain.select().count() == 1


def test_the_admin_commands_leave_no_rua_variable_behind(rua):
    ok(rua("org", "list"))
    assert not [name for name in os.environ if name.startswith("RUA_")]
