"""A store that goes away mid-read: the `floxlog` tool and the Python
reader end with an error naming the object's URL, never a hang (the
subprocess timeout guards; no timing is asserted). The server is reached
through a relay that forwards a set number of response bytes, then closes
every connection and stops listening, as a crashed server does."""

from __future__ import annotations

import subprocess
import sys

import pytest

from s3server import Relay, env_for
from test_cli import CLI

TIMEOUT = 120


@pytest.fixture(scope="module")
def tape_url(s3_server, tmp_path_factory) -> str:
    demo = tmp_path_factory.mktemp("faults") / "demo"
    subprocess.run([str(CLI), "demo", str(demo), "--trades", "60000", "--compression", "lz4",
                    "--max-segment-bytes", "1048576"], check=True, capture_output=True, timeout=TIMEOUT)
    return s3_server.upload(demo, "faults/demo")


@pytest.mark.parametrize("order", [[], ["--file-order"]], ids=["time", "file"])
def test_the_tool_names_the_url_when_the_server_dies_mid_read(s3_server, tape_url, order):
    port = int(s3_server.endpoint.rsplit(":", 1)[1])
    # The listing and side files pass; a segment's body is cut.
    relay = Relay(port, budget=200_000)
    r = subprocess.run([str(CLI), "cat", *order, tape_url], env=env_for(f"http://127.0.0.1:{relay.port}"),
                       capture_output=True, text=True, timeout=TIMEOUT)
    # 1: segments that could not be read, as for local files that cannot be
    # opened (the listing itself passed).
    assert r.returncode == 1, r.stderr
    assert f"error: {tape_url}/" in r.stderr and "after 3 retries" in r.stderr, r.stderr
    # Events printed before the error are whole lines of the tape's.
    whole = subprocess.run([str(CLI), "cat", *order, tape_url], env=s3_server.env, capture_output=True,
                           text=True, timeout=TIMEOUT)
    assert whole.returncode == 0
    assert whole.stdout.startswith(r.stdout)


def test_python_raises_naming_the_url(s3_server, tape_url):
    port = int(s3_server.endpoint.rsplit(":", 1)[1])
    relay = Relay(port, budget=200_000)
    opts = dict(s3_server.options, endpoint_url=f"http://127.0.0.1:{relay.port}")
    code = (
        "import sys, floxlog\n"
        "try:\n"
        f"    floxlog.open({tape_url!r}, storage_options={opts!r}).trades()\n"
        "except floxlog.FloxlogError as e:\n"
        "    print(e.kind, e.path, sep='\\n'); sys.exit(0)\n"
        "sys.exit(1)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT)
    assert r.returncode == 0, r.stdout + r.stderr
    kind, path = r.stdout.splitlines()[:2]
    assert kind == "io" and path.startswith(tape_url + "/"), r.stdout
