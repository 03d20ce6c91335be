//! A host's [`Transport`] and [`HostNic`] on an AF_PACKET socket: the loop both RoCEv2 ends
//! of `traffic send` and `recv` run. Each turn takes what arrived (PAUSE/PFC to the NIC, the
//! rest to the transport), fires the transport's timers, sends what the transport has, and
//! sleeps until its next deadline, the caller's, or a frame.

use pfcswitch_hosts::{HostNic, Transport};
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::BitRate;
use pfcswitchd::packet::RawSocket;
use pfcswitchd::timer::{self, Clock, Lateness};
use std::io;

/// What the caller wants after a turn.
pub(super) enum Turn {
    /// Go on, waking no later than this (`None`: when the transport or a frame needs it).
    WakeBy(Option<Instant>),
    Stop,
}

pub(super) struct Host {
    pub(super) socket: RawSocket,
    pub(super) clock: Clock,
    pub(super) nic: HostNic,
    pub(super) transport: Transport,
    /// Frames that were neither PAUSE/PFC nor the transport's (ICMP, ARP, other hosts').
    pub(super) foreign: u64,
    /// When the transport last took a frame.
    pub(super) last_arrival: Option<Instant>,
    /// The lowest rate any DCQCN reaction point was at after a turn.
    pub(super) lowest_dcqcn_rate: Option<BitRate>,
    lateness: Lateness,
    buffer: Vec<u8>,
}

impl Host {
    pub(super) fn new(socket: RawSocket, clock: Clock, nic: HostNic, transport: Transport) -> Host {
        Host {
            socket,
            clock,
            nic,
            transport,
            foreign: 0,
            last_arrival: None,
            lowest_dcqcn_rate: None,
            lateness: Lateness::new(),
            buffer: vec![0u8; 9216],
        }
    }

    /// Runs turns until `next` says stop; `transmit`: whether the transport may send (a
    /// sender that stopped only listens for the last ACKs and PFC frames).
    pub(super) fn run(&mut self, transmit: bool, mut next: impl FnMut(&Host, Instant) -> Turn) -> io::Result<()> {
        // What the last wait was for: the NIC's catch-up credit starts there, not at the poll
        // before the wait.
        let mut woke_for: Option<Instant> = None;
        loop {
            let now = self.clock.now();
            if let Some(due) = woke_for {
                self.nic.rest(due.min(now));
            }
            self.receive(now)?;
            self.transport.handle_timeout(now);
            if transmit {
                while let Some(len) = self.transport.poll_transmit(now, &mut self.nic, &mut self.buffer) {
                    self.socket.send(&self.buffer[..len])?;
                }
            }
            self.note_rates();
            let wake_by = match next(self, now) {
                Turn::Stop => return Ok(()),
                Turn::WakeBy(wake_by) => wake_by,
            };
            let transport = if transmit { self.transport.poll_timeout(&self.nic) } else { None };
            let deadline = match (transport, wake_by) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let mut fds = [timer::readable(self.socket.fd())];
            // No spinning: the NIC's burst credit absorbs late wake-ups, and the switch needs the CPU.
            timer::wait(&self.clock, deadline, std::time::Duration::ZERO, &mut fds, || false, &mut self.lateness);
            woke_for = deadline;
        }
    }

    /// Takes every frame waiting on the socket.
    fn receive(&mut self, now: Instant) -> io::Result<()> {
        let mut incoming = [0u8; 9216];
        loop {
            let frame = match self.socket.try_recv(&mut incoming) {
                Ok(Some(frame)) => frame,
                Ok(None) => return Ok(()),
                // The interface went down (a link flap): go on once it is back.
                Err(error) if error.raw_os_error() == Some(libc::ENETDOWN) => return Ok(()),
                Err(error) => return Err(error),
            };
            if self.nic.handle_rx(now, frame) {
                continue;
            }
            if self.transport.handle_rx(now, frame) {
                self.last_arrival = Some(now);
            } else {
                self.foreign += 1;
            }
        }
    }

    fn note_rates(&mut self) {
        for (_, rp, _) in self.transport.dcqcn_points() {
            self.lowest_dcqcn_rate = Some(self.lowest_dcqcn_rate.map_or(rp.rate(), |r| r.min(rp.rate())));
        }
    }
}
