//! Report lines to standard output without `println!`'s panic on a closed
//! pipe. `floxlog verify T | head -3` is a reader's choice: the rest of the
//! report is dropped quietly and the exit code still tells the result. Any
//! other write failure (disk full behind a redirect) is kept and turned into
//! an I/O error by `main`, so no command exits 0 after losing its report.

use std::fmt;
use std::io::{self, Write};
use std::sync::Mutex;

/// The first write failure other than a closed pipe.
static FAILED: Mutex<Option<io::Error>> = Mutex::new(None);

/// Writes `args` to standard output; see the module doc for errors.
pub fn write(args: fmt::Arguments<'_>) {
    let r = io::stdout().lock().write_fmt(args);
    keep(r);
}

/// Flushes standard output at exit and returns the first write failure
/// that was not a closed pipe.
pub fn finish() -> Option<io::Error> {
    let r = io::stdout().lock().flush();
    keep(r);
    FAILED.lock().ok().and_then(|mut f| f.take())
}

fn keep(r: io::Result<()>) {
    if let Err(e) = r {
        if e.kind() != io::ErrorKind::BrokenPipe {
            if let Ok(mut f) = FAILED.lock() {
                f.get_or_insert(e);
            }
        }
    }
}

/// `println!` for reports: see [`write()`].
macro_rules! outln {
    () => {
        $crate::stdout::write(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::stdout::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` for reports: see [`write()`].
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::stdout::write(format_args!($($arg)*))
    };
}
