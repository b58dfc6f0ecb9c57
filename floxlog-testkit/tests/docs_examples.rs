//! The code examples of the README and of `docs/` stay the code the tests
//! run:
//!
//! - C and C++: every fenced `c`/`cpp` block that starts with a comment
//!   naming a file under `c-tests/` must equal that file (ctest builds and
//!   runs it), and every `c-tests/readme_*` file must be shown on a page.
//! - Rust: every page holding a `rust` block is one that `src/lib.rs`
//!   includes as doctests (`cargo test -p floxlog-testkit --doc`), so no
//!   Rust example escapes compilation.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The pages: README.md and every Markdown file under docs/, as paths
/// relative to the repository root.
fn pages() -> Vec<String> {
    let mut out = vec!["README.md".to_string()];
    let mut docs: Vec<String> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    docs.sort();
    out.extend(docs);
    out
}

fn read(page: &str) -> String {
    std::fs::read_to_string(root().join(page)).unwrap_or_else(|e| panic!("{page}: {e}"))
}

/// The fenced blocks of `text` whose fence line is one of `langs`.
fn fenced(text: &str, langs: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(l) = lines.next() {
        let fence = l.trim_end();
        let Some(lang) = fence.strip_prefix("```") else {
            continue;
        };
        let mut body = String::new();
        for b in lines.by_ref() {
            if b.trim_end() == "```" {
                break;
            }
            body.push_str(b);
            body.push('\n');
        }
        if langs.contains(&lang) {
            out.push(body);
        }
    }
    out
}

/// (file named by the block's first comment, block) for each C/C++ block
/// that names a file under c-tests/.
fn c_blocks(text: &str) -> Vec<(String, String)> {
    fenced(text, &["c", "cpp"])
        .into_iter()
        .filter_map(|body| {
            let first = body.lines().next().unwrap_or_default();
            let named = first
                .trim_start_matches("/*")
                .trim_start_matches("//")
                .trim()
                .split(':')
                .next()
                .unwrap_or_default()
                .to_string();
            named.starts_with("c-tests/").then_some((named, body))
        })
        .collect()
}

#[test]
fn c_examples_are_the_tested_files() {
    let mut shown = Vec::new();
    for page in pages() {
        for (name, body) in c_blocks(&read(&page)) {
            let file = std::fs::read_to_string(root().join(&name))
                .unwrap_or_else(|e| panic!("{page} shows {name}, which cannot be read: {e}"));
            assert_eq!(file, body, "{page}'s {name} differs from the file");
            shown.push(name);
        }
    }
    let mut tested = 0;
    for e in std::fs::read_dir(root().join("c-tests")).unwrap().flatten() {
        let n = e.file_name().into_string().unwrap();
        if n.starts_with("readme_") {
            let name = format!("c-tests/{n}");
            assert!(
                shown.contains(&name),
                "{name} is not shown in the README or docs/"
            );
            tested += 1;
        }
    }
    assert!(
        tested >= 4,
        "expected the C and C++ examples, found {shown:?}"
    );
}

#[test]
fn rust_examples_are_doctested() {
    let lib = std::fs::read_to_string(root().join("floxlog-testkit/src/lib.rs")).unwrap();
    let included: Vec<&str> = lib
        .split("include_str!(\"../../")
        .skip(1)
        .filter_map(|s| s.split('"').next())
        .collect();
    let mut with_rust = 0;
    for page in pages() {
        let text = read(&page);
        if fenced(&text, &["rust"]).is_empty() {
            continue;
        }
        with_rust += 1;
        assert!(
            included.contains(&page.as_str()),
            "{page} holds Rust examples that src/lib.rs does not include as doctests \
             (included: {included:?})"
        );
    }
    assert!(
        with_rust >= 2,
        "expected README.md and docs/rust.md to hold Rust examples"
    );
}
