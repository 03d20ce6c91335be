//! AF_XDP sockets: one per (port, RX queue), all on one shared UMEM so a frame received on
//! one port is sent on another by its address, without a copy in userspace.
//!
//! The first socket owns the UMEM and binds in zero-copy mode where the driver supports it,
//! else in copy mode (veth never does); every other socket joins with `XDP_SHARED_UMEM` and
//! no other flag, as the kernel requires, inherits the mode, and brings its own fill and
//! completion rings for its device queue.

use crate::umem::{FRAME_SIZE, FramePool, UmemArea};
use std::ffi::CString;
use std::num::NonZeroU32;
use std::os::fd::RawFd;
use xdpilone::xdp::{XdpDesc, XdpStatisticsV2};
use xdpilone::{DeviceQueue, Errno, IfInfo, RingRx, RingTx, Socket, SocketConfig, Umem, UmemConfig, User};

/// Descriptors per ring (fill, completion, RX, TX).
pub const RING_SIZE: u32 = 2048;

#[derive(Debug, thiserror::Error)]
pub enum XskError {
    #[error("cannot create the UMEM ({0}); as a non-root service pfcswitchd needs CAP_IPC_LOCK")]
    Umem(String),
    #[error("interface `{0}` does not exist in this network namespace")]
    NoSuchInterface(String),
    #[error("cannot {call} the AF_XDP socket of `{iface}` queue {queue}: {errno}{hint}")]
    Socket { call: &'static str, iface: String, queue: u32, errno: String, hint: &'static str },
}

fn errno_text(errno: &Errno) -> String {
    format!("{errno} (errno {})", errno.get_raw())
}

fn hint(errno: &Errno) -> &'static str {
    match errno.get_raw() {
        libc::EPERM | libc::EACCES => "; AF_XDP needs CAP_NET_RAW and CAP_NET_ADMIN (run as root or grant them)",
        libc::EBUSY => "; another AF_XDP socket already uses this queue (is another pfcswitchd or endpoint running?)",
        _ => "",
    }
}

/// One (port, queue) socket with its four rings.
pub struct QueueSocket {
    pub port: usize,
    pub queue: u32,
    pub device: DeviceQueue,
    pub rx: RingRx,
    pub tx: RingTx,
    user: User,
    _socket: Socket,
}

impl std::fmt::Debug for QueueSocket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "QueueSocket(port {}, queue {}, fd {})", self.port, self.queue, self.rx.as_raw_fd())
    }
}

/// Frames dropped on their way into a socket: `rx_dropped` (no fill buffer, or too long for
/// one) plus `rx_ring_full`. The kernel's `rx_fill_ring_empty_descs` counts the same
/// fill-ring drops as `rx_dropped` again (net/xdp/xsk.c, `__xsk_rcv`), so it is not added.
pub fn rx_frames_dropped(rx_dropped: u64, rx_ring_full: u64) -> u64 {
    rx_dropped + rx_ring_full
}

impl QueueSocket {
    pub fn fd(&self) -> RawFd {
        self.rx.as_raw_fd()
    }

    /// Kernel-side drop counters of this socket.
    pub fn statistics(&self) -> Option<XdpStatisticsV2> {
        self.user.statistics_v2().ok()
    }

    /// Frames the kernel dropped on their way into this socket, each counted once (0 if the
    /// kernel gives no statistics).
    pub fn rx_frames_dropped(&self) -> u64 {
        self.statistics().map_or(0, |s| rx_frames_dropped(s.rx_dropped, s.rx_ring_full))
    }

    /// Kicks the kernel while the TX ring holds descriptors: copy mode transmits only inside
    /// sendto, and a bounded number per call, so a ring left non-empty must be kicked again
    /// even when nothing new was added. Returns whether the ring was non-empty.
    pub fn flush_tx(&self) -> bool {
        let pending = self.tx.pending() > 0;
        if pending {
            self.tx.wake();
        }
        pending
    }

    /// Kicks the kernel until the TX ring is empty or a kick moves nothing (the device's
    /// queue is full): copy mode sends at most its TX budget per sendto. Returns whether
    /// descriptors remain.
    pub fn drain_tx(&self) -> bool {
        loop {
            let before = self.tx.pending();
            if before == 0 {
                return false;
            }
            self.tx.wake();
            if self.tx.pending() >= before {
                return true;
            }
        }
    }

    /// Hands the address of every completed transmission to `done`.
    pub fn reap_completions(&mut self, mut done: impl FnMut(u64)) {
        let mut reader = self.device.complete(RING_SIZE);
        while let Some(addr) = reader.read() {
            done(addr);
        }
        reader.release();
    }

    /// Tops the fill ring up to `target` frames from `pool`, leaving `reserve` frames there.
    pub fn refill(&mut self, pool: &mut FramePool, target: u32, reserve: usize) {
        let want = target.saturating_sub(self.device.pending());
        let spare = pool.free_count().saturating_sub(reserve) as u32;
        let count = want.min(spare);
        if count == 0 {
            return;
        }
        let mut writer = self.device.fill(count);
        // Exactly as many frames as slots: xdpilone's insert zips the iterator first and
        // would drop one frame pulled beyond the last slot.
        let slots = writer.capacity();
        writer.insert((0..slots).map_while(|_| pool.alloc()));
        writer.commit();
    }
}

/// The UMEM and every socket on it.
pub struct Sockets {
    pub umem: Umem,
    pub queues: Vec<QueueSocket>,
    /// Whether the sockets run zero-copy (else copy mode).
    pub zero_copy: bool,
}

impl std::fmt::Debug for Sockets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sockets").field("queues", &self.queues).finish()
    }
}

