//! The error every parser returns: the layer it concerns and what is wrong, with a stable
//! index and label per pair, which the datapath counts malformed frames by.

use std::fmt;

/// The header or format in which a parse failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layer {
    Ethernet,
    Vlan,
    MacControl,
    CnTag,
    Cnm,
    Ipv4,
    Udp,
    Traffic,
    Ofc,
    Fecn,
    /// RoCEv2: the InfiniBand transport headers (BTH, AETH) and ICRC in UDP port 4791.
    Roce,
    /// In-band telemetry over UDP (P4.org INT v2.1): the shim, the INT-MD header, the hops.
    Int,
}

/// What was wrong with the bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// Fewer bytes than the fixed fields need.
    Truncated,
    /// The EtherType does not announce this format (e.g. not 0x8808 for MAC control).
    WrongEtherType,
    /// An opcode this implementation does not speak: a MAC control opcode other than PAUSE
    /// (0x0001) and PFC (0x0101), a BTH opcode other than the RC SENDs, ACK and CNP.
    UnknownOpcode,
    /// Bits the standard reserves (must be zero) are set.
    ReservedBits,
    /// A length field or the frame length is inconsistent with the format.
    BadLength,
    /// A version or magic field this implementation does not speak.
    BadVersion,
    /// A field holds a value its format forbids (e.g. an IPv4 header length below 5).
    BadValue,
    /// A checksum or CRC does not match the bytes (e.g. a RoCEv2 ICRC).
    BadChecksum,
}

/// A parse failure: where and why. Small and `Copy` so the datapath can count it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Error {
    pub layer: Layer,
    pub kind: ErrorKind,
}

impl Error {
    pub const fn new(layer: Layer, kind: ErrorKind) -> Error {
        Error { layer, kind }
    }
}

impl Layer {
    pub const ALL: [Layer; 12] = [
        Layer::Ethernet,
        Layer::Vlan,
        Layer::MacControl,
        Layer::CnTag,
        Layer::Cnm,
        Layer::Ipv4,
        Layer::Udp,
        Layer::Traffic,
        Layer::Ofc,
        Layer::Fecn,
        Layer::Roce,
        Layer::Int,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            Layer::Ethernet => "ethernet",
            Layer::Vlan => "vlan",
            Layer::MacControl => "mac_control",
            Layer::CnTag => "cn_tag",
            Layer::Cnm => "cnm",
            Layer::Ipv4 => "ipv4",
            Layer::Udp => "udp",
            Layer::Traffic => "traffic",
            Layer::Ofc => "ofc",
            Layer::Fecn => "fecn",
            Layer::Roce => "roce",
            Layer::Int => "int",
        }
    }
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 8] = [
        ErrorKind::Truncated,
        ErrorKind::WrongEtherType,
        ErrorKind::UnknownOpcode,
        ErrorKind::ReservedBits,
        ErrorKind::BadLength,
        ErrorKind::BadVersion,
        ErrorKind::BadValue,
        ErrorKind::BadChecksum,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            ErrorKind::Truncated => "truncated",
            ErrorKind::WrongEtherType => "wrong_ethertype",
            ErrorKind::UnknownOpcode => "unknown_opcode",
            ErrorKind::ReservedBits => "reserved_bits",
            ErrorKind::BadLength => "bad_length",
            ErrorKind::BadVersion => "bad_version",
            ErrorKind::BadValue => "bad_value",
            ErrorKind::BadChecksum => "bad_checksum",
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            ErrorKind::Truncated => "truncated",
            ErrorKind::WrongEtherType => "wrong EtherType for",
            ErrorKind::UnknownOpcode => "unknown opcode in",
            ErrorKind::ReservedBits => "reserved bits set in",
            ErrorKind::BadLength => "bad length of",
            ErrorKind::BadVersion => "unsupported version of",
            ErrorKind::BadValue => "invalid field in",
            ErrorKind::BadChecksum => "bad checksum of",
        };
        write!(f, "{what} {} header", self.layer.name().replace('_', " "))
    }
}

impl std::error::Error for Error {}

impl Error {
    /// Number of distinct errors, for fixed-size counter tables.
    pub const COUNT: usize = Layer::ALL.len() * ErrorKind::ALL.len();

    /// A dense index below [`Error::COUNT`].
    pub const fn index(self) -> usize {
        self.layer as usize * ErrorKind::ALL.len() + self.kind as usize
    }

    /// The error with [`Error::index`] `index`.
    pub const fn from_index(index: usize) -> Error {
        Error::new(Layer::ALL[index / ErrorKind::ALL.len()], ErrorKind::ALL[index % ErrorKind::ALL.len()])
    }

    /// A metrics label such as `mac_control_truncated`.
    pub fn label(self) -> String {
        format!("{}_{}", self.layer.name(), self.kind.name())
    }
}

pub type Result<T> = std::result::Result<T, Error>;
