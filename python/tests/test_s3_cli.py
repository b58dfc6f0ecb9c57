"""The `floxlog` tool reading tapes in place from a real S3 API server:
moto's server on 127.0.0.1 (a free port), started once for the session
(conftest's `s3_server`).

Uploaded: the conformance corpus (cases, corrupt segments, tapes) and a
multi-segment LZ4 tape made by `floxlog demo`. Each read of an `s3://` URL
must give what the same read of the local copy gives (output and exit
code), damage must name the URL and the byte offset, and a missing bucket,
wrong credentials or a dead endpoint must give an error naming the URL,
never a hang (a subprocess timeout guards; no timing is asserted)."""

from __future__ import annotations

import json
import re
import subprocess
import urllib.request
from pathlib import Path

import pytest

import boto3

from conftest import CASES, CORPUS, CORRUPT
from s3server import BUCKET, env_for, free_port, url
from test_cli import CLI

# Generous: a hang is what it guards against, not speed.
TIMEOUT = 120


class S3:
    def __init__(self, endpoint: str, local: dict[str, Path], client):
        self.endpoint = endpoint
        #: a boto3 client of the server
        self.client = client
        self.env = env_for(endpoint)
        #: s3 prefix (under the bucket) -> the local directory uploaded there
        self.local = local

    def run(self, *args, env=None) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(CLI), *map(str, args)],
            capture_output=True,
            text=True,
            env=env or self.env,
            timeout=TIMEOUT,
        )


@pytest.fixture(scope="session")
def s3(s3_server, tmp_path_factory) -> S3:
    demo = tmp_path_factory.mktemp("s3") / "demo"
    # A tape of many LZ4 segments (rotated at 256 KiB).
    subprocess.run(
        [str(CLI), "demo", str(demo), "--trades", "40000", "--book-deltas", "20000",
         "--compression", "lz4", "--max-segment-bytes", "262144"],
        check=True, capture_output=True, timeout=TIMEOUT,
    )
    local = {"corpus": CORPUS, "demo": demo}
    for d in ["cases", "corrupt", "real", "tapes"]:
        s3_server.upload(CORPUS / d, f"corpus/{d}")
    s3_server.upload(demo, "demo")
    return S3(s3_server.endpoint, local, s3_server.client)


def local_of(s3: S3, rel: str) -> Path:
    top, _, rest = rel.partition("/")
    return s3.local[top] / rest


TAPES = (
    ["demo"]
    + [f"corpus/cases/{c.name}/segments" for c in CASES if c.parent.name == "cases"][:6]
    + [f"corpus/real/{c.name}/segments" for c in CASES if c.parent.name == "real"]
    + [f"corpus/tapes/{t.name}/tape" for t in sorted((CORPUS / "tapes").iterdir())]
)


def test_the_demo_tape_has_many_segments(s3):
    segs = [p for p in s3.local["demo"].iterdir() if p.suffix == ".floxlog"]
    assert len(segs) >= 3


@pytest.mark.parametrize("order", [[], ["--file-order"]], ids=["time", "file"])
@pytest.mark.parametrize("rel", TAPES)
def test_cat_url_equals_cat_local(s3, rel, order):
    local = s3.run("cat", *order, local_of(s3, rel))
    remote = s3.run("cat", *order, url(rel))
    assert remote.returncode == local.returncode, remote.stderr
    assert remote.stdout == local.stdout
    # Every tape here has events (a failing one still prints those before).
    assert len(local.stdout.splitlines()) > 0
    assert remote.stderr == local.stderr.replace(str(local_of(s3, rel)), url(rel))


def test_one_segment_object(s3):
    seg = sorted(p.name for p in s3.local["demo"].iterdir() if p.suffix == ".floxlog")[1]
    local = s3.run("cat", s3.local["demo"] / seg)
    remote = s3.run("cat", url(f"demo/{seg}"))
    assert (remote.returncode, remote.stdout) == (0, local.stdout)
    assert local.stdout.count("\n") > 100


@pytest.mark.parametrize("case", CORRUPT, ids=lambda p: p.name)
def test_damaged_segments_name_the_url_and_offset(s3, case):
    rel = f"corpus/corrupt/{case.name}/segment.floxlog"
    local = s3.run("cat", "--error-format", "kit", local_of(s3, rel))
    remote = s3.run("cat", "--error-format", "kit", url(rel))
    assert remote.returncode == local.returncode
    assert remote.stdout == local.stdout
    assert remote.stderr == local.stderr.replace(str(local_of(s3, rel)), url(rel))
    m = re.search(r" at byte (\d+)", local.stderr)
    if local.returncode != 0 and m:
        assert f"{url(rel)} at byte {m.group(1)}" in remote.stderr


