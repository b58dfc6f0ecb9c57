"""The README's Python example, docs/arrow-and-export.md's DuckDB query and
docs/python.md's follow example run as written, against a demo tape named
`tape` and its export `ds` in a scratch directory."""

import os
import pathlib
import re
import subprocess

import duckdb

from test_export_duckdb import floxlog_bin

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PYTHON_DOC = ROOT / "docs" / "python.md"
ARROW_DOC = ROOT / "docs" / "arrow-and-export.md"


def blocks(page: pathlib.Path, lang: str) -> list:
    text = page.read_text()
    return re.findall(r"```" + lang + r"\n(.*?)```", text, flags=re.S)


def test_readme_python_example_and_duckdb_query(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    subprocess.run([floxlog_bin(), "demo", "tape", "--trades", "5000", "--book-deltas", "3000"],
                   check=True, capture_output=True)
    subprocess.run([floxlog_bin(), "export", "tape", "-o", "ds"], check=True, capture_output=True)
    py = [b for b in blocks(README, "python") if "floxlog.open" in b]
    assert len(py) == 1, "the README's Python example"
    scope: dict = {}
    exec(compile(py[0], "README.md", "exec"), scope)
    assert scope["trades"].num_rows > 0
    assert (tmp_path / "tape-copy").is_dir()
    sql = [b for b in blocks(ARROW_DOC, "sql") if "read_parquet" in b]
    assert len(sql) == 1, "docs/arrow-and-export.md's DuckDB query"
    rows = duckdb.sql(sql[0].strip().rstrip(";")).fetchall()
    by_type: dict = {}
    for t, _date, n, _vol in rows:
        by_type[t] = by_type.get(t, 0) + n
    assert by_type["trade"] == 5000
    assert by_type["book_delta"] == 3000


def test_docs_follow_example(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    subprocess.run([floxlog_bin(), "demo", "tape", "--trades", "3000", "--book-deltas", "100"],
                   check=True, capture_output=True)
    py = [b for b in blocks(PYTHON_DOC, "python") if "floxlog.follow" in b]
    assert len(py) == 1, "docs/python.md's follow example"
    scope: dict = {}
    exec(compile(py[0], "docs/python.md", "exec"), scope)
    assert scope["f"].status == "end"
    assert scope["f"].position is not None
