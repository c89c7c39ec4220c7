"""A job whose work failed is a failed run: recorded, logged in one line, said by `--once`."""
from __future__ import annotations

import socket

import pytest

from jobs.scheduler import run_exclusive, run_scheduled
from jobs.table import job_table
from store import job_runs
from store.job_runs import JobFailed
from tests.factories import make_domain, make_org, make_report


@pytest.fixture
def silent_port():
    """A UDP port on 127.0.0.1 that takes questions and never answers: a dead resolver."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


@pytest.fixture
def silent_resolver(config, silent_port):
    return config.replace(offline=False, dns_nameservers="127.0.0.1", dns_port=silent_port,
                          dns_timeout=0.5)


def table_job(config, name: str):
    return next(job for job_name, job, _ in job_table(config) if job_name == name)


def last_run():
    [run] = job_runs.last_runs()
    return run.name, run.ok, run.runs, run.failures


def test_a_dns_check_whose_resolver_answers_nothing_is_a_failed_run(database, silent_resolver):
    make_domain(make_org(), "example.com")
    with pytest.raises(JobFailed, match="^DNS check: resolver 127.0.0.1 did not answer"):
        run_exclusive("dns", table_job(silent_resolver, "dns"), silent_resolver)
    assert last_run() == ("dns", False, 1, 1)


def test_source_enrichment_whose_resolver_answers_nothing_is_a_failed_run(database,
                                                                          silent_resolver):
    make_report(make_org(), records=[{"source_ip": "198.51.100.7"}])
    with pytest.raises(JobFailed, match="^source enrichment: resolver 127.0.0.1 did not answer"):
        run_exclusive("sources", table_job(silent_resolver, "sources"), silent_resolver)
    assert last_run() == ("sources", False, 1, 1)


def test_the_scheduler_logs_a_failed_run_in_one_line_without_a_traceback(database, config,
                                                                        caplog):
    def refused(now):
        raise JobFailed("the mailbox refused the login")
    run_scheduled("fetch", refused, config)          # APScheduler is handed nothing to print
    [line] = [r for r in caplog.records if r.name == "rua.scheduler"]
    assert line.levelname == "ERROR" and line.exc_info is None
    assert line.getMessage().startswith("job fetch failed in ")
    assert line.getMessage().endswith("s: the mailbox refused the login")
    assert (line.job, line.outcome, line.reason) == ("fetch", "failed",
                                                     "the mailbox refused the login")
    assert last_run() == ("fetch", False, 1, 1)


def test_an_unexpected_error_is_a_failed_run_raised_for_its_traceback(database, config):
    def broken(now):
        raise ZeroDivisionError("a bug")
    with pytest.raises(ZeroDivisionError):
        run_scheduled("dirty", broken, config)
    assert last_run() == ("dirty", False, 1, 1)


def test_once_says_the_failure_and_exits_non_zero(rua, database, silent_port, monkeypatch):
    make_domain(make_org(), "example.com")
    for name, value in {"RUA_DNS_NAMESERVERS": "127.0.0.1", "RUA_DNS_PORT": str(silent_port),
                        "RUA_DNS_TIMEOUT": "0.5"}.items():
        monkeypatch.setenv(name, value)
    result = rua("scheduler", "--once", "dns")
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert result.stderr.splitlines()[-1].startswith(
        "rua: error: job dns failed: DNS check: resolver 127.0.0.1 did not answer")
    assert last_run() == ("dns", False, 1, 1)