/// Number of RX queues of `iface`, from sysfs (1 if unknown).
pub fn rx_queue_count(iface: &str) -> u32 {
    std::fs::read_dir(format!("/sys/class/net/{iface}/queues"))
        .map(|entries| entries.flatten().filter(|e| e.file_name().to_string_lossy().starts_with("rx-")).count() as u32)
        .unwrap_or(1)
        .max(1)
}

impl Sockets {
    /// Opens a socket on every queue of every interface in `ifaces` (port order): zero-copy
    /// if the drivers allow it, else (veth, or any failure) copy mode on a fresh UMEM.
    pub fn open(area: &UmemArea, ifaces: &[String]) -> Result<Sockets, XskError> {
        Self::open_queues(area, ifaces, rx_queue_count)
    }

    /// Like [`Sockets::open`], on RX queues `0..queue_count(iface)` of each interface.
    pub fn open_queues(area: &UmemArea, ifaces: &[String], queue_count: fn(&str) -> u32) -> Result<Sockets, XskError> {
        Self::open_in(area, ifaces, queue_count, SocketConfig::XDP_BIND_ZEROCOPY)
            .or_else(|_| Self::open_in(area, ifaces, queue_count, SocketConfig::XDP_BIND_COPY))
    }

    fn open_in(
        area: &UmemArea,
        ifaces: &[String],
        queue_count: fn(&str) -> u32,
        mode: u16,
    ) -> Result<Sockets, XskError> {
        let config = UmemConfig {
            fill_size: RING_SIZE,
            complete_size: RING_SIZE,
            frame_size: FRAME_SIZE,
            headroom: 0,
            flags: 0,
        };
        // SAFETY: the area is page aligned, sized for whole frames, and outlives the sockets
        // (the datapath drops them before the area).
        let umem = unsafe { Umem::new(config, area.as_non_null()) }.map_err(|e| XskError::Umem(errno_text(&e)))?;
        let mut queues = Vec::new();
        for (port, iface) in ifaces.iter().enumerate() {
            for queue in 0..queue_count(iface) {
                let bind_flags = if queues.is_empty() { mode } else { 0 };
                queues.push(open_queue(&umem, port, iface, queue, bind_flags)?);
            }
        }
        Ok(Sockets { umem, queues, zero_copy: mode == SocketConfig::XDP_BIND_ZEROCOPY })
    }
}

/// Opens one socket; `bind_flags` is the mode for the UMEM's first socket, 0 for the others.
fn open_queue(umem: &Umem, port: usize, iface: &str, queue: u32, bind_flags: u16) -> Result<QueueSocket, XskError> {
    let fail = |call: &'static str| {
        move |errno: Errno| XskError::Socket {
            call,
            iface: iface.to_string(),
            queue,
            hint: hint(&errno),
            errno: errno_text(&errno),
        }
    };
    let name = CString::new(iface).map_err(|_| XskError::NoSuchInterface(iface.to_string()))?;
    let mut info = IfInfo::invalid();
    info.from_name(&name).map_err(|_| XskError::NoSuchInterface(iface.to_string()))?;
    info.set_queue(queue);
    let first = bind_flags != 0;
    let socket = if first { Socket::with_shared(&info, umem) } else { Socket::new(&info) }.map_err(fail("create"))?;
    let device = umem.fq_cq(&socket).map_err(fail("set up the fill and completion rings of"))?;
    set_cloexec(device.as_raw_fd());
    let rings = SocketConfig { rx_size: NonZeroU32::new(RING_SIZE), tx_size: NonZeroU32::new(RING_SIZE), bind_flags };
    let user = umem.rx_tx(&socket, &rings).map_err(fail("set up the RX and TX rings of"))?;
    let rx = user.map_rx().map_err(fail("map the RX ring of"))?;
    let tx = user.map_tx().map_err(fail("map the TX ring of"))?;
    umem.bind(&user).map_err(fail("bind"))?;
    raise_tx_budget(tx.as_raw_fd());
    Ok(QueueSocket { port, queue, device, rx, tx, user, _socket: socket })
}

/// `XDP_MAX_TX_SKB_BUDGET` (Linux 6.17, include/uapi/linux/if_xdp.h): frames one sendto
/// may send in copy mode.
const XDP_MAX_TX_SKB_BUDGET: libc::c_int = 9;
/// Frames per sendto we ask for: a whole batch, so one kick sends what one turn wrote
/// (the kernel's default is 32). It stays well under veth's 256-frame peer ring.
pub const TX_BUDGET: u32 = 64;

/// Raises the socket's copy-mode TX budget to [`TX_BUDGET`] where the kernel has the option;
/// older kernels keep 32 frames per sendto, which costs only more kicks.
fn raise_tx_budget(fd: RawFd) {
    let budget = TX_BUDGET;
    // SAFETY: setsockopt reads a u32 from a valid pointer of the length given.
    let result = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_XDP,
            XDP_MAX_TX_SKB_BUDGET,
            (&raw const budget).cast::<libc::c_void>(),
            size_of::<u32>() as libc::socklen_t,
        )
    };
    if result != 0 {
        log::debug!("AF_XDP TX budget stays at the kernel's default: {}", std::io::Error::last_os_error());
    }
}

/// Marks an AF_XDP socket (for a UMEM's first socket, the UMEM's descriptor too) close-on-exec.
/// xdpilone creates them without SOCK_CLOEXEC: a child process (an endpoint's iperf3, say)
/// would inherit them and keep the queue bound, and the UMEM pinned, after its parent died.
fn set_cloexec(fd: RawFd) {
    // SAFETY: F_SETFD on a descriptor we own; FD_CLOEXEC is the only descriptor flag.
    unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
}

/// A TX descriptor for `len` bytes at UMEM address `addr`.
pub fn tx_desc(addr: u64, len: u32) -> XdpDesc {
    XdpDesc { addr, len, options: 0 }
}
