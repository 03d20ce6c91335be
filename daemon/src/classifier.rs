//! The XDP classifier (`ebpf/classifier.c`): loading, per-port configuration, attachment
//! and its per-CPU counters.
//!
//! XDP programs are attached through BPF links, which the kernel releases when the last file
//! descriptor closes: when pfcswitchd exits for any reason, SIGKILL included, no program is
//! left on an interface.

mod shed_flags;

use aya::maps::{Array, HashMap, MapData, PerCpuArray, PerCpuValues, XskMap};
use aya::programs::xdp::XdpLinkId;
use aya::programs::{ProgramError, Xdp, XdpMode};
use aya::{Ebpf, EbpfError, Pod};
use pfcswitch_wire::Pcp;
use shed_flags::ShedFlags;
use std::os::fd::AsFd;

/// Must match `ebpf/classifier.h`.
pub const MAX_PORTS: u32 = 64;
/// RX queues per port in the XSKMAP (`PFCS_MAX_QUEUES`).
pub const MAX_QUEUES: u32 = 16;
const PRIORITIES: u32 = 8;
/// `PFCS_PORT_SLOTS`: the slots of `port_slots`, the classifier's array copy of
/// `port_config`, slot `ifindex % PORT_SLOTS`.
const PORT_SLOTS: u32 = 256;
const PROGRAM_NAME: &str = "pfcswitch_classify";

/// Must match `struct pfcs_meta`: the block the classifier writes in front of each frame.
pub const META_MAGIC: u16 = 0x5046;
pub const META_LEN: usize = 4;
pub const FLAG_TAGGED: u8 = 0x01;
pub const FLAG_DSCP: u8 = 0x02;
pub const FLAG_MAC_CONTROL: u8 = 0x04;
pub const FLAG_CNM: u8 = 0x08;

/// Why the classifier dropped a frame (`enum pfcs_drop_reason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClassifierDrop {
    /// Shorter than an Ethernet header.
    Runt = 0,
    /// EtherType 0x8100 without a complete tag.
    TruncatedVlan = 1,
}

impl ClassifierDrop {
    pub const ALL: [ClassifierDrop; 2] = [ClassifierDrop::Runt, ClassifierDrop::TruncatedVlan];

    pub const fn name(self) -> &'static str {
        match self {
            ClassifierDrop::Runt => "runt",
            ClassifierDrop::TruncatedVlan => "truncated_vlan",
        }
    }
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct PortConfigValue {
    port_index: u32,
    default_priority: u8,
    trust_dscp: u8,
    lossless: u8,
    pad: u8,
    dscp_map: [u8; 64],
}

// SAFETY: plain old data with no padding holes (4 + 1 + 1 + 1 + 1 + 64 bytes), as aya requires.
unsafe impl Pod for PortConfigValue {}

/// Must match `struct pfcs_port_slot`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct PortSlotValue {
    /// Whose configuration the slot holds; 0 (no interface has it): none.
    ifindex: u32,
    config: PortConfigValue,
}

// SAFETY: plain old data with no padding holes (4 + 72 bytes, all 4-byte aligned).
unsafe impl Pod for PortSlotValue {}

const EMPTY_SLOT: PortSlotValue = PortSlotValue {
    ifindex: 0,
    config: PortConfigValue {
        port_index: 0,
        default_priority: 0,
        trust_dscp: 0,
        lossless: 0,
        pad: 0,
        dscp_map: [0; 64],
    },
};

/// Frames and bytes a port received at one priority (`struct pfcs_rx_counter`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RxCounter {
    pub frames: u64,
    pub bytes: u64,
}

// SAFETY: two u64, no padding.
unsafe impl Pod for RxCounter {}

/// How a port assigns priorities to frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortClassification {
    /// Row of this port in the counter maps, below [`MAX_PORTS`].
    pub port_index: u32,
    /// Priority of untagged frames (and of non-IP frames under DSCP trust).
    pub default_priority: Pcp,
    /// DSCP → priority for untagged IPv4/IPv6, when the port trusts DSCP.
    pub dscp_map: Option<[Pcp; 64]>,
    /// Bit p: priority p is lossless, never shed ([`Classifier::set_shedding`]).
    pub lossless: u8,
}

