//! One interface of a traffic endpoint (a host) over AF_XDP: the host side of the
//! experiments, sending and receiving exact frames at the speed the endpoint emulates.
//!
//! A [`HostPort`] owns a small UMEM of its own, one AF_XDP socket on RX queue 0 of its
//! interface, and the endpoint XDP program (`ebpf/endpoint.c`) attached in native (driver)
//! mode (generic where the driver has none). The program hands the socket only the frames an endpoint handles — MAC control
//! (PAUSE/PFC), CNM, the minimal test frames and IPv4 UDP to the traffic port, untagged or
//! behind one 802.1Q tag — and passes everything else to the kernel stack, so ARP, ping and
//! iperf3 keep working on the same interface. In front of each frame it hands over it writes
//! the instant the interface received it, which [`HostPort::recv`] passes on: the endpoint's
//! RTT samples then leave out the time a frame waited for the endpoint's thread to wake.
//!
//! The socket binds zero-copy where the driver supports it and in copy mode otherwise (always
//! on veth). The UMEM is split between the two directions: the fill ring is kept full
//! (`RING_SIZE` frames, refilled by every [`HostPort::recv`]), and up to `RING_SIZE` frames
//! are in transmission; neither side can take the other's frames.
//!
//! Queues: only RX queue 0 has a socket. On an interface with more RX queues, the endpoint's
//! frames that the driver steers to another queue find no socket there and go to the kernel
//! stack instead (the endpoint never sees them); `open` logs a warning. veth in the test
//! topologies has one queue; for a multi-queue NIC, set one channel (`ethtool -L <if>
//! combined 1`) or steer the endpoint's traffic to queue 0.
//!
//! The program is attached through a BPF link owned by the `HostPort`: dropping it detaches
//! the program, and the kernel releases the link of a process that dies in any way, SIGKILL
//! included (checked on kernel 6.18: the program is gone by the time the process is reaped).
//! The next `open` on the interface waits (up to two seconds) for such a link to leave, as the
//! switch's classifier does. The link and the socket are close-on-exec, so a child process
//! that outlives the endpoint (an iperf3, say) holds neither the program nor the queue.
//! A program attached by other means (`ip link set dev <if> xdp …`) is never replaced: `open`
//! fails with [`HostPortError::SlotOccupied`].
//!
//! A `HostPort` is opened and used on one thread (it is not `Send`): open it on the thread
//! that has entered the host's network namespace.

use crate::classifier::{ClassifierError, attach_program, if_index};
use crate::umem::{FRAME_SIZE, FramePool, UmemArea};
use crate::xsk::{Owner, RING_SIZE, Sockets, XskError, rx_queue_count, tx_desc};
use aya::Ebpf;
use aya::maps::{MapData, XskMap};
use aya::programs::Xdp;
use aya::programs::xdp::XdpLinkId;
use pfcswitch_link::time::Instant;
use std::os::fd::RawFd;

const PROGRAM_NAME: &str = "pfcswitch_endpoint";
/// `struct pfcs_endpoint_meta` in `ebpf/endpoint.c`: the arrival instant (8 bytes), 4 of
/// padding, then the magic, which ends where the frame begins.
const META_LEN: usize = 16;
const META_MAGIC: u32 = 0x5046_5354;
/// Frames of the UMEM: a full fill ring's worth for RX, as many again for TX.
const UMEM_FRAMES: u32 = 2 * RING_SIZE;
/// Frames that may be in transmission (queued, sent and not yet completed, or completed and
/// not yet reaped): as many as the completion ring holds, so it can never overflow.
const TX_FRAMES: usize = RING_SIZE as usize;
/// The largest frame [`HostPort::send`] accepts: one UMEM frame (the interface's MTU is
/// usually the tighter limit; the kernel drops what exceeds it).
pub const MAX_FRAME_LEN: usize = FRAME_SIZE as usize;

#[derive(Debug, thiserror::Error)]
pub enum HostPortError {
    #[error("interface `{0}` does not exist in this network namespace")]
    NoSuchInterface(String),
    #[error("cannot {call} for `{iface}`: {reason}")]
    Setup { call: &'static str, iface: String, reason: String },
    #[error(transparent)]
    Socket(XskError),
    #[error(
        "cannot attach the endpoint XDP program to `{iface}`: another XDP program occupies the slot; \
         see `ip -d link show dev {iface}` and remove it with `ip link set dev {iface} xdp off`"
    )]
    SlotOccupied { iface: String },
    #[error("cannot send a {len}-byte frame on `{iface}`: frames are 1 to {MAX_FRAME_LEN} bytes")]
    FrameLength { iface: String, len: usize },
}

