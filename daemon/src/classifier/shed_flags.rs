//! The classifier's `shedding` array mapped into the daemon's memory (`BPF_F_MMAPABLE`), so
//! the loop flips a port's flag with a store instead of a `bpf()` system call. Under a lossy
//! overload the flag flips every few turns of the loop, thousands of times a second.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};

/// One element of the array as the kernel lays it out: the `u32` value, rounded up to 8
/// bytes (`round_up(value_size, 8)` in kernel/bpf/arraymap.c).
#[repr(C, align(8))]
struct Element(AtomicU32);

/// One flag per port index, shared with the XDP program.
#[derive(Debug)]
pub struct ShedFlags {
    elements: NonNull<Element>,
    ports: u32,
    /// Bytes mapped (whole pages).
    len: usize,
}

// SAFETY: the mapping belongs to this value alone, and its words are only touched atomically.
unsafe impl Send for ShedFlags {}

impl ShedFlags {
    /// Maps the array `map` (of `ports` `u32` values, created mmapable) read-write.
    pub fn map(map: BorrowedFd<'_>, ports: u32) -> io::Result<ShedFlags> {
        // SAFETY: sysconf has no preconditions.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
        let len = (ports as usize * size_of::<Element>()).div_ceil(page) * page;
        // SAFETY: a fresh shared mapping of the map's values; the kernel checks the size.
        let address = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                map.as_raw_fd(),
                0,
            )
        };
        if address == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let elements = NonNull::new(address.cast::<Element>()).expect("mmap returned a mapping");
        Ok(ShedFlags { elements, ports, len })
    }

    /// Sets port `port`'s flag; the XDP program sees it at its next frame.
    ///
    /// # Panics
    /// If `port` is not below the map's size (the caller checks it).
    pub fn set(&self, port: u32, on: bool) {
        assert!(port < self.ports, "port index {port} beyond the shedding map");
        // SAFETY: in bounds (checked) of a mapping that lives as long as `self`, and aligned
        // (the mapping starts on a page).
        let element = unsafe { self.elements.add(port as usize).as_ref() };
        element.0.store(u32::from(on), Ordering::Relaxed);
    }
}

impl Drop for ShedFlags {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `map`, unmapped once.
        unsafe { libc::munmap(self.elements.as_ptr().cast(), self.len) };
    }
}
