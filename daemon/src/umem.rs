//! The UMEM shared by every port, and who owns each of its frames.
//!
//! A frame is in exactly one of: the free list, a fill ring (the kernel may write it), the
//! switch core (an accepted frame, by handle = its UMEM address), or one or more TX rings
//! (a flooded frame is sent on several ports from the same bytes). It returns to the free
//! list when the core has let go of it and every transmission of it has completed.
//!
//! The pool remembers which port's fill ring each frame was given to and on which ports it
//! is being sent, so that the frames a vanished interface took with it come back
//! ([`FramePool::forget_port`]): an interface deleted and recreated a hundred times costs
//! no frame.

use std::io;
use std::ptr::NonNull;

/// One frame per 4 KiB page: room for the kernel's 256 B XDP headroom, our metadata and a
/// frame up to the ~3.5 KB that native XDP on veth allows.
pub const FRAME_SIZE: u32 = 4096;

/// Bytes each chunk keeps in front of the kernel's XDP headroom: the classifier's metadata.
/// A received frame then starts 4 bytes into a cache line, and its metadata and its first 60
/// bytes (all of a minimum frame, the L2 and IP headers of any) share that line. Without it
/// the metadata sat at the end of the line before, and the loop missed two lines a frame,
/// both last written by the CPU that copied the frame in.
pub const HEADROOM: u32 = crate::classifier::META_LEN as u32;

/// Anonymous, pre-faulted memory for the UMEM, unmapped on drop, on transparent huge pages
/// where the kernel gives them.
///
/// Why huge pages: one frame per 4 KiB page means that every received frame the core reads
/// (its header and the classifier's metadata) sits on a page of its own, and with a UMEM of
/// tens of MiB each such read misses the TLB. Under a hypervisor that miss is a
/// two-dimensional page walk, which a profile showed as the single costliest point of the
/// loop (the prefetch of a frame's first line). The kernel reaches the frames through its own
/// huge-page mapping and never pays it; 2 MiB pages let userspace pay it once per 512 frames.
#[derive(Debug)]
pub struct UmemArea {
    area: NonNull<[u8]>,
    /// The whole mapping: the area rounded up to whole huge pages.
    mapped: usize,
}

/// The size of a transparent huge page on x86-64 and arm64 (4 KiB base pages).
const HUGE_PAGE: usize = 2 << 20;

impl UmemArea {
    pub fn new(frames: u32) -> io::Result<UmemArea> {
        let len = frames as usize * FRAME_SIZE as usize;
        let mapped = len.next_multiple_of(HUGE_PAGE);
        // Over-allocated by a huge page, then trimmed to a huge-page-aligned start: mmap
        // itself promises only base-page alignment.
        let reserve = mapped + HUGE_PAGE;
        // SAFETY: an anonymous private mapping with no address hint; checked for failure.
        let raw = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                reserve,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if raw == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let head = (raw as usize).next_multiple_of(HUGE_PAGE) - raw as usize;
        // SAFETY: `head < HUGE_PAGE`, so the start and both trimmed ends (the tail is never
        // empty) lie inside the mapping just made, which nothing uses yet.
        let start = unsafe {
            let start = raw.cast::<u8>().add(head);
            if head > 0 {
                libc::munmap(raw, head);
            }
            libc::munmap(start.add(mapped).cast(), HUGE_PAGE - head);
            start
        };
        // Advice only: with transparent huge pages `never` the area stays on base pages.
        // SAFETY: madvise on our own mapping.
        unsafe { libc::madvise(start.cast(), mapped, libc::MADV_HUGEPAGE) };
        let slice = std::ptr::slice_from_raw_parts_mut(start, len);
        let area = UmemArea { area: NonNull::new(slice).expect("mmap returned a non-null address"), mapped };
        area.populate()?;
        Ok(area)
    }

