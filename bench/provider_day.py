"""A provider's day, with faults: rua's processes all at once on one Postgres for --minutes,
then what was lost, doubled or slow (prints and checks; exit 1 when a check fails).

    .venv/bin/python bench/provider_day.py [--minutes 15] [--organizations 200] [--domains 25]
        [--rate 5] [--read-rate 20] [--json FILE]

It starts its own Postgres cluster (initdb/pg_ctl as the `postgres` user, its own port, data
under /tmp, autovacuum on), a Dovecot mailbox (tests/intake/dovecot.py), a DNS server in a
process of its own publishing the reporters' DKIM keys (tests/dns_server.py), two gunicorn
hosts, two `rua scheduler`s and two `rua fetch imap --watch` on the one mailbox, each restarted
as systemd would when it dies. A feeder appends demo/'s DMARC and TLS reports, signed, at
--rate a second (one in 20 an exact copy, one in 25 a conflicting copy), readers call every
route at --read-rate with rotating keys, and on a schedule: kill -9 of the fetcher and of the
scheduler holding a job's lock, a Postgres restart (fast shutdown), a table ingest writes
locked for 10 s. The checks and figures: bench/provider_checks.py.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)

import trustme  # noqa: E402

from bench import ingest_provider, provider_checks, provider_faults  # noqa: E402
from bench.provider_cluster import Service  # noqa: E402
from bench.provider_mail import Mailer, organizations  # noqa: E402
from bench.provider_traffic import (  # noqa: E402
    KEYS_PER_ORG, Feeder, Mailbox, Readers, Seen, Watcher)
from tests.intake import dovecot  # noqa: E402
from tests.postgres_cluster import Postgres  # noqa: E402
from tests.servers import free_port, wait_until_listening  # noqa: E402

SETTLE_SECONDS = 150           # after the feed stops: the last mail fetched and summarized


def build_store(url: str, orgs) -> dict[str, list[str]]:
    """ingest_provider's store (the organizations and their domains), each organization on the
    team plan (metered) with its keys; organization name -> keys."""
    from store import open_db
    from store.models import Organization
    from tests.factories import make_key
    ingest_provider.build_store(url, orgs)
    database = open_db(url)
    with database.connection_context(), database.atomic():
        Organization.update(plan="team").execute()
        keys = {org.name: [make_key(org, role="admin")[1] for _ in range(KEYS_PER_ORG)]
                for org in Organization.select()}
    database.close_all()
    return keys


def serve_dns(zones_file: str) -> None:
    """The child process of the DNS server: serves the zones, prints its port, waits."""
    from tests.dns_server import DNSServer
    server = DNSServer().start()
    for origin, text in json.loads(pathlib.Path(zones_file).read_text()).items():
        server.zone(origin, text)
    print(server.port, flush=True)
    threading.Event().wait()


def services(work: pathlib.Path, env: dict) -> dict[str, Service]:
    rua = str(pathlib.Path(sys.executable).parent / "rua")
    made = {}
    for number in (1, 2):
        port = free_port()
        made[f"host-{number}"] = Service(
            f"host-{number}", [sys.executable, "-m", "gunicorn", "-c",
                               str(ROOT / "deploy" / "gunicorn.conf.py"),
                               "--access-logfile", "/dev/null"],
            {**env, "RUA_BIND": f"127.0.0.1:{port}"}, work / f"host-{number}.log", str(ROOT))
        made[f"host-{number}"].port = port
        made[f"scheduler-{number}"] = Service(f"scheduler-{number}", [rua, "scheduler"], env,
                                              work / f"scheduler-{number}.log", str(ROOT))
        made[f"fetcher-{number}"] = Service(
            f"fetcher-{number}", [rua, "fetch", "imap", "--watch", "--format", "json"], env,
            work / f"fetcher-{number}.log", str(ROOT))
    return made


def environment(work: pathlib.Path, url: str, mail, dns_port: int) -> dict:
    secret = work / "imap-password"
    secret.write_text(dovecot.PASSWORD)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUA_")}
    env.update(RUA_DATABASE_URL=url, RUA_LOCK_DIR=str(work), RUA_LOG_FORMAT="json",
               RUA_WORKERS="2", RUA_IMAP_URL=mail.url("INBOX"), RUA_IMAP_CA_FILE=mail.ca_file,
               RUA_IMAP_PASSWORD_FILE=str(secret), RUA_DNS_NAMESERVERS="127.0.0.1",
               RUA_DNS_PORT=str(dns_port),
               PYTHONUNBUFFERED="1")          # each line stamped as it is written
    return env


def run(args) -> dict:
    work = pathlib.Path(tempfile.mkdtemp(prefix="rua-soak-"))
    os.chmod(work, 0o755)
    orgs = organizations(args.organizations, args.domains)
    postgres = Postgres(work / "postgres", free_port()).create()
    postgres.start()
    mail = dovecot.start(trustme.CA())
    mailer = Mailer(orgs, dt.datetime.now(dt.timezone.utc).date() - dt.timedelta(days=1))
    zones = work / "zones.json"
    zones.write_text(json.dumps(mailer.zones()))
    dns = subprocess.Popen([sys.executable, __file__, "--serve-dns", str(zones)],
                           stdout=subprocess.PIPE, cwd=ROOT)
    procs: dict[str, Service] = {}
    try:
        url = postgres.create_database("rua")
        keys = build_store(url, orgs)
        env = environment(work, url, mail, int(dns.stdout.readline()))
        procs = services(work, env)
        for service in procs.values():
            service.start()
        hosts = []
        for name in ("host-1", "host-2"):
            wait_until_listening(procs[name].process, procs[name].port, lambda: "", name)
            hosts.append(f"http://127.0.0.1:{procs[name].port}/api/v1")
        return day(args, work, postgres, url, procs, hosts, keys, orgs, mailer, mail)
    finally:
        for service in procs.values():
            service.stop()
        dns.kill()
        dovecot.stop(mail)
        postgres.destroy()
        print(f"logs kept in {work}")


def day(args, work, postgres, url, procs, hosts, keys, orgs, mailer, mail) -> dict:
    mailbox = Mailbox(mail, dovecot.USER, dovecot.PASSWORD)
    seen = Seen()
    domains = dict(orgs)
    feeder = Feeder(mailbox, mailer, args.rate)
    readers = Readers(hosts, keys, domains, args.read_rate, seen)
    watcher = Watcher(hosts, keys, feeder, seen)
    memory = provider_checks.Memory(procs)
    began = time.time()
    for thread in (feeder, readers, watcher, memory):
        thread.start()
    faults = provider_faults.Schedule(postgres, url, procs, hosts, keys, args.minutes * 60,
                                     seen)
    faults.run(began)
    feeder.stopping.set()
    readers.stopping.set()
    feeder.join()
    readers.join()
    fed_until = time.time()
    settle(mailbox, watcher, feeder, faults, procs)
    watcher.stopping.set()
    watcher.join()
    memory.stopping.set()
    return provider_checks.Results(
        args=vars(args), began=began, fed_until=fed_until, feeder=feeder, watcher=watcher,
        seen=seen, faults=faults, memory=memory, procs=procs, hosts=hosts, keys=keys,
        url=url).collect()


def settle(mailbox, watcher, feeder, faults, procs) -> None:
    """Until the mailbox is empty, every report sent is listed and summarized, and each
    scheduler and fetcher has had a session since Postgres restarted (or the settling time is
    up)."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while time.monotonic() < deadline:
        done = all(item in watcher.listed and (sent.kind == "tls" or item in watcher.summarized)
                   for item, (_, sent) in list(feeder.sent.items()))
        ran = all(name in faults.reconnected.first for name in procs
                  if not name.startswith("host-"))
        if done and ran and mailbox.waiting() == 0:
            return
        time.sleep(1)