/// Kernel AF_XDP statistics of a [`HostPort`]'s socket (0s if the kernel gives none).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostPortDrops {
    /// Frames dropped for want of a fill buffer, or too long for one.
    pub rx_dropped: u64,
    /// Frames dropped because the RX ring was full (the endpoint did not call `recv`).
    pub rx_ring_full: u64,
    /// Times the kernel found the fill ring empty: the drops `rx_dropped` counts for want of a
    /// buffer, counted again.
    pub rx_fill_ring_empty_descs: u64,
    /// TX descriptors the kernel rejected (never happens unless the port is broken).
    pub tx_invalid_descs: u64,
}

impl HostPortDrops {
    /// Frames the kernel dropped on their way into the socket, each counted once.
    pub fn frames(&self) -> u64 {
        crate::xsk::rx_frames_dropped(self.rx_dropped, self.rx_ring_full)
    }
}

/// One interface of a traffic endpoint over AF_XDP (see the module documentation).
pub struct HostPort {
    iface: String,
    /// The UMEM and the socket on queue 0 (`queues[0]`); closed before the area is unmapped.
    sockets: Sockets,
    area: UmemArea,
    pool: FramePool,
    /// Frames allocated for transmission and not yet returned by the completion ring.
    tx_outstanding: usize,
    ebpf: Ebpf,
    link: Option<XdpLinkId>,
}

impl std::fmt::Debug for HostPort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostPort")
            .field("iface", &self.iface)
            .field("socket", &self.sockets.queues[0])
            .field("zero_copy", &self.sockets.zero_copy)
            .field("tx_outstanding", &self.tx_outstanding)
            .finish_non_exhaustive()
    }
}

/// The error and its causes, for messages that stand on their own.
fn reason(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        cause = inner.source();
    }
    text
}

fn setup<E: std::error::Error>(call: &'static str, iface: &str) -> impl FnOnce(E) -> HostPortError {
    move |error| HostPortError::Setup { call, iface: iface.to_string(), reason: reason(&error) }
}

impl HostPort {
    /// Loads the endpoint program, opens the socket on queue 0 of `iface` (in the calling
    /// thread's network namespace), fills the fill ring and attaches the program in native
    /// mode. A program left by a killed endpoint is waited out (see the module documentation).
    pub fn open(iface: &str) -> Result<HostPort, HostPortError> {
        let ifindex = if_index(iface).map_err(|_| HostPortError::NoSuchInterface(iface.to_string()))?;
        let queues = rx_queue_count(iface);
        if queues > 1 {
            log::warn!(
                "{iface} has {queues} RX queues; the endpoint listens on queue 0 only, and its frames \
                 steered to other queues go to the kernel stack"
            );
        }
        let object = aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/endpoint.o"));
        let mut ebpf = Ebpf::load(object).map_err(setup("load the endpoint XDP program", iface))?;
        let program: &mut Xdp = ebpf
            .program_mut(PROGRAM_NAME)
            .expect("endpoint.o defines pfcswitch_endpoint")
            .try_into()
            .map_err(setup("load the endpoint XDP program", iface))?;
        program.load().map_err(setup("load the endpoint XDP program", iface))?;

        let area = UmemArea::new(UMEM_FRAMES).map_err(setup("map the UMEM", iface))?;
        let sockets =
            Sockets::open_queues(&area, &[iface.to_string()], |_| 1, Owner::FirstPort).map_err(
                |error| match error {
                    XskError::NoSuchInterface(name) => HostPortError::NoSuchInterface(name),
                    XskError::Umem(text) => {
                        HostPortError::Setup { call: "create the UMEM", iface: iface.to_string(), reason: text }
                    }
                    socket => HostPortError::Socket(socket),
                },
            )?;
        {
            let map = ebpf.map_mut("xsks").expect("endpoint.o defines map xsks");
            let mut xsks: XskMap<&mut MapData> = XskMap::try_from(map).map_err(setup("open map xsks", iface))?;
            // The socket outlives the entry: closing it removes the entry.
            xsks.set(0, sockets.queues[0].fd(), 0).map_err(setup("register the AF_XDP socket in map xsks", iface))?;
        }
        let mut port = HostPort {
            iface: iface.to_string(),
            sockets,
            area,
            pool: FramePool::new(UMEM_FRAMES),
            tx_outstanding: 0,
            ebpf,
            link: None,
        };
        port.refill();
        let program: &mut Xdp = port.ebpf.program_mut(PROGRAM_NAME).expect("loaded").try_into().expect("is XDP");
        let (link, _) = attach_program(program, iface, ifindex).map_err(|error| match error {
            ClassifierError::SlotOccupied { .. } => HostPortError::SlotOccupied { iface: iface.to_string() },
            other => setup("attach the endpoint XDP program", iface)(other),
        })?;
        port.link = Some(link);
        Ok(port)
    }

    /// The interface's name.
    pub fn iface(&self) -> &str {
        &self.iface
    }

    /// Whether the socket runs zero-copy (else copy mode, as on veth).
    pub fn zero_copy(&self) -> bool {
        self.sockets.zero_copy
    }

    /// For poll()/ppoll: readable when frames wait in the RX ring.
    pub fn fd(&self) -> RawFd {
        self.sockets.queues[0].fd()
    }

