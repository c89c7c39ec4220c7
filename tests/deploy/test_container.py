"""The Containerfile and compose.yaml, built and run for real with podman and podman-compose.

No image registry is reachable in CI, so the base is a Debian bookworm made with mmdebstrap and
imported with `podman import`; rua's image is built on it from the Containerfile (BASE) and a
Postgres image from Debian's package stands in for the official one (tests/deploy/container).
Everything podman keeps (images, containers, networks) lives under var/container-test, which
also caches the base and the Postgres image between runs; the containers, networks and the
iptables rules and IP forwarding netavark changes are put back at the end. Without root,
podman, runc or mmdebstrap, or where podman cannot run a container, the test skips.
"""
from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from tests.ingest import xmlbuild
from tests.servers import free_port

pytestmark = pytest.mark.slow

ROOT = pathlib.Path(__file__).resolve().parents[2]
RUN = ROOT / "var" / "container-test"
HERE = pathlib.Path(__file__).resolve().parent / "container"
BASE = "localhost/rua-test-base:bookworm"
POSTGRES = "localhost/rua-test-postgres:15"
IMAGE = "localhost/rua:test"
PROJECT = "ruatest"
COMPOSE = pathlib.Path(sys.executable).parent / "podman-compose"
CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"
FORWARD = pathlib.Path("/proc/sys/net/ipv4/ip_forward")


def run(*args, timeout=60, check=True, **kwargs) -> subprocess.CompletedProcess:
    """A command with a bound on its time; its output in the failure message."""
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, check=False,
                          timeout=timeout, **kwargs)
    if check and done.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, args))} exited {done.returncode}:\n"
                             f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return done


def podman(*args, **kwargs):
    return run("podman", *args, **kwargs)


def podman_settings() -> dict:
    """runc, cgroupfs, lowered ulimits, and storage and networks under the run's folder."""
    RUN.mkdir(parents=True, exist_ok=True)
    (RUN / "networks").mkdir(exist_ok=True)
    (RUN / "containers.conf").write_text(
        '[containers]\ndefault_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]\n'
        f'[network]\nnetwork_config_dir = "{RUN}/networks"\n'
        '[engine]\nruntime = "runc"\ncgroup_manager = "cgroupfs"\nevents_logger = "file"\n'
        f'tmp_dir = "{RUN}/tmp"\n')
    (RUN / "storage.conf").write_text(
        f'[storage]\ndriver = "overlay"\nrunroot = "{RUN}/run"\ngraphroot = "{RUN}/storage"\n')
    return {"CONTAINERS_CONF": str(RUN / "containers.conf"),
            "CONTAINERS_STORAGE_CONF": str(RUN / "storage.conf")}


def skip_unless_podman_can_run():
    if os.environ.get("RUA_TEST_DATABASE_URL"):
        pytest.skip("the container test brings its own Postgres: it runs in CI's SQLite pass")
    if os.geteuid() != 0:
        pytest.skip("the container test runs podman and mmdebstrap as root")
    missing = [tool for tool in ("podman", "runc", "mmdebstrap", "iptables-save")
               if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"missing {', '.join(missing)} (apt-get install podman runc mmdebstrap)")
    if not COMPOSE.exists():
        pytest.skip(f"no {COMPOSE}: make .venv/.installed-test installs podman-compose")


def base_image():
    """The bookworm base, made once and kept in the run's folder."""
    tarball = RUN / "base-bookworm.tar"
    if podman("image", "exists", BASE, check=False).returncode == 0:
        return
    if not tarball.exists():
        partial = RUN / "base-bookworm.tar.part"
        run("mmdebstrap", "--variant=apt", "--format=tar",
            "--include=python3,python3-venv,ca-certificates",
            "bookworm", partial, "http://deb.debian.org/debian", timeout=900)
        partial.rename(tarball)
    podman("import", tarball, BASE, timeout=300)


def build(tag: str, containerfile: pathlib.Path, context: pathlib.Path, timeout: int):
    podman("build", "--format", "docker", "--build-arg", f"BASE={BASE}",
           "-v", f"{CA_BUNDLE}:{CA_BUNDLE}:ro", "-t", tag, "-f", containerfile, context,
           timeout=timeout)


