//! Reports written to a closed pipe (`| head`) or a full device: a closed
//! pipe ends the report quietly and keeps the exit code; any other write
//! failure is an I/O error (exit 3), never a panic and never a silent 0.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
mod common;
use common::corpus;

fn case(name: &str) -> PathBuf {
    corpus().join("cases").join(name).join("segments")
}

/// Runs floxlog with `args` and `stdout` as its standard output.
fn run(args: &[&Path], stdout: Stdio) -> Output {
    Command::new(env!("CARGO_BIN_EXE_floxlog"))
        .args(args)
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

/// A pipe whose reading end is already closed, as after `| head` exits.
fn closed_pipe() -> Stdio {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    writer.into()
}

fn commands() -> Vec<(Vec<PathBuf>, i32)> {
    let p = |s: &str| PathBuf::from(s);
    vec![
        (vec![p("verify"), case("trades-10k")], 0),
        (vec![p("inspect"), case("books-mixed")], 0),
        (vec![p("diff"), case("trades-10k"), case("trades-10k")], 0),
        (vec![p("diff"), case("trades-10k"), case("trades-7")], 1),
        (
            vec![p("diff"), case("trades-10k"), case("trades-7"), p("--json")],
            1,
        ),
    ]
}

#[test]
fn a_closed_pipe_ends_the_report_quietly_and_keeps_the_exit_code() {
    for (args, code) in commands() {
        let args: Vec<&Path> = args.iter().map(PathBuf::as_path).collect();
        // The same command to a pipe that is read, for its normal exit code.
        let normal = run(&args, Stdio::piped());
        assert_eq!(normal.status.code(), Some(code), "{args:?}");
        assert!(!normal.stdout.is_empty(), "{args:?} printed nothing");

        let out = run(&args, closed_pipe());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn a_full_device_is_an_io_error_naming_stdout() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        panic!("/dev/full is missing: this test needs a Linux machine");
    };
    for (args, _) in commands() {
        let args: Vec<&Path> = args.iter().map(PathBuf::as_path).collect();
        let out = run(&args, full.try_clone().unwrap().into());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {err}");
        assert!(err.contains("<stdout>"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