    /// Faults every page in now, so that the datapath never takes a page fault and the UMEM's
    /// registration pins memory that is there.
    fn populate(&self) -> io::Result<()> {
        let start = self.area.cast::<u8>().as_ptr();
        // SAFETY: madvise on our own mapping; MADV_POPULATE_WRITE (Linux 5.14) writes nothing.
        if unsafe { libc::madvise(start.cast(), self.mapped, libc::MADV_POPULATE_WRITE) } == 0 {
            return Ok(());
        }
        let error = io::Error::last_os_error();
        if error.raw_os_error() != Some(libc::EINVAL) {
            return Err(error);
        }
        // An older kernel: touch each base page.
        for offset in (0..self.mapped).step_by(4096) {
            // SAFETY: inside the mapping, which is private and writable.
            unsafe { start.add(offset).write_volatile(0) };
        }
        Ok(())
    }

    /// How much of the area the kernel backs with huge pages (`AnonHugePages` of its mapping
    /// in /proc/self/smaps), if it says.
    pub fn huge_page_bytes(&self) -> Option<u64> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let start = format!("{:x}-", self.area.cast::<u8>().as_ptr() as usize);
        let mapping = smaps.lines().skip_while(|line| !line.starts_with(&start)).skip(1);
        // Its fields end where the next mapping's header (`start-end perms ...`) begins.
        let mut fields =
            mapping.take_while(|line| !line.split_whitespace().next().is_some_and(|word| word.contains('-')));
        let field = fields.find(|line| line.starts_with("AnonHugePages:"))?;
        let kib: u64 = field.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib * 1024)
    }

    pub fn as_non_null(&self) -> NonNull<[u8]> {
        self.area
    }

    pub fn len(&self) -> usize {
        self.area.len()
    }

    pub fn is_empty(&self) -> bool {
        self.area.is_empty()
    }

    /// The bytes at UMEM address `addr`.
    ///
    /// # Panics
    /// If the range leaves the area (a corrupt descriptor from the kernel would be a bug).
    pub fn bytes(&self, addr: u64, len: usize) -> &[u8] {
        let start = usize::try_from(addr).expect("address fits usize");
        assert!(start.checked_add(len).is_some_and(|end| end <= self.len()), "descriptor outside the UMEM");
        // SAFETY: in bounds (checked); the frame is ours (received or allocated) while we read it.
        unsafe { std::slice::from_raw_parts(self.area.cast::<u8>().as_ptr().add(start), len) }
    }

    /// The `len` bytes an XDP program wrote in front of the frame at `addr` (its metadata), if
    /// the frame's chunk holds that many before it.
    #[inline]
    pub fn metadata(&self, addr: u64, len: usize) -> Option<&[u8]> {
        (addr - chunk_base(addr) >= len as u64).then(|| self.bytes(addr - len as u64, len))
    }

    /// The bytes at UMEM address `addr`, to rewrite a frame the core holds before it goes to
    /// a TX ring (a FECN probe's rate).
    ///
    /// # Panics
    /// If the range leaves the area.
    pub fn bytes_mut(&mut self, addr: u64, len: usize) -> &mut [u8] {
        let start = usize::try_from(addr).expect("address fits usize");
        assert!(start.checked_add(len).is_some_and(|end| end <= self.len()), "descriptor outside the UMEM");
        // SAFETY: in bounds (checked); the core holds the frame and has not handed it to the
        // kernel yet, so nothing else reads or writes it.
        unsafe { std::slice::from_raw_parts_mut(self.area.cast::<u8>().as_ptr().add(start), len) }
    }

    /// Asks the CPU to start loading the cache line at `addr`: a received frame was written
    /// by the kernel, often on another CPU, and the first read of each is a cache miss that
    /// costs more than parsing it. Prefetched a few frames ahead, the misses overlap.
    #[inline]
    pub fn prefetch(&self, addr: u64) {
        let Ok(offset) = usize::try_from(addr) else { return };
        if offset >= self.len() {
            return;
        }
        prefetch(self.area.cast::<u8>().as_ptr().wrapping_add(offset));
    }

    /// The whole frame (chunk) that contains `addr`, for writing a frame we generate.
    pub fn chunk_mut(&mut self, addr: u64) -> &mut [u8] {
        let base = chunk_base(addr) as usize;
        assert!(base + FRAME_SIZE as usize <= self.len(), "chunk outside the UMEM");
        // SAFETY: in bounds; the chunk is free (just allocated), so neither the kernel nor the
        // core uses it.
        unsafe { std::slice::from_raw_parts_mut(self.area.cast::<u8>().as_ptr().add(base), FRAME_SIZE as usize) }
    }
}

