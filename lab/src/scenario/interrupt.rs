//! SIGINT and SIGTERM during a run: a datapath run tears its topology down and says so; a
//! simulated run stops at its next sample and writes what it has (marked `interrupted`).

use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_interrupt(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// From now on SIGINT and SIGTERM set a flag instead of killing the process.
pub(super) fn catch() {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only stores to an atomic (async-signal-safe); exec'd children
        // get the default disposition back.
        unsafe { libc::signal(signal, on_interrupt as *const () as libc::sighandler_t) };
    }
}

/// Whether SIGINT or SIGTERM came since [`catch`].
pub(super) fn requested() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}
