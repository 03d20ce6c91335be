//! Which connections the transport's scans visit. Workloads plan every flow of a run up
//! front, and a flow-size workload makes each flow a connection of its own, so a host holds
//! every flow it will ever send; scanning them all at every event made a run's cost grow with
//! its length. A connection whose first message has not started waits in start order; one
//! whose every message is acknowledged, with no timer left, is retired; only the others are
//! visited. The choices are the same as scanning every connection: a waiting connection can
//! do nothing before its start, and a retired one nothing at all. Only an ACK or a fired
//! retransmission timer retires a connection, so only the connections that had one are
//! looked at for retirement (sweeping every live one after each ACK cost a tenth of a run on
//! HPCC's fat-tree). The same moments bound a connection's memory: what only sending needs
//! (a reaction point that lives with its messages, the send times) is made at the start and
//! freed at retirement, so a host holding every flow of a run keeps a few hundred bytes for
//! each waiting or finished one.

use super::config::TransportConfig;
use super::sender::Connection;
use pfcswitch_link::time::Instant;
use std::collections::BTreeSet;

#[derive(Clone, Debug, Default)]
pub(super) struct Roster {
    /// Indices into the connections, ascending: started and not retired.
    live: Vec<usize>,
    /// (start of the first message, index) of the connections not started yet.
    waiting: BTreeSet<(Instant, usize)>,
    /// By connection index: whether it is in `live`.
    is_live: Vec<bool>,
    /// Connections that may have retired since the last update.
    may_have_retired: Vec<usize>,
    /// The connections the last update started.
    started: Vec<usize>,
}

impl Roster {
    /// Takes connection `index`. With QCN or Zhu et al.'s DCQCN its reaction point runs on
    /// its own timers, so it stays live from the start to the end; HPCC's model of DCQCN
    /// lives with the messages.
    pub fn add(&mut self, index: usize, connection: &Connection) {
        let own_timers = connection.reaction.as_ref().is_some_and(|r| !r.rp.lives_with_its_messages());
        if self.is_live.len() <= index {
            self.is_live.resize(index + 1, false);
        }
        match connection.first_start().filter(|_| !own_timers) {
            Some(start) => {
                self.waiting.insert((start, index));
            }
            None => {
                self.live.push(index);
                self.is_live[index] = true;
                self.may_have_retired.push(index);
            }
        }
    }

    /// Notes that connection `index` was acknowledged or timed out, which may retire it.
    pub fn may_retire(&mut self, index: usize) {
        self.may_have_retired.push(index);
    }

    /// Starts the waiting connections whose first message is due at `now` and retires the
    /// finished ones ([`Connection::start`], [`Connection::retire`]); returns those started.
    pub fn update(&mut self, now: Instant, connections: &mut [Connection], config: &TransportConfig) -> &[usize] {
        self.started.clear();
        while let Some(&(start, index)) = self.waiting.first()
            && start <= now
        {
            self.waiting.pop_first();
            self.live.push(index);
            self.is_live[index] = true;
            connections[index].start(config);
            self.started.push(index);
        }
        if !self.started.is_empty() {
            self.live.sort_unstable();
        }
        for index in self.may_have_retired.drain(..) {
            if let Ok(position) = self.live.binary_search(&index)
                && connections[index].is_retired()
            {
                self.live.remove(position);
                self.is_live[index] = false;
                connections[index].retire();
            }
        }
        &self.started
    }

    /// The live connections, ascending.
    pub fn live(&self) -> &[usize] {
        &self.live
    }

    /// By connection index: whether it is live.
    pub fn is_live(&self) -> &[bool] {
        &self.is_live
    }

    /// The waiting connections, earliest start first.
    pub fn waiting(&self) -> impl Iterator<Item = (Instant, usize)> + '_ {
        self.waiting.iter().copied()
    }
}
