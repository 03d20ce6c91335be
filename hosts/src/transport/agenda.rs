//! The earliest send and timer of a host's live connections without visiting them: min-heaps
//! of (time, connection) over the glances, one of timers and one of send times per priority,
//! with entries made stale by later changes dropped when they reach the top. On HPCC's
//! fat-tree at 50 % FB_Hadoop load a host has hundreds of live connections, and finding its
//! next wake-up by visiting each at every poll was the largest cost of a run
//! (docs/performance.md, "Simulator").
//!
//! A connection's next event is min(max(its send time, its priority's NIC readiness), its
//! timer), so the minimum over connections is the minimum over priorities of max(the least
//! send time, readiness), with the least timer: the same value as the visit gives. That holds
//! while no connection has a long-lived flow's stop or FECN probes and the NIC pauses whole
//! priorities, not flows; the transport visits every connection otherwise.

use super::glance::Glance;
use pfcswitch_link::time::Instant;
use pfcswitch_wire::Pcp;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

type Heap = BinaryHeap<Reverse<(Instant, usize)>>;

#[derive(Clone, Debug, Default)]
pub(super) struct Agenda {
    timers: Heap,
    /// By priority.
    sends: [Heap; 8],
}

impl Agenda {
    /// Adds connection `index`'s times, as its glance now says.
    pub(super) fn note(&mut self, index: usize, glance: &Glance) {
        if let Some(at) = glance.timer {
            self.timers.push(Reverse((at, index)));
        }
        if let Some(at) = glance.send_from {
            self.sends[glance.priority.index()].push(Reverse((at, index)));
        }
    }

    /// Starts again from the live connections (`live`, with their glances).
    pub(super) fn rebuild(&mut self, live: &[usize], glances: &[Glance]) {
        self.timers.clear();
        self.sends.iter_mut().for_each(Heap::clear);
        for &index in live {
            self.note(index, &glances[index]);
        }
    }

    /// Drops the stale entries at the tops: a connection no longer live, or whose glance
    /// gives another time now. Entries below the tops may be stale; the tops never are after
    /// this, which is all [`Agenda::earliest_timer`] and [`Agenda::earliest_send`] read.
    /// Rebuilds when stale entries outnumber the live connections' times, so that the heaps
    /// stay small.
    pub(super) fn tidy(&mut self, live: &[usize], is_live: &[bool], glances: &[Glance]) {
        pop_stale(&mut self.timers, |at, i| is_live[i] && glances[i].timer == Some(at));
        for heap in &mut self.sends {
            pop_stale(heap, |at, i| is_live[i] && glances[i].send_from == Some(at));
        }
        let held = self.timers.len() + self.sends.iter().map(Heap::len).sum::<usize>();
        if held > 4 * live.len() + 64 {
            self.rebuild(live, glances);
        }
    }

    /// Whether the tops are what `tidy` leaves (checked in debug builds).
    pub(super) fn is_tidy(&self, is_live: &[bool], glances: &[Glance]) -> bool {
        let top = |heap: &Heap| heap.peek().map(|Reverse(entry)| *entry);
        top(&self.timers).is_none_or(|(at, i)| is_live[i] && glances[i].timer == Some(at))
            && self
                .sends
                .iter()
                .all(|heap| top(heap).is_none_or(|(at, i)| is_live[i] && glances[i].send_from == Some(at)))
    }

    /// The least timer of the live connections.
    pub(super) fn earliest_timer(&self) -> Option<Instant> {
        self.timers.peek().map(|Reverse((at, _))| *at)
    }

    /// Pops every live connection whose timer is at or before `now` into `due`, ascending
    /// and each once (a connection refreshed twice with the same timer is held twice).
    pub(super) fn take_due_timers(&mut self, now: Instant, is_live: &[bool], glances: &[Glance], due: &mut Vec<usize>) {
        while let Some(&Reverse((at, index))) = self.timers.peek()
            && at <= now
        {
            self.timers.pop();
            if is_live[index] && glances[index].timer == Some(at) {
                due.push(index);
            }
        }
        due.sort_unstable();
        due.dedup();
    }

    /// The least send time of the live connections of `priority`.
    pub(super) fn earliest_send(&self, priority: Pcp) -> Option<Instant> {
        self.sends[priority.index()].peek().map(|Reverse((at, _))| *at)
    }
}

fn pop_stale(heap: &mut Heap, valid: impl Fn(Instant, usize) -> bool) {
    while let Some(&Reverse((at, index))) = heap.peek() {
        if valid(at, index) {
            break;
        }
        heap.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pfcswitch_wire::EthernetAddress;

    fn glance(priority: u8, send_from: Option<u64>, timer: Option<u64>) -> Glance {
        Glance {
            priority: Pcp::from_low_bits(priority),
            dst: EthernetAddress([2, 0, 0, 0, 0, 1]),
            send_from: send_from.map(Instant::from_nanos),
            stop_at: None,
            probe: None,
            timer: timer.map(Instant::from_nanos),
        }
    }

    /// Changes and retirements leave stale entries; after `tidy` the tops are the least
    /// current times of the live connections.
    #[test]
    fn answers_the_least_current_time_of_the_live_connections() {
        let mut glances =
            vec![glance(3, Some(10), Some(500)), glance(3, Some(20), Some(400)), glance(0, Some(5), None)];
        let (live, mut is_live) = (vec![0, 1, 2], vec![true; 3]);
        let mut agenda = Agenda::default();
        agenda.rebuild(&live, &glances);
        assert_eq!(agenda.earliest_send(Pcp::from_low_bits(3)), Some(Instant::from_nanos(10)));
        assert_eq!(agenda.earliest_timer(), Some(Instant::from_nanos(400)));
        // Connection 0 sent (its next send later), connection 1 retired.
        glances[0] = glance(3, Some(30), Some(600));
        agenda.note(0, &glances[0]);
        is_live[1] = false;
        let live = vec![0, 2];
        assert!(!agenda.is_tidy(&is_live, &glances));
        agenda.tidy(&live, &is_live, &glances);
        assert!(agenda.is_tidy(&is_live, &glances));
        assert_eq!(agenda.earliest_send(Pcp::from_low_bits(3)), Some(Instant::from_nanos(30)));
        assert_eq!(agenda.earliest_send(Pcp::from_low_bits(0)), Some(Instant::from_nanos(5)));
        assert_eq!(agenda.earliest_send(Pcp::from_low_bits(1)), None);
        assert_eq!(agenda.earliest_timer(), Some(Instant::from_nanos(600)));
    }

    /// Due timers come out once each, ascending, without stale or later ones.
    #[test]
    fn takes_each_due_timer_once() {
        let mut glances = vec![glance(3, None, Some(300)), glance(3, None, Some(100)), glance(0, None, Some(900))];
        let (live, is_live) = (vec![0, 1, 2], vec![true; 3]);
        let mut agenda = Agenda::default();
        agenda.rebuild(&live, &glances);
        // Connection 1 refreshed with the same timer; connection 0's moved past `now`.
        agenda.note(1, &glances[1]);
        glances[0] = glance(3, None, Some(700));
        agenda.note(0, &glances[0]);
        let mut due = Vec::new();
        agenda.take_due_timers(Instant::from_nanos(500), &is_live, &glances, &mut due);
        assert_eq!(due, [1]);
        agenda.tidy(&live, &is_live, &glances);
        assert_eq!(agenda.earliest_timer(), Some(Instant::from_nanos(700)));
    }
}
