//! Frame bytes by handle, with buffers reused once freed, and where each frame on a wire
//! is going (so that the event of its arrival needs to carry only its handle).
//!
//! Each buffer keeps room before its frame, as the datapath's UMEM frames do, so that a
//! switch's INT record is stamped in place, moving only the headers before it
//! ([`pfcswitch_wire::apply_int`]). Inserting the room at the front instead moved every
//! byte of the frame at every hop: 5 % of a run on HPCC's fat-tree.

use crate::endpoint::Endpoint;

/// Room before a frame: HPCC's records take 24 bytes a hop, 120 over a fat-tree's five
/// switches. A frame that needs more gets another `HEADROOM` made at its front.
const HEADROOM: usize = 128;

#[derive(Debug, Default)]
pub(crate) struct FrameStore {
    frames: Vec<Vec<u8>>,
    /// By handle: where the frame starts in its buffer.
    starts: Vec<usize>,
    destinations: Vec<Endpoint>,
    free: Vec<usize>,
    /// Buffers come back from another part's store (see [`FrameStore::take`]), for slots
    /// whose buffer left.
    spare: Vec<Vec<u8>>,
}

impl FrameStore {
    pub(crate) fn insert(&mut self, bytes: &[u8]) -> u64 {
        let index = self.free.pop().unwrap_or_else(|| {
            self.frames.push(Vec::with_capacity(HEADROOM + 1600));
            self.starts.push(HEADROOM);
            self.destinations.push(Endpoint::host(0));
            self.frames.len() - 1
        });
        let buffer = &mut self.frames[index];
        buffer.clear();
        buffer.resize(HEADROOM, 0);
        buffer.extend_from_slice(bytes);
        self.starts[index] = HEADROOM;
        index as u64
    }

    /// A second buffer with the same bytes (a copy put on the wire while the switch still
    /// holds the original for other ports).
    pub(crate) fn duplicate(&mut self, handle: u64) -> u64 {
        let index = self.insert(&[]) as usize;
        let mut copy = std::mem::take(&mut self.frames[index]);
        copy.extend_from_slice(self.get(handle));
        self.frames[index] = copy;
        index as u64
    }

    /// Writes an INT record (or flag) into frame `handle`: a record makes it longer, at the
    /// front. A frame whose INT does not parse, or has no room left for a record, is sent
    /// as it is, as the datapath sends it.
    pub(crate) fn stamp_int(&mut self, handle: u64, int: &pfcswitch_wire::IntEgress) {
        let index = handle as usize;
        let (buffer, start) = (&mut self.frames[index], &mut self.starts[index]);
        let room = match int {
            pfcswitch_wire::IntEgress::Push(_) => {
                pfcswitch_wire::int_of(&buffer[*start..]).map_or(0, |(_, h)| h.hop_words() * 4)
            }
            _ => 0,
        };
        if room > *start {
            buffer.splice(0..0, std::iter::repeat_n(0, HEADROOM));
            *start += HEADROOM;
        }
        let len = buffer.len() - *start;
        if let Ok((new_start, _)) = pfcswitch_wire::apply_int(buffer, *start, len, int) {
            *start = new_start;
        }
    }

    pub(crate) fn get(&self, handle: u64) -> &[u8] {
        &self.frames[handle as usize][self.starts[handle as usize]..]
    }

    pub(crate) fn get_mut(&mut self, handle: u64) -> &mut [u8] {
        &mut self.frames[handle as usize][self.starts[handle as usize]..]
    }

    pub(crate) fn destination(&self, handle: u64) -> Endpoint {
        self.destinations[handle as usize]
    }

    pub(crate) fn set_destination(&mut self, handle: u64, to: Endpoint) {
        self.destinations[handle as usize] = to;
    }

    pub(crate) fn remove(&mut self, handle: u64) {
        self.free.push(handle as usize);
    }

    /// Takes frame `handle`'s buffer out, with where the frame starts in it, for another
    /// part's store: a frame crossing between the halves of a split network moves, not its
    /// bytes. The slot is free, with a spare buffer (or none yet) in its place.
    pub(crate) fn take(&mut self, handle: u64) -> (Vec<u8>, usize) {
        let index = handle as usize;
        let buffer = std::mem::replace(&mut self.frames[index], self.spare.pop().unwrap_or_default());
        self.free.push(index);
        (buffer, self.starts[index])
    }

    /// Holds a buffer another store gave up, the frame starting at `start`: its handle, and
    /// the buffer the slot held before (to go back to that store, see `take`).
    pub(crate) fn put(&mut self, buffer: Vec<u8>, start: usize) -> (u64, Vec<u8>) {
        let index = self.free.pop().unwrap_or_else(|| {
            self.frames.push(Vec::new());
            self.starts.push(HEADROOM);
            self.destinations.push(Endpoint::host(0));
            self.frames.len() - 1
        });
        self.starts[index] = start;
        (index as u64, std::mem::replace(&mut self.frames[index], buffer))
    }

    /// Buffers back from the store that took some of this one's (see `take`).
    pub(crate) fn give_back(&mut self, buffers: impl Iterator<Item = Vec<u8>>) {
        self.spare.extend(buffers.filter(|buffer| buffer.capacity() > 0));
    }

    /// Frame buffers ever held at once.
    pub(crate) fn peak(&self) -> usize {
        self.frames.len()
    }
}

/// Asks the CPU to bring the headers of the frame whose bytes start at `address` into its
/// cache: those a switch or host reads first (Ethernet, VLAN, IP, UDP, BTH and INT fit in
/// three lines).
#[allow(unsafe_code)]
pub(crate) fn prefetch(address: usize) {
    #[cfg(target_arch = "x86_64")]
    for line in 0..3 {
        let at = address.wrapping_add(64 * line) as *const i8;
        // SAFETY: a prefetch is a hint: it reads no value and never faults, whatever the
        // address (a stale one costs a wasted fetch at worst).
        unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(at) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}
