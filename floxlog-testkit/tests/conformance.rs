//! Runs the conformance corpus named by `FLOXLOG_CONFORMANCE_DIR` (default
//! the repository's `conformance/`) and fails on any miss.

use floxlog_testkit::conformance;
use floxlog_testkit::corpus::Corpus;
use std::path::Path;

#[test]
fn conformance_corpus() {
    let default = Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance");
    let root = Corpus::root_from_env(&default);
    let corpus = Corpus::load(&root).unwrap_or_else(|e| panic!("loading the corpus: {e}"));
    let total = corpus.cases.len() + corpus.real.len() + corpus.corrupt.len();
    assert!(total > 0, "corpus at {} has no cases", root.display());
    let rep = conformance::run(&corpus);
    for (name, why) in &rep.failed {
        eprintln!("FAIL {name}: {why}");
    }
    println!("conformance ({}): {}", root.display(), rep.summary());
    assert!(rep.failed.is_empty(), "{}", rep.summary());
}