@pytest.mark.parametrize("rel", ["demo", "corpus/tapes/spec-series/tape", "corpus/corrupt/crc-mismatch/segment.floxlog"])
def test_verify_and_inspect_equal_local(s3, rel):
    lp, u = str(local_of(s3, rel)), url(rel)
    for cmd in (["verify", "--json"], ["inspect", "--json"]):
        local = s3.run(*cmd, lp)
        remote = s3.run(*cmd, u)
        assert remote.returncode == local.returncode, remote.stderr
        assert json.loads(remote.stdout) == json.loads(local.stdout.replace(lp, u))
        assert len(remote.stdout) > 100


def test_a_missing_bucket_or_key_names_the_url(s3):
    r = s3.run("cat", "s3://no-such-bucket/tape")
    assert r.returncode == 3
    assert "s3://no-such-bucket/tape" in r.stderr
    r = s3.run("cat", url("corpus/no-such-tape"))
    assert r.returncode == 3
    assert f"{url('corpus/no-such-tape')}: no such object" in r.stderr


def test_an_unreachable_endpoint_is_an_error_naming_the_url(s3):
    dead = f"http://127.0.0.1:{free_port()}"
    r = s3.run("cat", url("demo"), env=env_for(dead))
    assert r.returncode == 3
    assert url("demo") in r.stderr
    assert "127.0.0.1" in r.stderr


def test_writers_stay_local(s3, tmp_path):
    r = s3.run("convert", url("demo"), "-o", url("out"))
    assert r.returncode == 2
    assert "writing to object storage is not supported" in r.stderr
    assert "aws s3 cp --recursive" in r.stderr
    r = s3.run("cat", "--follow", url("demo"))
    assert r.returncode == 2 and "--follow" in r.stderr


def test_wrong_credentials_are_refused(s3):
    """moto checks signatures once its authentication is switched on (the
    keys must be an IAM user's): the right keys read, a wrong secret is an
    error naming the URL."""
    iam = boto3.client(
        "iam", endpoint_url=s3.endpoint, aws_access_key_id="testing",
        aws_secret_access_key="testing", region_name="us-east-1",
    )
    iam.create_user(UserName="reader")
    policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}
    iam.put_user_policy(UserName="reader", PolicyName="read", PolicyDocument=json.dumps(policy))
    key = iam.create_access_key(UserName="reader")["AccessKey"]
    def auth_after(n: bytes) -> None:
        # Authentication from the n-th request on (b"inf": never).
        req = urllib.request.Request(
            f"{s3.endpoint}/moto-api/reset-auth", data=n, method="POST",
            headers={"Content-Type": "text/plain"},
        )
        urllib.request.urlopen(req, timeout=30).read()

    auth_after(b"0")
    try:
        good = s3.run("cat", url("corpus/tapes/flox-rotation/tape"),
                      env=env_for(s3.endpoint, key["AccessKeyId"], key["SecretAccessKey"]))
        bad = s3.run("cat", url("corpus/tapes/flox-rotation/tape"),
                     env=env_for(s3.endpoint, key["AccessKeyId"], "wrong-secret"))
    finally:
        auth_after(b"inf")
    assert good.returncode == 0, good.stderr
    assert good.stdout.count("\n") > 10
    assert bad.returncode == 3
    assert "403 Forbidden" in bad.stderr
    assert url("corpus/tapes/flox-rotation/tape") in bad.stderr
    assert "wrong-secret" not in bad.stderr


def test_diff_of_url_and_local_copy_is_identical(s3):
    for extra in ([], ["--bytes"]):
        r = s3.run("diff", *extra, url("demo"), s3.local["demo"])
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip()
    other = url("corpus/tapes/flox-rotation/tape")
    r = s3.run("diff", other, s3.local["demo"])
    assert r.returncode == 1, r.stderr


def test_book_and_export_from_a_url_equal_local(s3, tmp_path):
    last = json.loads(s3.run("cat", "--type", "book", s3.local["demo"]).stdout.splitlines()[-1])
    at = str(last["exchange_ts_ns"])
    sym = str(last["symbol_id"])
    local = s3.run("book", "--symbol", sym, "--at", at, "--json", s3.local["demo"])
    remote = s3.run("book", "--symbol", sym, "--at", at, "--json", url("demo"))
    assert (remote.returncode, remote.stdout) == (0, local.stdout), remote.stderr
    assert json.loads(remote.stdout)["bids"]
    a, b = tmp_path / "a", tmp_path / "b"
    local = s3.run("export", s3.local["demo"], "-o", a)
    remote = s3.run("export", url("demo"), "-o", b)
    assert remote.returncode == 0 == local.returncode, remote.stderr
    files = sorted(p.relative_to(a) for p in a.rglob("*.parquet"))
    assert files and files == sorted(p.relative_to(b) for p in b.rglob("*.parquet"))
    for f in files:
        assert (a / f).read_bytes() == (b / f).read_bytes()


