//! Egress scheduling: a scheduler that serves strict priorities first, then the others by
//! weighted deficit round robin (the shaper that paces the port is `pfcswitch_link::shaper`).

/// Per-port choice of the next priority to send.
#[derive(Clone, Debug)]
pub struct Scheduler {
    /// Priorities served strictly (bit n = priority n), higher number first.
    strict: u8,
    quantum: [u32; 8],
    deficit: [u32; 8],
    /// The WDRR priority whose turn it is, if any.
    current: Option<usize>,
    /// Where the round continues after `current`.
    next: usize,
}

impl Scheduler {
    /// `weights[p] == 0` makes priority p strict. A quantum is `weight × max_frame` bytes,
    /// so one quantum always covers the head frame (DRR's O(1) condition).
    pub fn new(weights: [u32; 8], max_frame: u32) -> Scheduler {
        let strict = (0..8).filter(|&p| weights[p] == 0).fold(0u8, |mask, p| mask | 1 << p);
        Scheduler { strict, quantum: weights.map(|w| w * max_frame), deficit: [0; 8], current: None, next: 0 }
    }

    /// Chooses among `eligible` priorities (backlogged and not paused); `head_len(p)` is the
    /// length of priority p's head frame. The caller must then send that frame and report
    /// it with [`Scheduler::sent`].
    pub fn pick(&mut self, eligible: u8, head_len: impl Fn(usize) -> u32) -> Option<usize> {
        let strict = eligible & self.strict;
        if strict != 0 {
            return Some(7 - strict.leading_zeros() as usize);
        }
        let weighted = eligible & !self.strict;
        if weighted == 0 {
            return None;
        }
        loop {
            if let Some(p) = self.current {
                if weighted & (1 << p) != 0 {
                    if head_len(p) <= self.deficit[p] {
                        return Some(p);
                    }
                } else {
                    // Empty or paused: its turn ends without credit carried over.
                    self.deficit[p] = 0;
                }
                self.current = None;
                self.next = (p + 1) % 8;
            }
            let p = (0..8).map(|i| (self.next + i) % 8).find(|&p| weighted & (1 << p) != 0).expect("weighted != 0");
            self.deficit[p] += self.quantum[p];
            self.current = Some(p);
        }
    }

    /// Records that priority `p` sent `len` bytes; `now_empty` if its queue drained.
    pub fn sent(&mut self, p: usize, len: u32, now_empty: bool) {
        if self.strict & (1 << p) != 0 {
            return;
        }
        self.deficit[p] = self.deficit[p].saturating_sub(len);
        if now_empty {
            self.deficit[p] = 0;
            if self.current == Some(p) {
                self.current = None;
                self.next = (p + 1) % 8;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_priorities_come_first_highest_number_first() {
        let mut scheduler = Scheduler::new([1, 1, 0, 1, 1, 0, 1, 1], 1518);
        assert_eq!(scheduler.pick(0b0010_0101, |_| 100), Some(5));
        assert_eq!(scheduler.pick(0b0000_0101, |_| 100), Some(2));
        assert_eq!(scheduler.pick(0b0000_0001, |_| 100), Some(0));
        assert_eq!(scheduler.pick(0, |_| 100), None);
    }

    #[test]
    fn wdrr_shares_bytes_by_weight_whatever_the_frame_sizes() {
        let mut scheduler = Scheduler::new([1, 3, 1, 1, 1, 1, 1, 1], 1518);
        let sent = serve(&mut scheduler, [64, 1500, 0, 0, 0, 0, 0, 0], 200_000);
        let share = sent[1] as f64 / (sent[0] + sent[1]) as f64;
        assert!((share - 0.75).abs() < 0.005, "share of weight 3 vs 1: {share}");
    }

    fn serve(scheduler: &mut Scheduler, backlog: [u32; 8], rounds: usize) -> [u64; 8] {
        let mut sent = [0u64; 8];
        let eligible = (0..8).filter(|&p| backlog[p] > 0).fold(0u8, |m, p| m | 1 << p);
        for _ in 0..rounds {
            let p = scheduler.pick(eligible, |p| backlog[p]).unwrap();
            scheduler.sent(p, backlog[p], false);
            sent[p] += u64::from(backlog[p]);
        }
        sent
    }
}
