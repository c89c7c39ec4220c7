"""Settings: working defaults, coercion by type, unknown RUA_* names refused, the docs table in step."""
from __future__ import annotations

import dataclasses
import os
import pathlib
import re
import subprocess
import sys

import pytest
from click.testing import CliRunner

from cli import main
from config import PREFIX, Config, ConfigError

SETTINGS_DOC = pathlib.Path(__file__).resolve().parent.parent / "docs" / "configuration.md"
RUA = pathlib.Path(sys.executable).parent / "rua"


def test_no_variables_give_the_documented_defaults():
    config = Config.from_env({})
    assert config == Config()
    assert config.database_url == "sqlite:///var/rua.db" and config.is_sqlite
    assert config.base_url == "http://127.0.0.1:8000/api/v1"
    assert config.offline is False


@pytest.mark.parametrize("name, raw, field, expected", [
    ("RUA_OFFLINE", "1", "offline", True),
    ("RUA_OFFLINE", "TRUE", "offline", True),
    ("RUA_OFFLINE", " yes ", "offline", True),
    ("RUA_OFFLINE", "on", "offline", True),
    ("RUA_OFFLINE", "0", "offline", False),
    ("RUA_OFFLINE", "off", "offline", False),
    ("RUA_OFFLINE", "", "offline", False),
    ("RUA_DNS_PORT", "5353", "dns_port", 5353),
    ("RUA_DNS_TIMEOUT", "0.5", "dns_timeout", 0.5),
    ("RUA_MAX_REPORT_BYTES", "1024", "max_report_bytes", 1024),
    ("RUA_DATABASE_URL", "postgresql://db/rua", "database_url", "postgresql://db/rua"),
])
def test_values_are_coerced_by_the_fields_type(name, raw, field, expected):
    value = getattr(Config.from_env({name: raw}), field)
    assert value == expected and type(value) is type(expected)


def test_a_postgres_url_is_not_sqlite():
    assert not Config.from_env({"RUA_DATABASE_URL": "postgresql://db/rua"}).is_sqlite


@pytest.mark.parametrize("name, raw", [("RUA_OFFLINE", "maybe"), ("RUA_DNS_PORT", "53a"),
                                       ("RUA_DNS_TIMEOUT", "soon"), ("RUA_WORKERS", "2.5")])
def test_an_unreadable_value_is_an_error_naming_it(name, raw):
    with pytest.raises(ConfigError, match=name):
        Config.from_env({name: raw})


def test_an_unknown_rua_name_is_an_error_that_names_the_closest_setting():
    with pytest.raises(ConfigError) as caught:
        Config.from_env({"RUA_DATBASE_URL": "sqlite:///x.db"})
    assert str(caught.value) == "unknown setting RUA_DATBASE_URL: did you mean RUA_DATABASE_URL?"


def test_an_unknown_name_like_no_setting_points_at_the_settings_table():
    with pytest.raises(ConfigError) as caught:
        Config.from_env({"RUA_TYPO": "1"})
    assert str(caught.value) == "unknown setting RUA_TYPO (every setting: docs/configuration.md)"


def test_other_variables_are_ignored():
    assert Config.from_env({"PATH": "/bin", "RUAX": "1", "DATABASE_URL": "x"}) == Config()


def test_a_setting_without_the_prefix_is_ignored_with_a_warning(caplog):
    assert Config.from_env({"DATABASE_URL": "postgresql://db/x", "BIND": "x"}) == Config()
    assert caplog.messages == ["DATABASE_URL is set but rua reads RUA_DATABASE_URL only: "
                               "DATABASE_URL is ignored"]


def test_no_warning_when_the_prefixed_setting_is_set_too(caplog):
    Config.from_env({"DATABASE_URL": "postgresql://db/x", "RUA_DATABASE_URL": "sqlite:///x.db"})
    assert caplog.messages == []


@pytest.mark.parametrize("name, raw, said", [
    ("RUA_LOG_FORMAT", "xml", "RUA_LOG_FORMAT='xml' is not one of text, json"),
    ("RUA_LOG_LEVEL", "loud", "RUA_LOG_LEVEL='loud' is not one of debug, info, warning, error, "
                              "critical"),
    ("RUA_RETENTION_DAYS", "-5", "RUA_RETENTION_DAYS=-5 must be 0 or more"),
])
def test_a_value_outside_its_settings_range_is_refused(name, raw, said):
    with pytest.raises(ConfigError) as caught:
        Config.from_env({name: raw})
    assert str(caught.value) == said


def test_words_are_taken_in_any_case():
    assert Config.from_env({"RUA_LOG_LEVEL": "DEBUG", "RUA_LOG_FORMAT": "JSON"}).log_level == "DEBUG"


def test_config_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Config().offline = True


@pytest.mark.parametrize("env, fragment", [({"RUA_TYPO": "1"}, "unknown setting RUA_TYPO"),
                                           ({"RUA_DNS_PORT": "x"}, "RUA_DNS_PORT='x'"),
                                           ({"RUA_LOG_FORMAT": "xml"}, "RUA_LOG_FORMAT='xml'"),
                                           ({"RUA_RETENTION_DAYS": "-5"}, "RUA_RETENTION_DAYS=-5")])
def test_rua_refuses_bad_settings_at_start_up_with_status_2(env, fragment):
    result = CliRunner().invoke(main, ["org", "list"], env=env)
    assert result.exit_code == 2
    assert result.stderr.startswith("rua: error: ") and fragment in result.stderr
    assert result.stdout == ""


def test_the_installed_rua_script_refuses_an_unknown_setting(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(PREFIX)}
    env["RUA_DATABSE_URL"] = f"sqlite:///{tmp_path}/x.db"
    done = subprocess.run([str(RUA), "init"], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [done.stderr.strip()] and "RUA_DATABSE_URL" in done.stderr
    assert not (tmp_path / "x.db").exists() and not (tmp_path / "var").exists()


def readme_settings() -> dict[str, str]:
    """docs/configuration.md's settings table as {variable: default}, without backticks."""
    text = SETTINGS_DOC.read_text(encoding="utf-8")
    section = text.split("\n## Settings\n", 1)[1]
    rows = re.findall(r"^\| `(RUA_[A-Z0-9_]+)` \| `([^`]*)` \|", section, re.MULTILINE)
    assert len(rows) == len(dict(rows)), "a variable is listed twice"
    return dict(rows)


def as_written(value) -> str:
    """How a default reads in the settings table (and as an environment value)."""
    if isinstance(value, bool):
        return "1" if value else "0"
    return '""' if value == "" else str(value)


def test_the_settings_table_lists_exactly_the_settings_with_their_defaults():
    expected = {PREFIX + f.name.upper(): as_written(f.default) for f in dataclasses.fields(Config)}
    assert readme_settings() == expected


def test_every_documented_default_reads_back_as_the_default():
    written = {name: ("" if raw == '""' else raw) for name, raw in readme_settings().items()}
    assert Config.from_env(written) == Config()


def test_the_test_suites_own_settings_are_not_taken_for_typos():
    config = Config.from_env({"RUA_CORPUS": "/corpus", "RUA_TEST_DATABASE_URL": "postgresql://x/y"})
    assert config == Config()