class Stack:
    """compose.yaml run by podman-compose in a project folder of the run, with its secrets."""

    def __init__(self, folder: pathlib.Path, compose_file: str, port: int):
        self.folder = folder
        self.compose_file = compose_file
        self.url = f"http://127.0.0.1:{port}"
        self.env = {**os.environ, "APP_IMAGE": IMAGE, "POSTGRES_IMAGE": POSTGRES,
                    "API_PORT": f"127.0.0.1:{port}"}
        self.said = ""

    def compose(self, *args, timeout=120):
        done = run(COMPOSE, "-p", PROJECT, "-f", self.folder / self.compose_file, *args,
                   cwd=self.folder, env=self.env, timeout=timeout)
        self.said = done.stdout[-1500:] + done.stderr[-1500:]
        return done

    def states(self) -> str:
        """Each of the project's containers with its state and podman's error, and what
        compose said last: where a service that never answers went."""
        lines = []
        for service in ("postgres", "init", "api", "scheduler"):
            state = self.state(service)
            lines.append(f"{service}: {state.get('Status', 'no container')} "
                         f"{state.get('Error', '')}".rstrip())
        return "\n".join(lines) + f"\ncompose said: {self.said}"

    @staticmethod
    def container(service: str) -> str:
        return f"{PROJECT}_{service}_1"

    def exec(self, service: str, *args, timeout=60) -> str:
        return podman("exec", self.container(service), *args, timeout=timeout).stdout

    def state(self, service: str) -> dict:
        done = podman("inspect", self.container(service), check=False)
        return json.loads(done.stdout)[0]["State"] if done.returncode == 0 else {}

    def wait_exited(self, service: str, seconds: int) -> int:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            state = self.state(service)
            if state.get("Status") == "exited":
                return state["ExitCode"]
            time.sleep(0.5)
        raise AssertionError(f"{service} still running after {seconds} s: {self.logs(service)}")

    def logs(self, service: str) -> str:
        done = podman("logs", self.container(service), check=False)
        return (done.stdout + done.stderr)[-3000:]

    def get(self, path: str, key: str = "", seconds: int = 60):
        """GET path through the published port, retried until it answers (bounded)."""
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        deadline = time.monotonic() + seconds
        while True:
            try:
                with urllib.request.urlopen(urllib.request.Request(self.url + path,
                                                                   headers=headers),
                                            timeout=5) as answer:
                    return answer.status, json.loads(answer.read())
            except urllib.error.HTTPError as exc:   # a 503 while the store is out of reach
                if exc.code < 500 or time.monotonic() > deadline:
                    raise AssertionError(f"GET {path}: {exc}\n{self.logs('api')}\n"
                                         f"{self.states()}") from None
                time.sleep(0.5)
            except OSError as exc:     # not listening yet: refused, reset or silent
                if time.monotonic() > deadline:
                    raise AssertionError(f"GET {path}: {exc}\n{self.logs('api')}\n"
                                         f"{self.states()}") from None
                time.sleep(0.5)

    def healthy(self, service: str, seconds: int = 60):
        """Run the service's health check (podman has no timer without systemd) until it passes."""
        deadline = time.monotonic() + seconds
        while True:
            done = podman("healthcheck", "run", self.container(service), check=False)
            if done.returncode == 0:
                break
            if time.monotonic() > deadline:
                raise AssertionError(f"{service} unhealthy: {done.stdout}{done.stderr}"
                                     f"{self.logs(service)}")
            time.sleep(1)
        state = self.state(service)
        health = state.get("Health") or state.get("Healthcheck") or {}
        assert health.get("Status") == "healthy", (service, health)

    def stop_within(self, service: str, seconds: int = 10) -> float:
        """podman stop (SIGTERM, or the image's stop signal): the time it took; never a kill."""
        began = time.monotonic()
        podman("stop", "--time", str(seconds + 5), self.container(service), timeout=seconds + 30)
        took = time.monotonic() - began
        assert took < seconds, f"{service} took {took:.1f} s to stop: {self.logs(service)}"
        assert self.state(service)["ExitCode"] != 137, f"{service} was killed"
        return took


@pytest.fixture(scope="module")
def images():
    """Podman set up under the run's folder and the three images built; afterwards every
    container and network of the run removed and the host's iptables and forwarding restored."""
    skip_unless_podman_can_run()
    rules = run("iptables-save", timeout=30).stdout
    forward = FORWARD.read_text()
    with pytest.MonkeyPatch.context() as patch:
        for name, value in podman_settings().items():
            patch.setenv(name, value)
        yield from _images_then_clean_up(rules, forward)