impl Drop for UmemArea {
    fn drop(&mut self) {
        // SAFETY: the mapping we created; all sockets using it are closed before (field order
        // in the datapath guarantees it).
        unsafe { libc::munmap(self.area.cast::<libc::c_void>().as_ptr(), self.mapped) };
    }
}

pub fn chunk_base(addr: u64) -> u64 {
    addr & !(u64::from(FRAME_SIZE) - 1)
}

fn chunk_index(addr: u64) -> usize {
    (addr / u64::from(FRAME_SIZE)) as usize
}

/// Asks for the cache line at `address` ahead of its use.
#[inline]
fn prefetch<T>(address: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint: it never faults, whatever the address, and reads nothing
    // into the program.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(address.cast::<i8>());
    }
}

/// Ports a pool can tell apart: one bit each in a frame's set of sending ports.
pub const POOL_PORTS: usize = 64;
/// `filling` of a frame in no fill ring.
const NOT_FILLING: u8 = u8::MAX;

/// What is known of one chunk besides whether it is free: the fields a frame's trip
/// through the loop touches together, in one place, so that trip costs one cache line of
/// bookkeeping rather than one per field.
#[derive(Clone, Copy, Debug)]
struct Chunk {
    /// The ports whose TX queue holds a transmission of it not yet completed.
    sending: u64,
    /// The port whose fill ring it was given to, until it is received.
    filling: u8,
    /// The core still holds the frame.
    held: bool,
}

const IDLE: Chunk = Chunk { sending: 0, filling: NOT_FILLING, held: false };

/// Ownership of every UMEM frame.
#[derive(Debug)]
pub struct FramePool {
    free: Vec<u64>,
    chunks: Vec<Chunk>,
}

impl FramePool {
    pub fn new(frames: u32) -> FramePool {
        FramePool {
            free: (0..frames).rev().map(|i| u64::from(i) * u64::from(FRAME_SIZE)).collect(),
            chunks: vec![IDLE; frames as usize],
        }
    }

    pub fn alloc(&mut self) -> Option<u64> {
        self.free.pop()
    }