    /// Hands every frame waiting in the RX ring to `f` (payload slice valid only during the
    /// call) with the instant the interface received it (CLOCK_MONOTONIC, as
    /// [`crate::timer::Clock::system`] reads it; `None` for a frame without the endpoint
    /// program's stamp), refills the fill ring, returns how many.
    pub fn recv(&mut self, mut f: impl FnMut(&[u8], Option<Instant>)) -> usize {
        let HostPort { sockets, area, pool, .. } = self;
        let mut count = 0;
        let mut reader = sockets.queues[0].rx.receive(RING_SIZE);
        while let Some(desc) = reader.read() {
            f(area.bytes(desc.addr, desc.len as usize), arrival(area, desc.addr));
            pool.release(desc.addr);
            count += 1;
        }
        reader.release();
        drop(reader);
        self.refill();
        count
    }

    /// Copies `frame` into a free UMEM frame and queues it on the TX ring; `Ok(false)` when no
    /// UMEM frame or TX slot is free right now (the caller retries after [`HostPort::flush`]
    /// or later). Reaps completions as needed. Nothing goes out before the next `flush`.
    pub fn send(&mut self, frame: &[u8]) -> Result<bool, HostPortError> {
        if frame.is_empty() || frame.len() > MAX_FRAME_LEN {
            return Err(HostPortError::FrameLength { iface: self.iface.clone(), len: frame.len() });
        }
        if self.tx_outstanding >= TX_FRAMES {
            self.reap();
            if self.tx_outstanding >= TX_FRAMES {
                return Ok(false);
            }
        }
        let HostPort { sockets, area, pool, tx_outstanding, .. } = self;
        let mut writer = sockets.queues[0].tx.transmit(1);
        if writer.capacity() == 0 {
            return Ok(false);
        }
        // The fill ring never takes the frames reserved for TX (see `refill`).
        let Some(addr) = pool.alloc() else { return Ok(false) };
        area.chunk_mut(addr)[..frame.len()].copy_from_slice(frame);
        writer.insert_once(tx_desc(addr, frame.len() as u32));
        writer.commit();
        pool.submitted(addr, 0);
        *tx_outstanding += 1;
        Ok(true)
    }

    /// Kicks the kernel to transmit what was queued (sendto with MSG_DONTWAIT) and reaps
    /// completions. What the kernel leaves (its send buffer is full) waits for the next
    /// `flush`.
    pub fn flush(&mut self) {
        self.sockets.queues[0].drain_tx();
        self.reap();
    }

    /// Kernel AF_XDP statistics: rx_dropped, rx_ring_full, rx_fill_ring_empty_descs,
    /// tx_invalid_descs (0s if unavailable).
    pub fn drops(&self) -> HostPortDrops {
        self.sockets.queues[0].statistics().map_or_else(HostPortDrops::default, |stats| HostPortDrops {
            rx_dropped: stats.rx_dropped,
            rx_ring_full: stats.rx_ring_full,
            rx_fill_ring_empty_descs: stats.rx_fill_ring_empty_descs,
            tx_invalid_descs: stats.tx_invalid_descs,
        })
    }

    /// Takes back the frames whose transmission completed.
    fn reap(&mut self) {
        let HostPort { sockets, pool, tx_outstanding, .. } = self;
        sockets.queues[0].reap_completions(|addr| {
            pool.completed(addr, 0);
            *tx_outstanding -= 1;
        });
    }

    /// Tops the fill ring up to full, leaving in the pool every frame TX may still claim:
    /// `TX_FRAMES - tx_outstanding` of them.
    fn refill(&mut self) {
        let reserve = TX_FRAMES - self.tx_outstanding;
        self.sockets.queues[0].refill(&mut self.pool, RING_SIZE, reserve);
    }
}

/// The arrival instant the endpoint program wrote in front of the frame at `addr`, if it did.
/// The metadata sits in the chunk's XDP headroom, which the kernel's copy into the UMEM keeps.
fn arrival(area: &UmemArea, addr: u64) -> Option<Instant> {
    let meta = area.metadata(addr, META_LEN)?;
    let magic = meta[12..].try_into().map(u32::from_ne_bytes).expect("4 bytes");
    let rx_ns = meta[..8].try_into().map(u64::from_ne_bytes).expect("8 bytes");
    (magic == META_MAGIC).then(|| Instant::from_nanos(rx_ns))
}

impl Drop for HostPort {
    /// Detaches the XDP program from the interface; then the socket closes and the UMEM is
    /// unmapped (field order).
    fn drop(&mut self) {
        let Some(link) = self.link.take() else { return };
        let program: Result<&mut Xdp, _> =
            self.ebpf.program_mut(PROGRAM_NAME).expect("loaded").try_into().map_err(|e| reason(&e));
        if let Err(error) = program.and_then(|program| program.detach(link).map_err(|e| reason(&e))) {
            log::warn!("cannot detach the endpoint XDP program from {}: {error}", self.iface);
        }
    }
}
