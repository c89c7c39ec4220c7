"""The metrics read from the store at scrape time (store/monitoring.py), as Prometheus families.

The DMARC families keep the names of jgosmann/dmarc-metrics-exporter (dmarc_total,
dmarc_compliant_total, ...) and its `reporter` and `from_domain` labels, so its dashboards work;
`organization` is added, since one rua serves several. Their figures come from report summaries
and rollups, so retention does not lower them.
"""
from __future__ import annotations

from datetime import datetime

from peewee import DatabaseError, InterfaceError
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from store import db, job_runs, monitoring
from store.clock import to_epoch
from webapp.errors import UNAVAILABLE

REPORTER = ("organization", "reporter", "from_domain")
DOMAIN = ("organization", "from_domain")


class StoreCollector:
    """Registered once per app; each scrape reads the store anew."""

    def __init__(self, clock):
        self.clock = clock

    def describe(self):
        return []           # the families depend on the store: nothing to check at registration

    def collect(self):
        up = GaugeMetricFamily("rua_store_up", "1 when the store answered this scrape, else 0.")
        try:
            with db.connection_context():
                families = list(self._read(self.clock()))
        except (DatabaseError, InterfaceError, *UNAVAILABLE):
            up.add_metric([], 0)
            return [up]
        up.add_metric([], 1)
        return [up, *families]

    def _read(self, now: datetime):
        yield from dmarc_families()
        yield from score_families()
        yield from ingest_families(now)
        yield from job_families()
        yield from outbox_families()
        yield from check_families()


def dmarc_families():
    total = CounterMetricFamily("dmarc_total", "Reported messages.", labels=REPORTER)
    compliant = CounterMetricFamily("dmarc_compliant_total",
                                    "Reported messages that passed DMARC.", labels=REPORTER)
    for row in monitoring.messages_by_reporter():
        labels = [row.organization, row.reporter, row.domain]
        total.add_metric(labels, row.total)
        compliant.add_metric(labels, row.compliant)
    spf = CounterMetricFamily("dmarc_spf_aligned_total",
                              "Reported messages with an aligned SPF pass.", labels=DOMAIN)
    dkim = CounterMetricFamily("dmarc_dkim_aligned_total",
                               "Reported messages with an aligned DKIM pass.", labels=DOMAIN)
    for row in monitoring.aligned_passes():
        spf.add_metric([row.organization, row.domain], row.first)
        dkim.add_metric([row.organization, row.domain], row.second)
    quarantine = CounterMetricFamily("dmarc_quarantine_total",
                                     "Reported messages quarantined.", labels=DOMAIN)
    reject = CounterMetricFamily("dmarc_reject_total", "Reported messages rejected.",
                                 labels=DOMAIN)
    for row in monitoring.held_messages():
        quarantine.add_metric([row.organization, row.domain], row.first)
        reject.add_metric([row.organization, row.domain], row.second)
    return [total, compliant, spf, dkim, quarantine, reject]


def score_families():
    """The scores the API serves (/compliance-score, as last stored), per monitored domain:
    bounded by the organizations' domains, never by what reporters send."""
    organization = GaugeMetricFamily(
        "rua_organization_score", "The organization's compliance score (0-100) over the "
        "scoring window, as /compliance-score gives it.", labels=("organization",))
    domain = GaugeMetricFamily(
        "rua_domain_score", "The monitored domain's compliance score (0-100) over the scoring "
        "window.", labels=DOMAIN)
    passing = GaugeMetricFamily(
        "rua_domain_compliance_ratio", "Share (0-1) of the monitored domain's messages in the "
        "scoring window that passed DMARC.", labels=DOMAIN)
    for org in monitoring.compliance_scores():
        if org.score is not None:
            organization.add_metric([org.organization], org.score)
        for entry in org.domains:
            labels = [org.organization, entry["domain"]]
            domain.add_metric(labels, entry["score"])
            passing.add_metric(labels, entry["compliance_rate"] / 100)
    return [organization, domain, passing]


def ingest_families(now: datetime):
    stored = CounterMetricFamily("rua_ingest_reports_total", "Reports stored, by kind and outcome.",
                                 labels=("kind", "outcome"))
    stored.add_metric(["dmarc", "stored"], monitoring.reports_stored())
    newest = GaugeMetricFamily("rua_newest_report_age_seconds",
                               "Seconds since the organization's newest report was received.",
                               labels=("organization",))
    for row in monitoring.newest_reports():
        newest.add_metric([row.organization], _seconds_since(row.since, now))
    lag = GaugeMetricFamily("rua_snapshot_lag_seconds",
                            "Seconds the organization's snapshots have waited for a refresh "
                            "(0: current).", labels=("organization",))
    behind = {row.organization: row.since for row in monitoring.snapshots_behind()}
    for name in monitoring.organizations():
        since = behind.get(name)
        lag.add_metric([name], 0 if since is None else _seconds_since(since, now))
    return [stored, newest, lag]


def job_families():
    labels = ("job",)
    runs = CounterMetricFamily("rua_job_runs_total", "Runs of the scheduled job begun.",
                               labels=labels)
    failures = CounterMetricFamily("rua_job_failures_total", "Runs of the job that failed.",
                                   labels=labels)
    started = GaugeMetricFamily("rua_job_last_start_timestamp_seconds",
                                "When the job's latest run began (Unix time).", labels=labels)
    seconds = GaugeMetricFamily("rua_job_last_duration_seconds",
                                "How long the job's latest finished run took.", labels=labels)
    success = GaugeMetricFamily("rua_job_last_success",
                                "1 when the job's latest finished run succeeded, else 0.",
                                labels=labels)
    for run in job_runs.last_runs():
        runs.add_metric([run.name], run.runs)
        failures.add_metric([run.name], run.failures)
        started.add_metric([run.name], to_epoch(run.started_at))
        if run.finished_at is not None and run.finished_at >= run.started_at:
            seconds.add_metric([run.name], (run.finished_at - run.started_at).total_seconds())
        if run.ok is not None:
            success.add_metric([run.name], 1 if run.ok else 0)
    return [runs, failures, started, seconds, success]


def outbox_families():
    labels = ("channel_kind",)
    pending = GaugeMetricFamily("rua_outbox_pending",
                                "Deliveries waiting to be sent or retried.", labels=labels)
    delivered = CounterMetricFamily("rua_outbox_delivered_total", "Deliveries made.",
                                    labels=labels)
    given_up = CounterMetricFamily("rua_outbox_given_up_total",
                                   "Deliveries given up after their last attempt.", labels=labels)
    for row in monitoring.deliveries():
        pending.add_metric([row.kind], row.pending)
        delivered.add_metric([row.kind], row.delivered)
        given_up.add_metric([row.kind], row.given_up)
    return [pending, delivered, given_up]


def check_families():
    domains = GaugeMetricFamily("rua_domains", "Domains by DMARC verification state.",
                                labels=("state",))
    for state, count in sorted(monitoring.domains_by_state().items()):
        domains.add_metric([state], count)
    records = GaugeMetricFamily("rua_dns_records",
                                "Domains by DNS record kind and the status of its last check.",
                                labels=("record", "status"))
    for (kind, status), count in sorted(monitoring.dns_statuses().items()):
        records.add_metric([kind, status], count)
    sources = GaugeMetricFamily("rua_sources", "Sending IPs by enrichment state.",
                                labels=("enrichment",))
    for state, count in sorted(monitoring.sources_by_enrichment().items()):
        sources.add_metric([state], count)
    return [domains, records, sources]


def _seconds_since(moment: datetime, now: datetime) -> float:
    return max((now - moment).total_seconds(), 0.0)
