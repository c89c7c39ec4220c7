"""`rua init`, `org`, `plan` and `member` through click's runner on the test database (SQLite or Postgres)."""
from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from cli import main
from store import make_database
from store.ids import normalize_ulid
from store.migrations import MIGRATIONS, latest_version
from store.models import Member, Organization
from tests.cli.outcome import assert_refused, ok
from tests.factories import make_member, make_org
from tests.store.scratch import empty_database_url


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
        # Every migration in order, whatever number the latest one has.
        applied = [f"applied migration {v}: " for v, _, _ in MIGRATIONS]
        assert first[0] == "applied migration 1: initial schema"
        done, latest = len(applied), MIGRATIONS[-1][0]
        assert [line[:len(start)] for line, start in zip(first, applied)] == applied
        if not url.startswith("sqlite"):    # nothing of SQLite's files or triggers said there
            assert not any("SQLite" in line for line in first), first
        assert first[done].startswith(f"schema version {latest} (latest {latest})")
        # On SQLite, where the counters' own file is, for backups.
        assert first[done + 1:] == ([f"request counters in {tmp_path / 'empty.meter.db'}"]
                                    if url.startswith("sqlite") else [])
        assert second[0] == "nothing to apply" and second[1:] == first[done:]
        ok(rua("org", "create", "Acme", url=url))


def test_init_refuses_a_store_a_newer_rua_made_and_changes_nothing(rua, tmp_path):
    with empty_database_url(tmp_path) as url:
        ok(rua("init", url=url))
        newer = make_database(url)
        with newer.connection_context():
            newer.execute_sql("INSERT INTO schema_version (version, description, applied_at) "
                              "VALUES (99, 'made by a newer rua', CURRENT_TIMESTAMP)")
        refusal = (f"the store's schema version 99 is newer than this rua knows "
                   f"({latest_version()}): run a rua that knows it")
        assert_refused(rua("init", url=url), refusal)
        assert_refused(rua("org", "list", url=url), refusal)
        assert_refused(rua("scheduler", url=url), refusal)
        with newer.connection_context():
            rows = newer.execute_sql("SELECT count(*) FROM schema_version").fetchone()[0]
        if hasattr(newer, "close_all"):
            newer.close_all()
        assert rows == len(MIGRATIONS) + 1


@pytest.mark.parametrize("command", [("org", "list"), ("org", "create", "Acme"),
                                     ("key", "list", "Acme"), ("domain", "list", "Acme")])
def test_a_command_before_init_says_to_run_init(rua, tmp_path, command):
    with empty_database_url(tmp_path) as url:
        assert_refused(rua(*command, url=url), "run `rua init` first")
        if url.startswith("sqlite"):
            assert not (tmp_path / "empty.db").exists()


@pytest.mark.parametrize("command", [("org", "list"), ("snapshot",),
                                     ("scheduler", "--once", "dirty")])
def test_a_command_before_init_leaves_no_folder_behind(rua, tmp_path, command):
    # The README: an error changes nothing (here: no ./var made for a store that is not there).
    folder = tmp_path / "var"
    assert_refused(rua(*command, url=f"sqlite:///{folder}/rua.db"),
                   f"no database at {folder}/rua.db: run `rua init` first")
    assert not folder.exists()


def test_an_unreachable_server_is_one_line_not_a_traceback(rua):
    url = "postgresql://rua:secret@127.0.0.1:1/rua?connect_timeout=2"
    result = rua("org", "list", url=url)
    assert_refused(result, "cannot use the database postgresql://rua:***@127.0.0.1:1/rua")
    assert "secret" not in result.stderr


@pytest.mark.parametrize("url", [
    "postgresql://rua:Sup3r/S3cret@127.0.0.1:1/rua",       # the '/' makes 'Sup3r' a "port"
    "postgresql://rua:25/S3cret@127.0.0.1:1/rua",          # ... here a port and a path
    "postgresql://rua:Sup3r#S3cret@127.0.0.1:1/rua",
    "mysql://rua:Sup3r/S3cret@127.0.0.1/rua",
])
def test_a_database_password_is_never_printed_whatever_it_holds(rua, url):
    result = rua("org", "list", url=url)
    assert result.exit_code != 0
    assert "Sup3r" not in result.output + result.stderr
    assert "S3cret" not in result.output + result.stderr


def test_redacted_masks_a_password_with_a_slash():
    from cli.session import redacted
    assert redacted("postgresql://rua:Sup3r/S3cret@db:5432/rua") == "postgresql://rua:***@db:5432/rua"


def test_a_sqlite_path_that_cannot_be_made_is_one_line(rua, tmp_path):
    (tmp_path / "plain-file").write_text("")
    assert_refused(rua("init", url=f"sqlite:///{tmp_path}/plain-file/rua.db"), "cannot use")


def test_an_unsupported_database_url_is_refused(rua):
    assert_refused(rua("org", "list", url="mysql://localhost/rua"), "unsupported database URL")


@pytest.mark.parametrize("query, said", [
    ("max_connectionz=3", "RUA_DATABASE_URL: max_connectionz is not a connection option: "
                          "did you mean max_connections?"),
    ("sslmodez=require", "RUA_DATABASE_URL: sslmodez is not a connection option "
                         "(see libpq's connection parameters)"),
    ("connect_timeout=abc", "RUA_DATABASE_URL: connect_timeout='abc' is not a whole number of 0 "
                            "or more"),
    ("max_connections=0", "RUA_DATABASE_URL: max_connections='0' is not a whole number of 1 "
                          "or more"),
])
def test_a_database_url_option_rua_cannot_use_is_one_line_naming_it(rua, query, said):
    result = rua("org", "list", url=f"postgresql://postgres@127.0.0.1:1/rua?{query}")
    assert_refused(result, said)


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
    (("two\nlines",), "control characters"),
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


def test_member_add_stores_an_idn_domain_in_its_ascii_form_and_finds_it_by_either(rua):
    org = make_org("Acme")
    ok(rua("member", "add", "Acme", "ana@straße.de", "--role", "viewer"))
    assert Member.get(Member.org == org).email == "ana@xn--strae-oqa.de"
    assert_refused(rua("member", "add", "Acme", "ANA@straße.de", "--role", "viewer"),
                   "already a member of Acme")


@pytest.mark.parametrize("args, fragment", [
    (("Acme", "ana@example.com", "--role", "viewer"), "already a member of Acme"),
    (("Acme", "ANA@example.com", "--role", "viewer"), "already a member of Acme"),
    (("Acme", "bob@example.com", "--role", "king"), "unknown role 'king'"),
    (("Acme", "not-an-address", "--role", "viewer"), "not an e-mail address"),
    (("Acme", "a..b@example.com", "--role", "viewer"), "not an e-mail address"),
    (("Acme", "rua@localhost", "--role", "viewer"), "not an e-mail address"),
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



def test_init_marks_dirty_the_organizations_holding_snapshots_of_an_older_shape(rua):
    from snapshotter import jobs
    from store import snapshots
    from store.clock import utcnow
    older, current = make_org(), make_org()
    snapshots.put_many(older.id, {("overview", ""): {}}, utcnow())         # no shape version
    snapshots.put_many(current.id, {("overview", ""): {}}, utcnow(), shapes=jobs.SHAPE_VERSIONS)
    lines = ok(rua("init"))
    assert ("1 organization(s) hold snapshots of an older shape: marked for the snapshotter to "
            "recompute") in lines
    dirty = {o.id for o in Organization.select().where(Organization.dirty_since.is_null(False))}
    assert dirty == {older.id}
