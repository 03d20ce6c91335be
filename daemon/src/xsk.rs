//! AF_XDP sockets: one per (port, RX queue), all on one shared UMEM so a frame received on
//! one port is sent on another by its address, without a copy in userspace.
//!
//! The first socket owns the UMEM and binds in zero-copy mode where the driver supports it,
//! else in copy mode (veth never does); every other socket joins with `XDP_SHARED_UMEM` and
//! no other flag, as the kernel requires, inherits the mode, and brings its own fill and
//! completion rings for its device queue.
//!
//! The kernel lets a socket join a UMEM only while the UMEM's own socket is bound
//! (`xsk_bind`: `-EBADF` otherwise), and a socket whose interface is deleted is unbound for
//! good. So in copy mode the UMEM's own socket is an *anchor* bound to `lo` queue 0 with
//! nothing directed to it: `lo` lives as long as the namespace, and every port's interface
//! may vanish and come back ([`Sockets::open_port`]). Zero-copy cannot be had on `lo`, so
//! there the first port owns the UMEM as before, and if its interface is deleted, no port
//! can be bound again until pfcswitchd restarts (logged when it happens).

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
        writer.insert(pool.take_for_fill(self.port, slots as usize));
        writer.commit();
    }
}

/// The UMEM's own socket in copy mode, bound to `lo` so that it outlives any port.
struct Anchor {
    _device: DeviceQueue,
    _user: User,
}

/// The UMEM and every socket on it.
pub struct Sockets {
    pub umem: Umem,
    anchor: Option<Anchor>,
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

/// Who owns the UMEM in copy mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    /// The first port's first socket: for a process that never rebinds (an endpoint, a bench).
    FirstPort,
    /// An anchor socket on `lo`, so that ports can be bound again after their interface
    /// vanished (the switch). Falls back to the first port if `lo` is taken.
    Loopback,
}

impl Sockets {
    /// Opens a socket on every queue of every interface in `ifaces` (port order): zero-copy
    /// if the drivers allow it, else (veth, or any failure) copy mode on a fresh UMEM.
    pub fn open(area: &UmemArea, ifaces: &[String], owner: Owner) -> Result<Sockets, XskError> {
        Self::open_queues(area, ifaces, rx_queue_count, owner)
    }

    /// Like [`Sockets::open`], on RX queues `0..queue_count(iface)` of each interface.
    pub fn open_queues(
        area: &UmemArea,
        ifaces: &[String],
        queue_count: fn(&str) -> u32,
        owner: Owner,
    ) -> Result<Sockets, XskError> {
        Self::open_in(area, ifaces, queue_count, SocketConfig::XDP_BIND_ZEROCOPY, Owner::FirstPort).or_else(|error| {
            log::info!("AF_XDP zero-copy refused ({error}): binding in copy mode");
            Self::open_in(area, ifaces, queue_count, SocketConfig::XDP_BIND_COPY, owner)
        })
    }