def more_than_zero(kind):
    """An option's type: a finite number of `kind` above zero, else argparse's usage error."""
    wanted = "a whole number above zero" if kind is int else "a number above zero"

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            value = None
        if value is None or not 0 < value < float("inf"):      # NaN fails the comparison too
            raise argparse.ArgumentTypeError(f"{text!r} is not {wanted}")
        return value
    return parse


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=more_than_zero(float), default=15,
                        help="how long the day runs, faults included (default %(default)s)")
    parser.add_argument("--organizations", type=more_than_zero(int), default=200,
                        help="organizations, each with its keys and mail (default %(default)s)")
    parser.add_argument("--domains", type=more_than_zero(int), default=25,
                        help="domains per organization (default %(default)s)")
    parser.add_argument("--rate", type=more_than_zero(float), default=5,
                        help="reports appended a second (default %(default)s)")
    parser.add_argument("--read-rate", type=more_than_zero(float), default=20,
                        help="API requests a second (default %(default)s)")
    parser.add_argument("--json", help="also write the figures and checks to this file")
    parser.add_argument("--serve-dns", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_dns:
        serve_dns(args.serve_dns)
        return
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; "
          f"{args.organizations} organizations x {args.domains} domains, {args.minutes} minutes",
          flush=True)
    results = run(args)
    provider_checks.show(results)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=1, default=str))
    sys.exit(0 if all(results["checks"].values()) else 1)


if __name__ == "__main__":
    main()