#[derive(Debug, thiserror::Error)]
pub enum ClassifierError {
    #[error("cannot load the XDP classifier into the kernel (are you root, or do you have CAP_BPF and CAP_NET_ADMIN?)")]
    Load(#[source] EbpfError),
    #[error("cannot load program {PROGRAM_NAME}")]
    Program(#[source] ProgramError),
    #[error("the classifier object lacks map `{0}` (ebpf/classifier.c and this binary disagree)")]
    MissingMap(&'static str),
    #[error("cannot {action} map `{map}`")]
    Map { action: &'static str, map: &'static str, source: aya::maps::MapError },
    #[error("cannot map `{map}` into memory")]
    Mmap { map: &'static str, source: std::io::Error },
    #[error("interface `{0}` does not exist in this network namespace")]
    NoSuchInterface(String),
    #[error("port index {0} is out of range (at most {MAX_PORTS} ports)")]
    PortIndex(u32),
    #[error(
        "cannot attach XDP to `{iface}`: another XDP program occupies the slot; \
         see `ip -d link show dev {iface}` and remove it with `ip link set dev {iface} xdp off`"
    )]
    SlotOccupied { iface: String },
    #[error("cannot attach XDP to `{iface}`")]
    Attach { iface: String, source: ProgramError },
}

/// The loaded classifier. Dropping it detaches the program from every interface.
#[derive(Debug)]
pub struct Classifier {
    /// Before `ebpf`: unmapped before the map's descriptor closes (either order is safe).
    shedding: ShedFlags,
    ebpf: Ebpf,
    /// Per port index: the interface index it is attached to, the link, and whether in
    /// native mode.
    attached: std::collections::BTreeMap<u32, (u32, XdpLinkId, bool)>,
}

impl Classifier {
    /// Loads the embedded object and its program into the kernel.
    pub fn load() -> Result<Classifier, ClassifierError> {
        let object = aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/classifier.o"));
        let mut ebpf = Ebpf::load(object).map_err(ClassifierError::Load)?;
        let program: &mut Xdp = ebpf
            .program_mut(PROGRAM_NAME)
            .expect("classifier.o defines pfcswitch_classify")
            .try_into()
            .map_err(ClassifierError::Program)?;
        program.load().map_err(ClassifierError::Program)?;
        let shedding = match ebpf.map("shedding") {
            Some(aya::maps::Map::Array(map)) => ShedFlags::map(map.fd().as_fd(), MAX_PORTS)
                .map_err(|source| ClassifierError::Mmap { map: "shedding", source })?,
            _ => return Err(ClassifierError::MissingMap("shedding")),
        };
        Ok(Classifier { shedding, ebpf, attached: Default::default() })
    }

    /// Sets how `iface` classifies frames (attached or not: a reload changes it in place).
    pub fn configure_port(&mut self, iface: &str, port: &PortClassification) -> Result<u32, ClassifierError> {
        if port.port_index >= MAX_PORTS {
            return Err(ClassifierError::PortIndex(port.port_index));
        }
        let ifindex = if_index(iface)?;
        let value = PortConfigValue {
            port_index: port.port_index,
            default_priority: port.default_priority.value(),
            trust_dscp: u8::from(port.dscp_map.is_some()),
            lossless: port.lossless,
            pad: 0,
            dscp_map: port.dscp_map.map_or([0; 64], |map| map.map(Pcp::value)),
        };
        let mut config: HashMap<&mut MapData, u32, PortConfigValue> = self.map_mut("port_config")?;
        config.insert(ifindex, value, 0).map_err(|source| ClassifierError::Map {
            action: "update",
            map: "port_config",
            source,
        })?;
        // The slot copy too, unless another port holds the slot (this one is then found in
        // the hash). A reload rewrites the slot in place, so a frame classified meanwhile may
        // see some of the old DSCP map and some of the new; its port index never changes.
        let mut slots: Array<&mut MapData, PortSlotValue> = self.map_mut("port_slots")?;
        let slot = ifindex % PORT_SLOTS;
        let slot_error = |source| ClassifierError::Map { action: "update", map: "port_slots", source };
        let holder = slots.get(&slot, 0).map_err(slot_error)?.ifindex;
        if holder == 0 || holder == ifindex {
            slots.set(slot, PortSlotValue { ifindex, config: value }, 0).map_err(slot_error)?;
        }
        Ok(ifindex)
    }

    /// Directs frames of (port, RX queue) to the AF_XDP socket `fd`.
    pub fn register_socket(
        &mut self,
        port_index: u32,
        queue: u32,
        fd: std::os::fd::RawFd,
    ) -> Result<(), ClassifierError> {
        if port_index >= MAX_PORTS || queue >= MAX_QUEUES {
            return Err(ClassifierError::PortIndex(port_index));
        }
        let mut sockets: XskMap<&mut MapData> = self.map_mut("xsks")?;
        // SAFETY (of the fd): the socket outlives the map entry; closing it removes the entry.
        sockets.set(port_index * MAX_QUEUES + queue, fd, 0).map_err(|source| ClassifierError::Map {
            action: "update",
            map: "xsks",
            source,
        })
    }

    /// Configures `iface` as a switch port and attaches the classifier to it
    /// ([`attach_program`]), saying in the log when its driver has no native XDP.
    pub fn attach(&mut self, iface: &str, port: &PortClassification) -> Result<(), ClassifierError> {
        let ifindex = self.configure_port(iface, port)?;
        let (link, native) = attach_program(self.program(), iface, ifindex)?;
        if !native {
            log::warn!("{iface}: its driver has no native XDP; the classifier runs in generic mode (slower per frame)");
        }
        self.attached.insert(port.port_index, (ifindex, link, native));
        Ok(())
    }

    /// Forgets port `port_index`, whose interface vanished: its link (which the kernel
    /// already took off the interface) and its configuration entry.
    pub fn release(&mut self, port_index: u32) {
        let Some((ifindex, link, _)) = self.attached.remove(&port_index) else { return };
        if let Err(error) = self.program().detach(link) {
            log::debug!("the XDP link of port index {port_index} was already gone: {error}");
        }
        if let Ok(mut config) = self.map_mut::<HashMap<&mut MapData, u32, PortConfigValue>>("port_config") {
            // An entry already gone is as good as removed.
            let _ = config.remove(&ifindex);
        }
        if let Ok(mut slots) = self.map_mut::<Array<&mut MapData, PortSlotValue>>("port_slots") {
            let slot = ifindex % PORT_SLOTS;
            if slots.get(&slot, 0).is_ok_and(|held| held.ifindex == ifindex) {
                let _ = slots.set(slot, EMPTY_SLOT, 0);
            }
        }
    }

    /// How the classifier runs on port `port_index`: `native` (in the driver) or `generic`
    /// (after the kernel built an skb), if it is attached.
    pub fn attach_mode(&self, port_index: u32) -> Option<&'static str> {
        self.attached.get(&port_index).map(|&(_, _, native)| if native { "native" } else { "generic" })
    }

    fn program(&mut self) -> &mut Xdp {
        self.ebpf.program_mut(PROGRAM_NAME).expect("loaded").try_into().expect("is XDP")
    }

    /// Frames and bytes received per priority on `port_index`, summed over CPUs.
    pub fn rx_counters(&self, port_index: u32) -> Result<[RxCounter; 8], ClassifierError> {
        let mut counters = [RxCounter::default(); 8];
        for (priority, counter) in (0u32..).zip(counters.iter_mut()) {
            let per_cpu = self.per_cpu::<RxCounter>("rx_counters", port_index * PRIORITIES + priority)?;
            for value in per_cpu.iter() {
                counter.frames += value.frames;
                counter.bytes += value.bytes;
            }
        }
        Ok(counters)
    }

    /// While `on`, data frames of `port_index`'s lossy priorities are dropped in the kernel,
    /// before any copy, and counted per priority ([`Classifier::shed_frames`]): its receive
    /// ring is backing up, and the room left is for lossless frames.
    ///
    /// A store into memory shared with the program, so it cannot fail.
    ///
    /// # Panics
    /// If `port_index` is not below [`MAX_PORTS`] (which [`Classifier::attach`] refuses).
    pub fn set_shedding(&mut self, port_index: u32, on: bool) {
        self.shedding.set(port_index, on);
    }

    /// Frames of each priority shed on `port_index`, summed over CPUs.
    pub fn shed_frames(&self, port_index: u32) -> Result<[u64; 8], ClassifierError> {
        let mut frames = [0; 8];
        for (priority, count) in (0u32..).zip(frames.iter_mut()) {
            *count = self.per_cpu::<u64>("shed_counters", port_index * PRIORITIES + priority)?.iter().sum();
        }
        Ok(frames)
    }

    /// Frames the classifier dropped on `port_index` for `reason`, summed over CPUs.
    pub fn drops(&self, port_index: u32, reason: ClassifierDrop) -> Result<u64, ClassifierError> {
        let index = port_index * ClassifierDrop::ALL.len() as u32 + reason as u32;
        Ok(self.per_cpu::<u64>("drop_counters", index)?.iter().sum())
    }

    /// Entry `index` of per-CPU array `name`, one value per CPU.
    fn per_cpu<T: Pod>(&self, name: &'static str, index: u32) -> Result<PerCpuValues<T>, ClassifierError> {
        let map: PerCpuArray<&MapData, T> = self.map(name)?;
        map.get(&index, 0).map_err(|source| ClassifierError::Map { action: "read", map: name, source })
    }

    fn map<'a, M: TryFrom<&'a aya::maps::Map, Error = aya::maps::MapError>>(
        &'a self,
        name: &'static str,
    ) -> Result<M, ClassifierError> {
        let map = self.ebpf.map(name).ok_or(ClassifierError::MissingMap(name))?;
        M::try_from(map).map_err(|source| ClassifierError::Map { action: "open", map: name, source })
    }

    fn map_mut<'a, M: TryFrom<&'a mut aya::maps::Map, Error = aya::maps::MapError>>(
        &'a mut self,
        name: &'static str,
    ) -> Result<M, ClassifierError> {
        let map = self.ebpf.map_mut(name).ok_or(ClassifierError::MissingMap(name))?;
        M::try_from(map).map_err(|source| ClassifierError::Map { action: "open", map: name, source })
    }
}

/// Attaches a loaded XDP `program` to `iface` (index `ifindex`) through a BPF link, in
/// native (driver) mode where the driver has it (veth, most NICs) and else in generic mode,
/// where the kernel runs XDP on its socket buffers (a VXLAN tunnel, a NIC without XDP): the
/// same frames, at a higher cost per frame. Returns the link and whether it is native.
///
/// A link released by a killed predecessor may take a moment to leave the interface, so an
/// occupied slot is retried for up to two seconds before it is an error.
pub fn attach_program(program: &mut Xdp, iface: &str, ifindex: u32) -> Result<(XdpLinkId, bool), ClassifierError> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    let mut mode = XdpMode::Driver;
    loop {
        match program.attach_to_if_index(ifindex, mode).map_err(|source| attach_error(iface, source)) {
            Err(ClassifierError::SlotOccupied { .. }) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            Err(ClassifierError::Attach { source, .. }) if mode == XdpMode::Driver && no_native_xdp(&source) => {
                mode = XdpMode::Skb;
            }
            result => return result.map(|link| (link, mode == XdpMode::Driver)),
        }
    }
}

