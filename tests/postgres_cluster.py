"""A Postgres cluster of a test's (or a benchmark's) own: initdb and pg_ctl on a port of its
own with its data in a folder of its own, so it can be stopped and restarted under rua's
processes. initdb refuses to run as root: as root, both run as the `postgres` user."""
from __future__ import annotations

import os
import pathlib
import pwd
import shutil
import subprocess
import time

import psycopg2


def as_postgres(argv: list[str]) -> list[str]:
    """argv run as the `postgres` user when we are root (initdb and postgres refuse root)."""
    return ["runuser", "-u", "postgres", "--", *argv] if os.getuid() == 0 else argv


class Postgres:
    """A cluster in its own folder on its own port, autovacuum on as Postgres ships."""

    def __init__(self, folder: pathlib.Path, port: int):
        self.folder, self.port = folder, port
        self.data = folder / "data"
        self.log = folder / "postgres.log"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def create(self) -> "Postgres":
        self.folder.mkdir(parents=True, exist_ok=True)
        if os.getuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chown(self.folder, user.pw_uid, user.pw_gid)
        subprocess.run(as_postgres([binary("initdb"), "-D", str(self.data), "-U", "postgres",
                                    "--auth=trust", "-E", "UTF8", "--no-sync"]),
                       check=True, capture_output=True, cwd="/")
        with open(self.data / "postgresql.conf", "a") as conf:
            conf.write(f"port = {self.port}\nlisten_addresses = '127.0.0.1'\n"
                       f"unix_socket_directories = '{self.folder}'\nmax_connections = 300\n"
                       "fsync = off\nautovacuum = on\n")
        return self

    def start(self) -> None:
        self._pg_ctl("start", "-w", "-l", str(self.log))

    def stop(self, mode: str = "fast") -> None:
        self._pg_ctl("stop", "-w", "-m", mode)

    def answers(self) -> bool:
        try:
            psycopg2.connect(self.url(), connect_timeout=1).close()
            return True
        except psycopg2.OperationalError:
            return False

    def wait_answering(self, timeout: float = 30) -> float:
        """The wall time at which the cluster first accepts a connection."""
        deadline = time.monotonic() + timeout
        while not self.answers():
            if time.monotonic() > deadline:
                raise RuntimeError(f"postgres did not answer: {self.log.read_text()[-500:]}")
            time.sleep(0.02)
        return time.time()

    def create_database(self, name: str) -> str:
        connection = psycopg2.connect(self.url())
        connection.autocommit = True
        with connection.cursor() as cursor:
            cursor.execute(f'CREATE DATABASE "{name}"')
        connection.close()
        return self.url(name)

    def destroy(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self._pg_ctl("stop", "-w", "-m", "immediate")
        shutil.rmtree(self.folder, ignore_errors=True)

    def _pg_ctl(self, *args: str) -> None:
        subprocess.run(as_postgres([binary("pg_ctl"), "-D", str(self.data), *args]),
                       check=True, capture_output=True, cwd="/")


def binary(name: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    versions = sorted(pathlib.Path("/usr/lib/postgresql").glob(f"*/bin/{name}"))
    if not versions:
        raise RuntimeError(f"{name} not found (Debian: apt-get install postgresql)")
    return str(versions[-1])


def restartable(folder: pathlib.Path, port: int) -> Postgres:
    """A started cluster with a database `rua` migrated to the current schema; stop it with
    destroy(). Raises RuntimeError when Postgres' programs are not installed."""
    from store import open_db
    from store.migrations import migrate
    cluster = Postgres(folder, port).create()
    cluster.start()
    database = open_db(cluster.create_database("rua"))
    with database.connection_context():
        migrate(database)
    database.close_all()
    return cluster


def for_test():
    """A restartable cluster for a test module (a generator for a fixture to yield from); the
    test skips without RUA_TEST_DATABASE_URL, as the suite's other Postgres tests do, or
    without Postgres' programs."""
    import tempfile

    import pytest

    from tests.conftest import POSTGRES_URL
    from tests.servers import free_port
    if not POSTGRES_URL:
        pytest.skip("RUA_TEST_DATABASE_URL names no Postgres")
    folder = pathlib.Path(tempfile.mkdtemp(prefix="rua-test-cluster-"))
    try:
        cluster = restartable(folder, free_port())
    except (RuntimeError, subprocess.CalledProcessError) as exc:
        shutil.rmtree(folder, ignore_errors=True)
        pytest.skip(f"no Postgres cluster of our own: {exc}")
    yield cluster
    cluster.destroy()
