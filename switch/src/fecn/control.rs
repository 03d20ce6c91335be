//! FECN's queue control functions f(q) (the paper's §IV): the switch divides the arrival
//! rate by f(q)·C, so f > 1 below the set point Qeq lets the advertised rate grow and f < 1
//! above it drains the queue.
//!
//! - **Hyperbolic** (eq. 1, the default, "single stage"): f(q) = a·Qeq / ((a−1)·q + Qeq) up
//!   to Qeq, max(c, b·Qeq / ((b−1)·q + Qeq)) above.
//! - **Multistage** (§IV-D): the same below Qeq; above it piecewise linear, stage m on
//!   (m·Qeq, (m+1)·Qeq] falling by k·m per packet of queue, the last stage `stages` going on
//!   above (stages·Qeq); never below c.
//!
//! Queue lengths are bytes (§IV: "FECN can handle random packet sizes simply by measuring
//! queue lengths in bytes"). Eq. 1 depends on q/Qeq only; the multistage slopes are per
//! packet in the paper, so they take a packet size (Pm, 1500 bytes by default).

use serde::{Deserialize, Serialize};

/// Which f(q), with its constants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum QueueControl {
    Hyperbolic { a: f64, b: f64, c: f64 },
    Multistage { a: f64, c: f64, k: f64, stages: u32, packet: f64 },
}

/// `fecn.control` in a config.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ControlKind {
    #[default]
    Hyperbolic,
    Multistage,
}

impl ControlKind {
    pub fn name(self) -> &'static str {
        match self {
            ControlKind::Hyperbolic => "hyperbolic",
            ControlKind::Multistage => "multistage",
        }
    }
}

impl QueueControl {
    /// f(q) for a queue of `q` bytes and a set point of `qeq` bytes (> 0).
    pub fn f(&self, q: f64, qeq: f64) -> f64 {
        let below = |a: f64| a * qeq / ((a - 1.0) * q + qeq);
        match *self {
            QueueControl::Hyperbolic { a, .. } | QueueControl::Multistage { a, .. } if q <= qeq => below(a),
            QueueControl::Hyperbolic { b, c, .. } => (b * qeq / ((b - 1.0) * q + qeq)).max(c),
            QueueControl::Multistage { c, k, stages, packet, .. } => {
                let mut f = 1.0;
                for stage in 1..=stages {
                    let from = f64::from(stage) * qeq;
                    let to = if stage == stages { q } else { q.min(from + qeq) };
                    if to <= from {
                        break;
                    }
                    f -= k * f64::from(stage) * (to - from) / packet;
                }
                f.max(c)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fig. 4's constants: a = 1.002, b = 1.1, c = 0.1, Qeq = 16 packets of 1500 bytes.
    const QEQ: f64 = 16.0 * 1500.0;
    const PACKET: f64 = 1500.0;
    const HYPERBOLIC: QueueControl = QueueControl::Hyperbolic { a: 1.002, b: 1.1, c: 0.1 };

    fn packets(n: f64) -> f64 {
        n * PACKET
    }

    fn close(got: f64, want: f64) {
        assert!((got - want).abs() < 1e-9, "f = {got}, want {want}");
    }

    #[test]
    fn hyperbolic_matches_eq_1_with_figure_4s_constants() {
        // Below Qeq: 1.002·16 / (0.002·q + 16).
        close(HYPERBOLIC.f(0.0, QEQ), 1.002);
        close(HYPERBOLIC.f(packets(8.0), QEQ), 16.032 / 16.016);
        close(HYPERBOLIC.f(QEQ, QEQ), 1.0);
        // Above: 1.1·16 / (0.1·q + 16), which the paper approximates by −0.00375·(q − 16) + 1.
        close(HYPERBOLIC.f(packets(32.0), QEQ), 17.6 / 19.2);
        close(HYPERBOLIC.f(packets(100.0), QEQ), 17.6 / 26.0);
        // The paper's linear form is the secant over its 100-packet buffer.
        assert!((HYPERBOLIC.f(packets(100.0), QEQ) - (1.0 - 0.00375 * 84.0)).abs() < 0.01, "near the linear form");
        // c bounds it for large queues: 17.6 / (0.1·q + 16) < 0.1 beyond q = 16 000 packets.
        close(HYPERBOLIC.f(packets(20_000.0), QEQ), 0.1);
    }

    #[test]
    fn multistage_falls_by_k_times_the_stage_per_packet() {
        let two = QueueControl::Multistage { a: 1.002, c: 0.1, k: 0.002, stages: 2, packet: PACKET };
        let three = QueueControl::Multistage { a: 1.002, c: 0.1, k: 0.002, stages: 3, packet: PACKET };
        // Below Qeq it is the hyperbolic.
        close(two.f(packets(8.0), QEQ), 16.032 / 16.016);
        close(two.f(QEQ, QEQ), 1.0);
        // Stage 1 on (16, 32]: −0.002 per packet.
        close(two.f(packets(24.0), QEQ), 1.0 - 0.002 * 8.0);
        close(two.f(packets(32.0), QEQ), 1.0 - 0.002 * 16.0);
        // Stage 2 from 32 on (the last of two): −0.004 per packet.
        close(two.f(packets(48.0), QEQ), 1.0 - 0.032 - 0.004 * 16.0);
        close(two.f(packets(64.0), QEQ), 1.0 - 0.032 - 0.004 * 32.0);
        // With three stages the third, from 48 on, falls by 0.006 per packet.
        close(three.f(packets(64.0), QEQ), 1.0 - 0.032 - 0.064 - 0.006 * 16.0);
        assert!(three.f(packets(64.0), QEQ) < two.f(packets(64.0), QEQ), "more stages drain faster");
        close(two.f(packets(1000.0), QEQ), 0.1);
    }
}