/// The driver has no native XDP (`EOPNOTSUPP` from the kernel's `dev_xdp_attach`).
fn no_native_xdp(source: &ProgramError) -> bool {
    matches!(source, ProgramError::SyscallError(error) if error.io_error.raw_os_error() == Some(libc::EOPNOTSUPP))
}

fn attach_error(iface: &str, source: ProgramError) -> ClassifierError {
    let busy = match &source {
        ProgramError::SyscallError(error) => matches!(error.io_error.raw_os_error(), Some(libc::EBUSY | libc::EEXIST)),
        _ => false,
    };
    if busy {
        ClassifierError::SlotOccupied { iface: iface.to_string() }
    } else {
        ClassifierError::Attach { iface: iface.to_string(), source }
    }
}

/// The interface's index in the calling thread's network namespace.
pub fn if_index(iface: &str) -> Result<u32, ClassifierError> {
    let name = std::ffi::CString::new(iface).map_err(|_| ClassifierError::NoSuchInterface(iface.to_string()))?;
    // SAFETY: `name` is a valid NUL-terminated string for the duration of the call.
    let index = unsafe { libc::if_nametoindex(name.as_ptr()) };
    if index == 0 { Err(ClassifierError::NoSuchInterface(iface.to_string())) } else { Ok(index) }
}
