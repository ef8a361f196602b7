"""Real servers on loopback for the source tests: PostgreSQL started with pg_ctl, S3 from moto's server.

Neither is a mock of a driver: the tests read through ADBC's PostgreSQL driver and pyarrow's S3
filesystem over TCP, as a user's machine does. PostgreSQL's ``initdb`` refuses to run as root, so under
root the server runs as the ``postgres`` user (``runuser``), its data folder in a temporary folder that
user owns; a test is skipped, saying why, only where the server's binaries or that user are missing
(``.ci/run`` installs the OS package where ``pg_ctl`` is absent).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pg_bindir() -> Path | None:
    """Where pg_ctl and initdb are: on PATH, else Debian's /usr/lib/postgresql/<version>/bin."""
    found = shutil.which("pg_ctl")
    if found and shutil.which("initdb"):
        return Path(found).parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(p.split("/")[4]))
    return Path(candidates[-1]).parent if candidates else None


def postgres_missing() -> str | None:
    """Why no PostgreSQL server can be started here, or None when one can."""
    if pg_bindir() is None:
        return "PostgreSQL's server is not installed (no pg_ctl/initdb on PATH or in /usr/lib/postgresql)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no 'postgres' user to run the server (initdb refuses root)"
    return None


@contextmanager
def postgres_server(password: str | None = None) -> Iterator[str]:
    """A PostgreSQL server on 127.0.0.1 and a free port for the block; yields its URI (user ``likewise``).

    With ``password``, the server checks it (scram-sha-256 for every connection) and the URI holds it;
    without, every connection is trusted.
    """
    reason = postgres_missing()
    if reason is not None:
        pytest.skip(reason)
    bindir = pg_bindir()
    assert bindir is not None  # postgres_missing said so
    run_as: list[str] = []
    owner = None
    if os.geteuid() == 0:  # initdb refuses root: the server runs as the postgres user
        owner = pwd.getpwnam("postgres")
        run_as = ["runuser", "-u", "postgres", "--"]
    root = Path(tempfile.mkdtemp(prefix="likewise-pg-"))
    if owner is not None:
        os.chown(root, owner.pw_uid, owner.pw_gid)
    data, port = root / "data", free_port()
    init = [
        str(bindir / "initdb"),
        "-D",
        str(data),
        "-U",
        "likewise",
        "--auth=trust" if password is None else "--auth=scram-sha-256",
        "-E",
        "UTF8",
        "--no-sync",
    ]
    if password is not None:
        pwfile = root / "pwfile"
        pwfile.write_text(password + "\n", encoding="utf-8")
        if owner is not None:
            os.chown(pwfile, owner.pw_uid, owner.pw_gid)
        init.append(f"--pwfile={pwfile}")
    subprocess.run(run_as + init, check=True, capture_output=True)
    options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off"
    ctl = [str(bindir / "pg_ctl"), "-D", str(data), "-l", str(root / "server.log")]
    subprocess.run(run_as + [*ctl, "-o", options, "-w", "-t", "60", "start"], check=True, capture_output=True)
    try:
        user = "likewise" if password is None else f"likewise:{password}"
        yield f"postgresql://{user}@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(run_as + [*ctl, "-m", "immediate", "stop"], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


@contextmanager
def s3_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """moto's S3 server on 127.0.0.1 and a free port; the AWS variables point pyarrow and boto3 at it."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=free_port(), verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": endpoint,  # pyarrow's S3 filesystem and boto3 both read it
    }.items():
        monkeypatch.setenv(name, value)
    try:
        yield endpoint
    finally:
        server.stop()
