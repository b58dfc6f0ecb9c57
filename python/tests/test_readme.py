"""The README's Python example and DuckDB query run as written, against a
demo tape named `tape` and its export `ds` in a scratch directory."""

import os
import pathlib
import re
import subprocess

import duckdb

from test_export_duckdb import floxlog_bin

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def blocks(lang: str) -> list:
    text = README.read_text()
    return re.findall(r"```" + lang + r"\n(.*?)```", text, flags=re.S)


def test_readme_python_example_and_duckdb_query(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    subprocess.run([floxlog_bin(), "demo", "tape", "--trades", "5000", "--book-deltas", "3000"],
                   check=True, capture_output=True)
    subprocess.run([floxlog_bin(), "export", "tape", "-o", "ds"], check=True, capture_output=True)
    py = [b for b in blocks("python") if "floxlog.open" in b]
    assert len(py) == 1, "the README's Python example"
    scope: dict = {}
    exec(compile(py[0], "README.md", "exec"), scope)
    assert scope["trades"].num_rows > 0
    assert (tmp_path / "tape-copy").is_dir()
    sql = [b for b in blocks("sql") if "read_parquet" in b]
    assert len(sql) == 1, "the README's DuckDB query"
    rows = duckdb.sql(sql[0].strip().rstrip(";")).fetchall()
    by_type: dict = {}
    for t, _date, n, _vol in rows:
        by_type[t] = by_type.get(t, 0) + n
    assert by_type["trade"] == 5000
    assert by_type["book_delta"] == 3000


def test_readme_follow_example(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    subprocess.run([floxlog_bin(), "demo", "tape", "--trades", "3000", "--book-deltas", "100"],
                   check=True, capture_output=True)
    py = [b for b in blocks("python") if "floxlog.follow" in b]
    assert len(py) == 1, "the README's follow example"
    scope: dict = {}
    exec(compile(py[0], "README.md", "exec"), scope)
    assert scope["f"].status == "end"
    assert scope["f"].position is not None
