//! See Cargo.toml: the shared round trip on a Cortex-M4F under QEMU, plus a
//! measurement of the stack the writer and the reader need.
//!
//! Stack measurement: before each half runs, every word of free stack (from
//! the end of `.bss`, cortex-m-rt's `_stack_end`, up to the current stack
//! pointer) is painted with `PAINT`; afterwards the lowest word that no
//! longer holds it is the deepest the call reached. Nothing else runs (no
//! interrupts are enabled), so that depth is the call's own. The codec's
//! buffers are in a `static` (`.bss`), not on the stack, so the figure is the
//! codec's frames alone.
#![no_std]
#![no_main]

use core::fmt::Write;
use core::ptr::read_volatile;
use cortex_m_rt::{entry, exception, ExceptionFrame};
use cortex_m_semihosting::{debug, hio};
use nostd_check::{
    read_segment, write_segment, Buffers, COMPRESSIONS, READER_STATE_BYTES, WRITER_STATE_BYTES,
};

/// An unlikely value for a live stack word (not a small integer, not a RAM
/// or flash address on this board).
const PAINT: u32 = 0xC5A5_5A5C;

extern "C" {
    // From cortex-m-rt's link.x: the lowest address the stack may reach.
    static _stack_end: u32;
}

#[inline(always)]
fn stack_pointer() -> usize {
    let sp: usize;
    // SAFETY: reads a register, touches no memory.
    unsafe {
        core::arch::asm!("mov {}, sp", out(reg) sp, options(nomem, nostack, preserves_flags))
    };
    sp
}

/// Paints the free stack, `[_stack_end, sp)`, with `PAINT`. In assembly and
/// naked: a Rust function may push its frame after reading the stack pointer
/// (shrink-wrapping) and then paint over its own return address; this one
/// uses no stack at all.
#[unsafe(naked)]
extern "C" fn paint_stack() {
    core::arch::naked_asm!(
        "movw r0, :lower16:{bottom}",
        "movt r0, :upper16:{bottom}",
        "mov r1, sp",
        "movw r2, #{lo}",
        "movt r2, #{hi}",
        "0:",
        "cmp r0, r1",
        "bhs 1f",
        "str r2, [r0], #4",
        "b 0b",
        "1:",
        "bx lr",
        bottom = sym _stack_end,
        lo = const PAINT & 0xffff,
        hi = const PAINT >> 16,
    )
}

/// Bytes below `base` (the caller's stack pointer) written since the last
/// `paint_stack`. A frame that happened to store `PAINT` itself at its very
/// bottom would be undercounted by those words; the value makes that unlikely.
/// Inlined into `main`, so its own frame is not below `base`.
#[inline(always)]
fn stack_used_below(base: usize) -> usize {
    let mut p = &raw const _stack_end as usize;
    // SAFETY: `[_stack_end, base)` is RAM reserved for the stack, below
    // every live frame; reads only.
    while p < base && unsafe { read_volatile(p as *const u32) } == PAINT {
        p += 4;
    }
    base - p
}

fn print(args: core::fmt::Arguments<'_>) {
    if let Ok(mut out) = hio::hstdout() {
        let _ = out.write_fmt(args);
    }
}

#[entry]
fn main() -> ! {
    // cortex-m-rt hands this `static mut` over as a `&'static mut`: 64 KiB in
    // .bss, off the stack being measured.
    static mut BUFS: Buffers = Buffers::new();
    // The LZ4 bytes check's 150 KiB of input, output and hash table: .bss
    // as well.
    #[cfg(feature = "lz4")]
    static mut LZ4: nostd_check::lz4_bytes::Lz4Buffers = nostd_check::lz4_bytes::Lz4Buffers::new();
    let bufs: &'static mut Buffers = BUFS;
    #[cfg(feature = "lz4")]
    let lz4: &'static mut nostd_check::lz4_bytes::Lz4Buffers = LZ4;

    print(format_args!(
        "nostd-check-cortex-m: state on the stack: SegmentWriter {WRITER_STATE_BYTES} B, Reader {READER_STATE_BYTES} B\n"
    ));
    let base = stack_pointer();
    let mut ok = true;
    for &c in COMPRESSIONS {
        paint_stack();
        let written = write_segment(c, bufs);
        let writer_stack = stack_used_below(base);
        let result = written.and_then(|len| {
            paint_stack();
            read_segment(bufs, len)
        });
        let reader_stack = stack_used_below(base);
        match result {
            Ok(()) => print(format_args!(
                "nostd-check-cortex-m: {c:?} round trip ok; stack: writer {writer_stack} B, reader {reader_stack} B\n"
            )),
            Err(code) => {
                print(format_args!(
                    "nostd-check-cortex-m: {c:?} round trip failed with error {code}\n"
                ));
                ok = false;
            }
        }
    }
    #[cfg(feature = "lz4")]
    {
        match nostd_check::lz4_bytes::check(lz4) {
            Ok(()) => print(format_args!(
                "nostd-check-cortex-m: LZ4 bytes equal liblz4's (x86-64) for every input\n"
            )),
            Err(code) => {
                print(format_args!(
                    "nostd-check-cortex-m: LZ4 bytes differ from liblz4's: error {code}\n"
                ));
                ok = false;
            }
        }
    }
    debug::exit(if ok {
        debug::EXIT_SUCCESS
    } else {
        debug::EXIT_FAILURE
    });
    // Only reached without a semihosting host (real hardware, no debugger).
    halt()
}

/// Where the run stops if SYS_EXIT returned (no semihosting host).
fn halt() -> ! {
    loop {
        // SAFETY: waits for an interrupt; touches no memory.
        unsafe { core::arch::asm!("wfi", options(nomem, nostack, preserves_flags)) };
    }
}

/// A panic ends the run as a failure instead of hanging QEMU. No formatting
/// of the message, so the panic path stays small.
#[panic_handler]
fn panic(_info: &core::panic::PanicInfo<'_>) -> ! {
    if let Ok(mut err) = hio::hstderr() {
        let _ = err.write_all(b"nostd-check-cortex-m: panic\n");
    }
    debug::exit(debug::EXIT_FAILURE);
    halt()
}

/// A fault (bad access, undefined instruction) likewise ends the run
/// instead of spinning.
#[exception]
unsafe fn HardFault(_frame: &ExceptionFrame) -> ! {
    if let Ok(mut err) = hio::hstderr() {
        let _ = err.write_all(b"nostd-check-cortex-m: hard fault\n");
    }
    debug::exit(debug::EXIT_FAILURE);
    halt()
}
