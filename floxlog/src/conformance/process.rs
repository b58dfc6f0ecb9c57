//! Running one adapter call: no shell, stdin null, stdout and stderr
//! captured with size caps, killed (its whole process group on Unix) when
//! the deadline passes or stdout outgrows its cap.

use std::io::Read;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// Caps on what an adapter may print.
#[derive(Clone, Copy, Debug)]
pub struct Caps {
    /// Most stdout bytes kept; more fails the call (and kills it).
    pub stdout: usize,
    /// Most stderr bytes kept: the last ones (the protocol reads the last
    /// line); older bytes are dropped.
    pub stderr: usize,
}

impl Default for Caps {
    fn default() -> Self {
        Caps {
            stdout: 256 << 20,
            stderr: 64 << 10,
        }
    }
}

/// What a finished call left.
#[derive(Debug)]
pub struct Output {
    /// How it exited.
    pub status: ExitStatus,
    /// Its stdout.
    pub stdout: Vec<u8>,
    /// The end of its stderr (see [`Caps::stderr`]).
    pub stderr: Vec<u8>,
}

impl Output {
    /// The exit status in words (`exit status 1`, `killed by signal 9`).
    pub fn status_text(&self) -> String {
        status_text(&self.status)
    }

    /// The last non-empty line of stderr, trimmed.
    pub fn last_stderr_line(&self) -> Option<String> {
        last_line(&self.stderr)
    }
}

/// Most characters of an adapter's line quoted in a report.
pub const SHOWN_CHARS: usize = 200;

/// The last non-empty line of `b`, trimmed, and cut to [`SHOWN_CHARS`]
/// characters (`... (N bytes)` then): a report line stays one short line
/// whatever an adapter printed.
pub fn last_line(b: &[u8]) -> Option<String> {
    String::from_utf8_lossy(b)
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .map(shown)
}

/// `l`, cut to [`SHOWN_CHARS`] characters.
pub fn shown(l: &str) -> String {
    match l.char_indices().nth(SHOWN_CHARS) {
        None => l.to_string(),
        Some((at, _)) => format!("{}... ({} bytes)", &l[..at], l.len()),
    }
}

fn status_text(s: &ExitStatus) -> String {
    if let Some(c) = s.code() {
        return format!("exit status {c}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = s.signal() {
            return format!("killed by signal {sig}");
        }
    }
    s.to_string()
}

/// Why a call gave no usable output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunError {
    /// The program could not be started.
    Spawn(String),
    /// The deadline passed; the call was killed.
    TimedOut,
    /// stdout outgrew [`Caps::stdout`]; the call was killed.
    StdoutTooLarge(usize),
    /// The program exited (how, in words), but something it started kept
    /// its stdout or stderr open until the deadline; that was killed.
    PipesHeld(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Spawn(m) => f.write_str(m),
            RunError::TimedOut => f.write_str("timed out"),
            RunError::StdoutTooLarge(cap) => {
                write!(f, "printed more than {} MiB on stdout (killed)", cap >> 20)
            }
            RunError::PipesHeld(status) => write!(
                f,
                "the adapter exited ({status}) but a process it started kept its stdout or stderr open (killed)"
            ),
        }
    }
}

enum Msg {
    Stdout(Vec<u8>),
    Stderr(Vec<u8>),
}

/// Reads `r` to its end: keeps the first `cap` bytes (`head`) or the last
/// `cap` bytes; sets `overflow` when a head reader passes its cap, and
/// stops reading then (the caller kills the process).
fn pump(mut r: impl Read, cap: usize, head: bool, overflow: Arc<AtomicBool>) -> Vec<u8> {
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        match r.read(&mut chunk) {
            Ok(0) => return buf,
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                if buf.len() > cap {
                    if head {
                        buf.truncate(cap);
                        overflow.store(true, Ordering::SeqCst);
                        return buf;
                    }
                    let cut = buf.len() - cap;
                    buf.drain(..cut);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return buf,
        }
    }
}

#[cfg(unix)]
fn kill_tree(child: &mut std::process::Child) {
    // The child leads its own process group (set at spawn): the signal
    // reaches whatever it started too, so no grandchild keeps a pipe open.
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill(2) takes plain integers and has no memory effects.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = child.kill();
}

#[cfg(not(unix))]
fn kill_tree(child: &mut std::process::Child) {
    let _ = child.kill();
}

/// Runs `argv` until it exits or `deadline` passes.
pub fn run(argv: &[String], deadline: Instant, caps: Caps) -> Result<Output, RunError> {
    let (prog, args) = argv
        .split_first()
        .ok_or_else(|| RunError::Spawn("empty command".into()))?;
    let mut cmd = Command::new(prog);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    let mut child = cmd.spawn().map_err(|e| {
        RunError::Spawn(match e.kind() {
            std::io::ErrorKind::NotFound => {
                format!("adapter program `{prog}` not found (give a path, or put it on PATH)")
            }
            std::io::ErrorKind::PermissionDenied => {
                format!("adapter program `{prog}` is not executable (chmod +x, or run it through its interpreter)")
            }
            _ => format!("cannot start adapter program `{prog}`: {e}"),
        })
    })?;
    let overflow = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    if let Some(out) = child.stdout.take() {
        let (tx, ov) = (tx.clone(), overflow.clone());
        std::thread::spawn(move || tx.send(Msg::Stdout(pump(out, caps.stdout, true, ov))));
    }
    if let Some(err) = child.stderr.take() {
        let (tx, ov) = (tx.clone(), overflow.clone());
        std::thread::spawn(move || tx.send(Msg::Stderr(pump(err, caps.stderr, false, ov))));
    }
    drop(tx);
    // Poll rather than block in wait(): the deadline and the stdout cap
    // must be able to stop a call that never exits.
    let mut nap = Duration::from_millis(1);
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) => {}
            Err(e) => {
                kill_tree(&mut child);
                let _ = child.wait();
                return Err(RunError::Spawn(format!("waiting for `{prog}`: {e}")));
            }
        }
        if overflow.load(Ordering::SeqCst) {
            kill_tree(&mut child);
            let _ = child.wait();
            return Err(RunError::StdoutTooLarge(caps.stdout));
        }
        if Instant::now() >= deadline {
            kill_tree(&mut child);
            let _ = child.wait();
            return Err(RunError::TimedOut);
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(Duration::from_millis(20));
    };
    // The pipes close when the last process holding them exits; a
    // background process the adapter left behind may hold them longer.
    let (mut stdout, mut stderr) = (None, None);
    while stdout.is_none() || stderr.is_none() {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left.max(Duration::from_millis(100))) {
            Ok(Msg::Stdout(b)) => stdout = Some(b),
            Ok(Msg::Stderr(b)) => stderr = Some(b),
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                kill_tree(&mut child);
                return Err(RunError::PipesHeld(status_text(&status)));
            }
        }
    }
    if overflow.load(Ordering::SeqCst) {
        return Err(RunError::StdoutTooLarge(caps.stdout));
    }
    Ok(Output {
        status,
        stdout: stdout.unwrap_or_default(),
        stderr: stderr.unwrap_or_default(),
    })
}