    /// Up to `count` free frames for the fill ring of `port`'s socket, the top of the free
    /// list as one slice, read in ascending order. A refill can take hundreds at once, freed
    /// long ago and cold: read as a stream they cost a fraction of one dependent pop each.
    /// They leave the free list when the drain is dropped, consumed or not.
    pub fn take_for_fill(&mut self, port: usize, count: usize) -> std::vec::Drain<'_, u64> {
        let start = self.free.len().saturating_sub(count);
        for &addr in &self.free[start..] {
            self.chunks[chunk_index(addr)].filling = port as u8;
        }
        self.free.drain(start..)
    }

    /// Asks for the bookkeeping of the frame at `addr` ahead of its use.
    #[inline]
    pub fn prefetch(&self, addr: u64) {
        if let Some(chunk) = self.chunks.get(chunk_index(addr)) {
            prefetch(std::ptr::from_ref(chunk));
        }
    }

    pub fn free_count(&self) -> usize {
        self.free.len()
    }

    /// Frames the core holds, and frames with transmissions in flight.
    pub fn held_and_in_flight(&self) -> (usize, usize) {
        (self.chunks.iter().filter(|c| c.held).count(), self.chunks.iter().filter(|c| c.sending != 0).count())
    }

    /// A received frame that nobody keeps (consumed or dropped at once).
    pub fn release(&mut self, addr: u64) {
        self.chunks[chunk_index(addr)].filling = NOT_FILLING;
        self.free.push(chunk_base(addr));
    }

    /// The core accepted a received frame.
    pub fn hold(&mut self, addr: u64) {
        let chunk = &mut self.chunks[chunk_index(addr)];
        chunk.filling = NOT_FILLING;
        chunk.held = true;
    }

    /// The core let go of a frame (its last copy was handed out, or it was dropped).
    pub fn unhold(&mut self, addr: u64) {
        let index = chunk_index(addr);
        self.chunks[index].held = false;
        self.free_if_idle(index);
    }

    /// A transmission of the frame went into `port`'s TX ring (one at a time per port: the
    /// frame is not free again before it completes).
    pub fn submitted(&mut self, addr: u64, port: usize) {
        self.chunks[chunk_index(addr)].sending |= 1 << port;
    }

    pub fn completed(&mut self, addr: u64, port: usize) {
        let index = chunk_index(addr);
        self.chunks[index].sending &= !(1 << port);
        self.free_if_idle(index);
    }

    /// `port`'s sockets are closed (its interface vanished): the frames in its fill ring,
    /// received but never read, or waiting to be sent on it come back. Returns how many.
    pub fn forget_port(&mut self, port: usize) -> usize {
        let mut freed = 0;
        for index in 0..self.chunks.len() {
            let before = self.free.len();
            if self.chunks[index].filling == port as u8 {
                self.chunks[index].filling = NOT_FILLING;
                self.free.push(index as u64 * u64::from(FRAME_SIZE));
            } else if self.chunks[index].sending & (1 << port) != 0 {
                self.completed(index as u64 * u64::from(FRAME_SIZE), port);
            }
            freed += self.free.len() - before;
        }
        freed
    }

    fn free_if_idle(&mut self, index: usize) {
        let chunk = self.chunks[index];
        if !chunk.held && chunk.sending == 0 {
            self.free.push(index as u64 * u64::from(FRAME_SIZE));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_area_starts_on_a_huge_page_and_reports_how_much_of_it_is_huge() {
        let area = UmemArea::new(1024).unwrap(); // 4 MiB
        assert_eq!(area.as_non_null().cast::<u8>().as_ptr() as usize % HUGE_PAGE, 0);
        let huge = area.huge_page_bytes().expect("the mapping is in /proc/self/smaps");
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
        if !thp.contains("[never]") {
            assert!(huge > 0, "transparent huge pages are {thp:?}, yet none backs the area");
        }
        assert!(huge <= area.len() as u64);
    }

    #[test]
    fn a_flooded_frame_is_free_after_the_core_and_every_copy_are_done() {
        let mut pool = FramePool::new(4);
        let frame = pool.alloc().unwrap() + 256; // received data sits after the XDP headroom
        pool.hold(frame);
        pool.submitted(frame, 1);
        pool.submitted(frame, 2);
        pool.unhold(frame);
        assert_eq!(pool.free_count(), 3);
        pool.completed(frame, 2);
        assert_eq!(pool.free_count(), 3);
        pool.completed(frame, 1);
        assert_eq!(pool.free_count(), 4);
        assert_eq!(pool.alloc(), Some(0), "the chunk base comes back");
    }

    #[test]
    fn a_vanished_port_gives_back_its_fill_ring_and_its_transmissions_only() {
        let mut pool = FramePool::new(8);
        let filled: Vec<u64> = pool.take_for_fill(2, 3).collect();
        let other_port = pool.take_for_fill(1, 1).next().unwrap();
        pool.hold(filled[0] + 256); // received and accepted: the core owns it now
        let control = pool.alloc().unwrap();
        pool.submitted(control, 2);
        let flooded = filled[0] + 256;
        pool.submitted(flooded, 2);
        pool.submitted(flooded, 3);
        pool.unhold(flooded);
        assert_eq!(pool.free_count(), 3);

        // Two frames of p2's fill ring and the control frame; the flooded frame is still
        // being sent on port 3, and port 1's fill ring keeps its frame.
        assert_eq!(pool.forget_port(2), 3);
        assert_eq!(pool.free_count(), 6);
        pool.completed(flooded, 3);
        assert_eq!(pool.free_count(), 7);
        assert_eq!(pool.forget_port(2), 0, "nothing is given back twice");
        pool.release(other_port + 256);
        assert_eq!(pool.free_count(), 8);
    }

    #[test]
    fn the_area_is_zeroed_and_bounded() {
        let mut area = UmemArea::new(2).unwrap();
        assert_eq!(area.len(), 8192);
        area.chunk_mut(4096 + 300)[0] = 7;
        assert_eq!(area.bytes(4096, 1), &[7]);
        assert_eq!(area.bytes(0, 3), &[0, 0, 0]);
    }
}