    /// How the sockets move frames: `zero-copy`, or `copy` (veth, and drivers without it).
    pub fn mode(&self) -> &'static str {
        if self.zero_copy { "zero-copy" } else { "copy" }
    }

    /// Whether the UMEM belongs to the anchor on `lo` (else to the first port's socket).
    pub fn has_anchor(&self) -> bool {
        self.anchor.is_some()
    }

    /// Opens the sockets of `port` on every RX queue of `iface` (an interface that came
    /// back), joining the UMEM. Returns the new sockets' indexes in `queues`.
    pub fn open_port(&mut self, port: usize, iface: &str) -> Result<std::ops::Range<usize>, XskError> {
        let start = self.queues.len();
        for queue in 0..rx_queue_count(iface) {
            match open_queue(&self.umem, port, iface, queue, 0) {
                Ok(socket) => self.queues.push(socket),
                Err(error) => {
                    self.queues.truncate(start);
                    return Err(error);
                }
            }
        }
        Ok(start..self.queues.len())
    }

    /// Closes the sockets of `port` (its interface vanished).
    pub fn close_port(&mut self, port: usize) {
        self.queues.retain(|queue| queue.port != port);
    }

    /// Frames the kernel could not put into `port`'s sockets, over its open sockets.
    pub fn port_rx_frames_dropped(&self, port: usize) -> u64 {
        self.queues.iter().filter(|queue| queue.port == port).map(QueueSocket::rx_frames_dropped).sum()
    }

    /// The index in `queues` of `port`'s TX queue (its queue 0), if it has sockets.
    pub fn tx_queue(&self, port: usize) -> Option<usize> {
        self.queues.iter().position(|queue| queue.port == port && queue.queue == 0)
    }

    fn open_in(
        area: &UmemArea,
        ifaces: &[String],
        queue_count: fn(&str) -> u32,
        mode: u16,
        owner: Owner,
    ) -> Result<Sockets, XskError> {
        let config = UmemConfig {
            fill_size: RING_SIZE,
            complete_size: RING_SIZE,
            frame_size: FRAME_SIZE,
            headroom: crate::umem::HEADROOM,
            flags: 0,
        };
        // SAFETY: the area is page aligned, sized for whole frames, and outlives the sockets
        // (the datapath drops them before the area).
        let umem = unsafe { Umem::new(config, area.as_non_null()) }.map_err(|e| XskError::Umem(errno_text(&e)))?;
        let anchor = match owner {
            Owner::Loopback => open_anchor(&umem, mode)
                .inspect_err(|error| {
                    log::warn!("no UMEM anchor on lo ({error}): a port whose interface is deleted stays absent");
                })
                .ok(),
            Owner::FirstPort => None,
        };
        let mut queues = Vec::new();
        for (port, iface) in ifaces.iter().enumerate() {
            for queue in 0..queue_count(iface) {
                let bind_flags = if queues.is_empty() && anchor.is_none() { mode } else { 0 };
                queues.push(open_queue(&umem, port, iface, queue, bind_flags)?);
            }
        }
        Ok(Sockets { umem, anchor, queues, zero_copy: mode == SocketConfig::XDP_BIND_ZEROCOPY })
    }
}

/// The error of `call` on the socket of `iface` queue `queue`.
fn failure<'a>(call: &'static str, iface: &'a str, queue: u32) -> impl FnOnce(Errno) -> XskError + 'a {
    move |errno| XskError::Socket {
        call,
        iface: iface.to_string(),
        queue,
        hint: hint(&errno),
        errno: errno_text(&errno),
    }
}

/// Binds the UMEM's own socket to `lo` queue 0, with an RX ring nothing is directed to.
fn open_anchor(umem: &Umem, mode: u16) -> Result<Anchor, XskError> {
    const LOOPBACK: &str = "lo";
    let fail = |call| failure(call, LOOPBACK, 0);
    let mut info = IfInfo::invalid();
    info.from_name(c"lo").map_err(|_| XskError::NoSuchInterface(LOOPBACK.to_string()))?;
    info.set_queue(0);
    let socket = Socket::with_shared(&info, umem).map_err(fail("create"))?;
    let device = umem.fq_cq(&socket).map_err(fail("set up the fill and completion rings of"))?;
    set_cloexec(device.as_raw_fd());
    let rings = SocketConfig { rx_size: NonZeroU32::new(64), tx_size: None, bind_flags: mode };
    let user = umem.rx_tx(&socket, &rings).map_err(fail("set up the RX ring of"))?;
    umem.bind(&user).map_err(fail("bind"))?;
    Ok(Anchor { _device: device, _user: user })
}

/// Opens one socket; `bind_flags` is the mode for the UMEM's first socket, 0 for the others.
fn open_queue(umem: &Umem, port: usize, iface: &str, queue: u32, bind_flags: u16) -> Result<QueueSocket, XskError> {
    let fail = |call| failure(call, iface, queue);
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