def _images_then_clean_up(rules: str, forward: str):
    try:
        base_image()
        tried = podman("run", "--rm", "--network", "none", BASE, "true", check=False)
        if tried.returncode != 0:
            pytest.skip(f"podman cannot run a container here: {tried.stderr.strip()[-300:]}")
        if podman("image", "exists", POSTGRES, check=False).returncode != 0:
            build(POSTGRES, HERE / "postgres.Containerfile", HERE, timeout=600)
        build(IMAGE, ROOT / "Containerfile", ROOT, timeout=600)
        yield
    finally:
        podman("rm", "--all", "--force", "--time", "0", check=False, timeout=120)
        podman("pod", "rm", "--all", "--force", check=False, timeout=60)
        podman("volume", "prune", "--force", check=False, timeout=60)
        podman("network", "prune", "--force", check=False, timeout=60)
        restore_iptables(rules)
        FORWARD.write_text(forward)


def restore_iptables(before: str):
    """The rules as they were: tables netavark added (nat) emptied, the others restored."""
    tables = {line for line in before.splitlines() if line.startswith("*")}
    added = {line for line in run("iptables-save", timeout=30).stdout.splitlines()
             if line.startswith("*")} - tables
    run("iptables-restore", input=before + "".join(f"{table}\nCOMMIT\n" for table in added),
        timeout=30)


def project(name: str, compose_file: str, secrets: dict[str, str]) -> pathlib.Path:
    folder = RUN / name
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "secrets").mkdir(parents=True)
    shutil.copy(ROOT / compose_file, folder / compose_file)
    for secret, text in secrets.items():
        (folder / "secrets" / secret).write_text(text + "\n")
    return folder


def new_key(stack: Stack) -> str:
    for command in (("org", "create", "Acme"),
                    ("member", "add", "Acme", "ana@example.com", "--role", "admin"),
                    ("domain", "add", "Acme", "example.com")):
        stack.exec("api", "rua", *command)
    return stack.exec("api", "rua", "key", "create", "Acme", "--member", "ana@example.com",
                      "--name", "test").strip().splitlines()[-1]


def test_compose_with_postgres(images):
    """init, the API through the published port, a report ingested in the container, health
    checks, down/up keeping the data, and SIGTERM ending every service within 10 s."""
    password = os.urandom(12).hex()
    folder = project("postgres", "compose.yaml", {
        "postgres-password": password,
        "database-url": f"postgresql://rua:{password}@postgres:5432/rua"})
    stack = Stack(folder, "compose.yaml", free_port())
    stack.compose("up", "-d")
    try:
        assert stack.wait_exited("init", 120) == 0, stack.logs("init")
        assert "schema version" in stack.logs("init")
        assert stack.get("/healthz") == (200, {"status": "ok"})
        key = new_key(stack)
        status, overview = stack.get("/api/v1/dashboard/overview", key)
        assert status == 200 and "org_health" in overview, overview

        report = folder / "report.xml"
        report.write_bytes(xmlbuild.report_bytes([xmlbuild.record(count=7)],
                                                 report_id="in-a-container"))
        podman("cp", report, f"{stack.container('api')}:/tmp/report.xml")
        stack.exec("api", "rua", "ingest", "/tmp/report.xml")
        assert "in-a-container" in json.dumps(stack.get("/api/v1/reports", key)[1])

        for service in ("postgres", "api", "scheduler"):
            stack.healthy(service)

        stack.compose("down", timeout=180)
        stack.compose("up", "-d")
        assert stack.wait_exited("init", 120) == 0, stack.logs("init")
        assert "in-a-container" in json.dumps(stack.get("/api/v1/reports", key)[1])

        # Started again on its own (a restart policy, `podman start`) once init has exited and
        # Postgres runs: podman's dependency graph lets it start.
        stack.stop_within("api")
        podman("start", stack.container("api"))
        assert stack.get("/healthz") == (200, {"status": "ok"})

        for service in ("api", "scheduler", "postgres"):
            stack.stop_within(service)
    finally:
        stack.compose("down", "--volumes", timeout=180)


def test_compose_with_sqlite(images):
    """The one-host variant: the API and the scheduler share the store's volume."""
    folder = project("sqlite", "compose.sqlite.yaml", {})
    stack = Stack(folder, "compose.sqlite.yaml", free_port())
    stack.compose("up", "-d")
    try:
        assert stack.wait_exited("init", 60) == 0, stack.logs("init")
        key = new_key(stack)
        assert stack.get("/api/v1/dashboard/overview", key)[0] == 200
        stack.healthy("scheduler")
        for service in ("api", "scheduler"):
            stack.stop_within(service)
    finally:
        stack.compose("down", "--volumes", timeout=180)
