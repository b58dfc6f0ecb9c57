//! See Cargo.toml: links floxlog-core's writer and reader with no std and no
//! allocator, and checks a round trip (src/lib.rs, shared with the Cortex-M
//! build in cortex-m/). Exit code 0 means it worked.
#![no_std]
#![no_main]

use core::ffi::c_int;

#[no_mangle]
extern "C" fn main(_argc: c_int, _argv: *const *const u8) -> c_int {
    // On the host the buffers can sit on the (8 MiB) stack.
    let mut bufs = nostd_check::Buffers::new();
    if let Err(code) = nostd_check::run(&mut bufs) {
        return code;
    }
    #[cfg(feature = "lz4")]
    if let Err(code) = nostd_check::lz4_bytes::check(&mut nostd_check::lz4_bytes::Lz4Buffers::new())
    {
        return code;
    }
    0
}

// The C runtime (crt startup, memcpy/memset): libc, not Rust's std.
#[link(name = "c")]
extern "C" {}

// The precompiled `core` references the unwinding personality even under
// panic = "abort"; nothing here unwinds, so it is never called.
#[no_mangle]
extern "C" fn rust_eh_personality() {}

#[panic_handler]
fn panic(_info: &core::panic::PanicInfo<'_>) -> ! {
    // No std, no abort(): spin. A panic here would be a bug the exit code
    // cannot report; the codec itself never panics.
    loop {}
}
