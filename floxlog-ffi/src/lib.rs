//! C ABI for floxlog-core (work in progress).
