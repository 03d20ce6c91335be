//! systemd's readiness protocol (sd_notify) without libsystemd: one datagram to
//! `$NOTIFY_SOCKET`, if set.

use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram};

/// Sends `state` (e.g. `READY=1`) to systemd; a no-op outside a `Type=notify` service.
pub fn notify(state: &str) {
    let Some(path) = std::env::var_os("NOTIFY_SOCKET") else { return };
    let path = path.to_string_lossy();
    let address = match path.strip_prefix('@') {
        Some(abstract_name) => SocketAddr::from_abstract_name(abstract_name.as_bytes()),
        None => SocketAddr::from_pathname(path.as_ref()),
    };
    let sent = address.and_then(|address| UnixDatagram::unbound()?.send_to_addr(state.as_bytes(), &address));
    if let Err(error) = sent {
        log::warn!("cannot notify systemd ({path}): {error}");
    }
}

/// `RELOADING=1` with the monotonic timestamp systemd expects, before a reload.
pub fn reloading() {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: filling a local timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    let micros = now.tv_sec as u64 * 1_000_000 + now.tv_nsec as u64 / 1_000;
    notify(&format!("RELOADING=1\nMONOTONIC_USEC={micros}"));
}
