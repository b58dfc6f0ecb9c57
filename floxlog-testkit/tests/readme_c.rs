//! The README's C and C++ examples are the files ctest builds and runs:
//! every fenced `c`/`cpp` block that starts with a comment naming a file
//! under `c-tests/` must equal that file, and every `c-tests/readme_*`
//! file must be shown.

use std::path::Path;

fn blocks(readme: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut lines = readme.lines();
    while let Some(l) = lines.next() {
        let fence = l.trim_end();
        if fence != "```c" && fence != "```cpp" {
            continue;
        }
        let mut body = String::new();
        for b in lines.by_ref() {
            if b.trim_end() == "```" {
                break;
            }
            body.push_str(b);
            body.push('\n');
        }
        let first = body.lines().next().unwrap_or_default();
        let named = first
            .trim_start_matches("/*")
            .trim_start_matches("//")
            .trim()
            .split(':')
            .next()
            .unwrap_or_default()
            .to_string();
        if named.starts_with("c-tests/") {
            out.push((named, body));
        }
    }
    out
}

#[test]
fn readme_c_examples_are_the_tested_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let shown = blocks(&readme);
    assert!(
        shown.len() >= 3,
        "expected the C and C++ examples: {shown:?}"
    );
    for (name, body) in &shown {
        let file = std::fs::read_to_string(root.join(name))
            .unwrap_or_else(|e| panic!("README shows {name}, which cannot be read: {e}"));
        assert_eq!(&file, body, "README's {name} differs from the file");
    }
    for e in std::fs::read_dir(root.join("c-tests")).unwrap().flatten() {
        let n = e.file_name().into_string().unwrap();
        if n.starts_with("readme_") {
            let name = format!("c-tests/{n}");
            assert!(
                shown.iter().any(|(s, _)| *s == name),
                "{name} is not shown in the README"
            );
        }
    }
}
