//! Signals and wake-ups as file descriptors, so the datapath waits on them in the same
//! ppoll as its sockets: SIGTERM/SIGINT stop, SIGHUP reloads; an eventfd lets the control
//! threads wake the datapath.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// What a signal asks of the daemon.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SignalAction {
    Stop,
    Reload,
}

fn handled() -> libc::sigset_t {
    // SAFETY: sigset manipulation on a local, initialised by sigemptyset.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::sigaddset(&mut set, signal);
        }
        set
    }
}

/// Blocks SIGTERM, SIGINT and SIGHUP in the calling thread; threads spawned afterwards
/// inherit the mask, so only the signalfd sees them. Call before spawning threads.
pub fn block_signals() -> io::Result<()> {
    let set = handled();
    // SAFETY: a valid set; the old mask is not needed.
    let rc = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    if rc == 0 { Ok(()) } else { Err(io::Error::from_raw_os_error(rc)) }
}

#[derive(Debug)]
pub struct SignalFd {
    fd: OwnedFd,
}

impl SignalFd {
    pub fn new() -> io::Result<SignalFd> {
        let set = handled();
        // SAFETY: a valid set; the new descriptor is owned right away.
        let fd = unsafe { libc::signalfd(-1, &set, libc::SFD_NONBLOCK | libc::SFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor we own.
        Ok(SignalFd { fd: unsafe { OwnedFd::from_raw_fd(fd) } })
    }

    /// The next pending signal, if any.
    pub fn read(&self) -> Option<SignalAction> {
        // SAFETY: reading one siginfo record into a properly sized local.
        let mut info: libc::signalfd_siginfo = unsafe { std::mem::zeroed() };
        let size = std::mem::size_of::<libc::signalfd_siginfo>();
        let n = unsafe { libc::read(self.fd.as_raw_fd(), (&raw mut info).cast(), size) };
        if n != size as isize {
            return None;
        }
        match info.ssi_signo as i32 {
            libc::SIGHUP => Some(SignalAction::Reload),
            _ => Some(SignalAction::Stop),
        }
    }

    pub fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// An eventfd: any thread may `notify`, the datapath `drain`s.
#[derive(Debug)]
pub struct EventFd {
    fd: OwnedFd,
}

impl EventFd {
    pub fn new() -> io::Result<EventFd> {
        // SAFETY: creates a descriptor, owned right away.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor we own.
        Ok(EventFd { fd: unsafe { OwnedFd::from_raw_fd(fd) } })
    }

    pub fn notify(&self) {
        let one = 1u64;
        // SAFETY: writing 8 bytes from a local.
        unsafe { libc::write(self.fd.as_raw_fd(), (&raw const one).cast(), 8) };
    }

    pub fn drain(&self) {
        let mut value = 0u64;
        // SAFETY: reading 8 bytes into a local; non-blocking.
        unsafe { libc::read(self.fd.as_raw_fd(), (&raw mut value).cast(), 8) };
    }

    pub fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}
