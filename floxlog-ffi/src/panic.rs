//! The codec-only (`no_std`) library's panic handler. Nothing in the C API
//! panics on any input (bad input is an error code), so this runs only on a
//! bug; there is no unwinding to catch it with, so it reports to the
//! firmware's hook and stops.

extern "C" {
    /// Called by the codec-only (`no_std`) library when a Rust panic happens,
    /// which only a bug in the library can cause: `file` (`file_len` bytes,
    /// not NUL-terminated) and `line` locate the panic in the library's
    /// source. Define it in the firmware to log and reset; the library
    /// defines a weak default that returns. It must not call back into the
    /// library. If it returns, the calling thread spins forever (the call
    /// never returns to C, so no corrupted state is used). The full library
    /// (with `std`) never calls it: there a panic becomes `FLOXLOG_PANIC`.
    pub fn floxlog_panic_hook(file: *const u8, file_len: usize, line: u32);
}

#[cfg(not(test))]
#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    let (file, line) = info.location().map_or(("", 0), |l| (l.file(), l.line()));
    // SAFETY: the hook's contract (header): any C function with this
    // prototype; the weak default below returns at once.
    unsafe { floxlog_panic_hook(file.as_ptr(), file.len(), line) };
    loop {
        core::hint::spin_loop();
    }
}

// The weak default hook (returns at once), so firmware links without
// defining one. Stable Rust cannot declare a weak function, hence assembly:
// one `return` per architecture. On others the firmware must define it.
#[cfg(all(not(test), target_arch = "arm"))]
core::arch::global_asm!(
    ".pushsection .text.floxlog_panic_hook,\"ax\",%progbits",
    ".weak floxlog_panic_hook",
    ".type floxlog_panic_hook,%function",
    ".p2align 1",
    ".thumb",
    ".thumb_func",
    "floxlog_panic_hook:",
    "bx lr",
    ".size floxlog_panic_hook, . - floxlog_panic_hook",
    ".popsection",
);
#[cfg(all(
    not(test),
    any(
        target_arch = "x86",
        target_arch = "x86_64",
        target_arch = "aarch64",
        target_arch = "riscv32",
        target_arch = "riscv64"
    )
))]
core::arch::global_asm!(
    ".pushsection .text.floxlog_panic_hook,\"ax\",%progbits",
    ".weak floxlog_panic_hook",
    ".type floxlog_panic_hook,%function",
    "floxlog_panic_hook:",
    "ret",
    ".size floxlog_panic_hook, . - floxlog_panic_hook",
    ".popsection",
);

/// Core's own objects on a host are built for unwinding and name this
/// personality routine; with `panic = "abort"` nothing unwinds, so it is
/// never called, but a C program's linker needs the symbol. (Targets that
/// abort by default, thumbv*-none-* among them, never name it.)
#[cfg(all(not(test), not(target_os = "none")))]
#[no_mangle]
pub extern "C" fn rust_eh_personality() {}