def objects(s3: S3, prefix: str) -> dict[str, bytes]:
    """Every object under `prefix/` in the bucket: key relative to it, bytes."""
    out = {}
    for page in s3.client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=f"{prefix}/"):
        for o in page.get("Contents", []):
            body = s3.client.get_object(Bucket=BUCKET, Key=o["Key"])["Body"].read()
            out[o["Key"][len(prefix) + 1:]] = body
    return out


def local_files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_export_to_a_prefix_equals_a_local_export(s3, tmp_path, fmt):
    """The same keys and bytes as the local export of the same tape and
    options (Parquet here is byte-deterministic: no timestamps in its
    metadata), from a local tape and from a URL."""
    segs = [p for p in s3.local["demo"].iterdir() if p.suffix == ".floxlog"]
    assert len(segs) >= 3
    opts = ["--format", fmt, "--by-symbol", "-j", "2"]
    local = s3.run("export", s3.local["demo"], "-o", tmp_path / "a", *opts)
    assert local.returncode == 0, local.stderr
    want = local_files(tmp_path / "a")
    assert len(want) > 3 and all(k.endswith(f".{fmt}") for k in want)
    # The dataset is built in the temporary directory, and removed.
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(s3.env, TMPDIR=str(tmp))
    for src, prefix in [(s3.local["demo"], f"exp1-{fmt}"), (url("demo"), f"exp1-{fmt}-from-url")]:
        r = s3.run("export", src, "-o", url(prefix), *opts, env=env)
        assert r.returncode == 0, r.stderr
        assert url(prefix) in r.stderr and f"uploaded {len(want)} objects" in r.stderr
        assert objects(s3, prefix) == want
        assert list(tmp.iterdir()) == []


def test_export_to_an_occupied_prefix_needs_overwrite(s3, tmp_path):
    one = ["--type", "trade"]
    r = s3.run("export", s3.local["demo"], "-o", url("exp2"), "--by-symbol")
    assert r.returncode == 0, r.stderr
    before = objects(s3, "exp2")
    assert any("type=book_delta" in k for k in before)
    r = s3.run("export", s3.local["demo"], "-o", url("exp2"), *one)
    assert r.returncode == 2
    assert f"{url('exp2')} already exists" in r.stderr and "--overwrite" in r.stderr
    assert objects(s3, "exp2") == before
    # Replaced: the new dataset exactly, the old one's other keys gone.
    r = s3.run("export", s3.local["demo"], "-o", url("exp2"), *one, "--overwrite")
    assert r.returncode == 0, r.stderr
    local = s3.run("export", s3.local["demo"], "-o", tmp_path / "b", *one)
    assert local.returncode == 0, local.stderr
    want = local_files(tmp_path / "b")
    assert want and objects(s3, "exp2") == want
    assert "deleted" in r.stderr
    # A neighbour whose name extends the prefix is not under it.
    s3.client.put_object(Bucket=BUCKET, Key="exp2x/keep", Body=b"x")
    r = s3.run("export", s3.local["demo"], "-o", url("exp2"), "--overwrite")
    assert r.returncode == 0, r.stderr
    assert objects(s3, "exp2x") == {"keep": b"x"}


def test_export_to_a_missing_bucket_or_dead_endpoint_fails_naming_the_url(s3, tmp_path):
    target = "s3://no-such-bucket/exp3"
    for extra in ([], ["--overwrite"]):
        # Before any export work: the one list call fails.
        r = s3.run("export", s3.local["demo"], "-o", target, *extra)
        assert r.returncode == 3, r.stderr
        assert f"{target}: listing the prefix" in r.stderr
    dead = f"http://127.0.0.1:{free_port()}"
    r = s3.run("export", s3.local["demo"], "-o", url("exp3"), env=env_for(dead))
    assert r.returncode == 3, r.stderr
    assert url("exp3") in r.stderr
    # The bucket's root is no prefix to export to.
    r = s3.run("export", s3.local["demo"], "-o", f"s3://{BUCKET}", "--overwrite")
    assert r.returncode == 2 and "name a prefix" in r.stderr


def test_export_of_files_larger_than_a_part_uploads_them_in_parts(s3, tmp_path):
    """CSV files over 8 MiB go up as multipart uploads: the same bytes."""
    demo = tmp_path / "big"
    r = s3.run("demo", demo, "--trades", "200000", "--book-deltas", "1000",
               "--compression", "lz4", "--max-segment-bytes", str(256 << 20))
    assert r.returncode == 0, r.stderr
    local = s3.run("export", demo, "-o", tmp_path / "a", "--format", "csv", "--type", "trade")
    assert local.returncode == 0, local.stderr
    want = local_files(tmp_path / "a")
    assert max(len(b) for b in want.values()) > 8 << 20
    r = s3.run("export", demo, "-o", url("exp4"), "--format", "csv", "--type", "trade")
    assert r.returncode == 0, r.stderr
    assert objects(s3, "exp4") == want
