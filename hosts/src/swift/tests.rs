//! Every expected value is worked out here from Algorithm 1's and §3's target-delay
//! equations, never by calling the implementation. Most tests use round flow-scaling
//! settings: fs_min_cwnd = 1, fs_max_cwnd = 100, fs_range = 90 µs, so α = 90000 / (1/√1 −
//! 1/√100) = 90000 / 0.9 = 100000 ns·√segment and β = −100000/√100 = −10000 ns: fs =
//! 100000/√cwnd − 10000 ns.

use super::*;

const T0: Instant = Instant::from_nanos(1_000_000);
const US: Duration = Duration::from_micros(1);

/// The round flow-scaling settings, the other defaults (base_target 25 µs, h 1 µs, ai 1,
/// β_md 0.8, max_mdf 0.5, min_cwnd 0.01), max_cwnd 1000, starting at `cwnd`.
fn scaled(cwnd: f64) -> SwiftParams {
    SwiftParams {
        fs_min_cwnd: 1.0,
        fs_max_cwnd: 100.0,
        fs_range: 90 * US,
        max_cwnd: 1000.0,
        initial_cwnd: cwnd,
        ..SwiftParams::default()
    }
}

#[track_caller]
fn assert_cwnd(swift: &Swift, expected: f64) {
    assert!((swift.cwnd() - expected).abs() < 1e-9, "cwnd {}, expected {expected}", swift.cwnd());
}

#[test]
fn the_target_adds_a_per_hop_allowance_and_flow_scaling_between_its_windows() {
    let target = |cwnd: f64, hops: u32| Swift::new(scaled(cwnd)).target_delay(hops);
    // 3 hops: 25 µs + 3·1 µs = 28 µs before flow scaling.
    // cwnd 1 = fs_min_cwnd: fs = 100000/1 − 10000 = 90000 ns = fs_range.
    assert_eq!(target(1.0, 3), 118 * US);
    // cwnd 0.25, below fs_min_cwnd: 100000/0.5 − 10000 = 190000, clamped to 90000.
    assert_eq!(target(0.25, 3), 118 * US);
    // cwnd 4: 100000/2 − 10000 = 40000 ns.
    assert_eq!(target(4.0, 3), 68 * US);
    assert_eq!(target(4.0, 0), 65 * US);
    // cwnd 25: 100000/5 − 10000 = 10000 ns.
    assert_eq!(target(25.0, 3), 38 * US);
    // cwnd 100 = fs_max_cwnd: 10000 − 10000 = 0.
    assert_eq!(target(100.0, 3), 28 * US);
    // cwnd 400, above fs_max_cwnd: 5000 − 10000 < 0, clamped to 0.
    assert_eq!(target(400.0, 3), 28 * US);
    // The defaults: whatever α, fs = fs_range = 100 µs at fs_min_cwnd = 0.1 and 0 at
    // fs_max_cwnd = 256, since α·(1/√fs_min − 1/√fs_max) = fs_range by α's definition.
    let default = |cwnd: f64| Swift::new(SwiftParams { initial_cwnd: cwnd, ..SwiftParams::default() });
    assert_eq!(default(0.1).target_delay(0), 125 * US);
    assert_eq!(default(256.0).target_delay(0), 25 * US);
    assert_eq!(default(256.0).target_delay(5), 30 * US);
}

#[test]
fn below_the_target_the_window_grows_by_ai_per_window_above_one_segment_and_per_segment_below() {
    // cwnd 4, 2 segments acknowledged, 10 µs < target 65 µs: 4 + 1/4·2 = 4.5.
    let mut swift = Swift::new(scaled(4.0));
    swift.on_ack(T0, 10 * US, 0, 2);
    assert_cwnd(&swift, 4.5);
    // At exactly 1 the per-window rule applies: 1 + 1/1·1 = 2.
    let mut swift = Swift::new(scaled(1.0));
    swift.on_ack(T0, 10 * US, 0, 1);
    assert_cwnd(&swift, 2.0);
    // ai = 0.5 below one segment: 0.25 + 0.5·1 = 0.75 (not 0.25 + 0.5/0.25 = 2.25), then
    // 0.75 + 0.5·2 = 1.75, then above one: 1.75 + 0.5/1.75·7 = 1.75 + 2 = 3.75.
    let mut swift = Swift::new(SwiftParams { additive_increase: 0.5, ..scaled(0.25) });
    swift.on_ack(T0, 10 * US, 0, 1);
    assert_cwnd(&swift, 0.75);
    swift.on_ack(T0 + US, 10 * US, 0, 2);
    assert_cwnd(&swift, 1.75);
    swift.on_ack(T0 + 2 * US, 10 * US, 0, 7);
    assert_cwnd(&swift, 3.75);
    assert_eq!(swift.decreases(), 0);
}

#[test]
fn above_the_target_the_window_is_cut_at_most_once_per_rtt() {
    // cwnd 100: target 25 µs (no flow scaling, 0 hops). Delay 50 µs:
    // max(1 − 0.8·(50 − 25)/50, 1 − 0.5) = max(0.6, 0.5) = 0.6: 100·0.6 = 60.
    let mut swift = Swift::new(scaled(100.0));
    swift.on_ack(T0, 50 * US, 0, 1);
    assert_cwnd(&swift, 60.0);
    assert_eq!((swift.decreases(), swift.last_decrease()), (1, Some(T0)));
    // 49 µs later, less than the 50 µs RTT: no second cut.
    swift.on_ack(T0 + 49 * US, 50 * US, 0, 1);
    assert_cwnd(&swift, 60.0);
    // One RTT later: target at cwnd 60 = 25000 + round(100000/√60 − 10000)
    // = 25000 + round(12909.944 − 10000) = 27910 ns;
    // 1 − 0.8·(50000 − 27910)/50000 = 1 − 0.35344 = 0.64656: 60·0.64656 = 38.7936.
    assert_eq!(swift.target_delay(0), Duration::from_nanos(27_910));
    swift.on_ack(T0 + 50 * US, 50 * US, 0, 1);
    assert_cwnd(&swift, 38.7936);
    assert_eq!((swift.decreases(), swift.last_decrease()), (2, Some(T0 + 50 * US)));
}

#[test]
fn a_cut_removes_at_most_max_mdf() {
    // Delay 500 µs against 25 µs: 1 − 0.8·475/500 = 0.24 < 1 − 0.5: 100·0.5 = 50.
    let mut swift = Swift::new(scaled(100.0));
    swift.on_ack(T0, 500 * US, 0, 1);
    assert_cwnd(&swift, 50.0);
    // max_mdf 0.9 lets the same delay cut to 100·0.24 = 24.
    let mut swift = Swift::new(SwiftParams { max_mdf: 0.9, ..scaled(100.0) });
    swift.on_ack(T0, 500 * US, 0, 1);
    assert_cwnd(&swift, 24.0);
}

#[test]
fn below_one_segment_the_sender_paces_one_segment_per_rtt_over_cwnd() {
    // 20 µs / 0.25 = 80 µs; 33 µs / 0.5 = 66 µs; none from one segment up.
    assert_eq!(Swift::new(scaled(0.25)).pacing_interval(20 * US), Some(80 * US));
    assert_eq!(Swift::new(scaled(0.5)).pacing_interval(33 * US), Some(66 * US));
    assert_eq!(Swift::new(scaled(1.0)).pacing_interval(20 * US), None);
}

#[test]
fn timeouts_cut_by_max_mdf_then_drop_to_min_cwnd_and_an_ack_resets_the_count() {
    let params = SwiftParams { initial_cwnd: 10.0, ..SwiftParams::default() };
    let mut swift = Swift::new(params);
    // 10 µs is below any default target (≥ 25 µs): 10 + 1/10 = 10.1; the RTT is now 10 µs.
    swift.on_ack(T0, 10 * US, 0, 1);
    assert_cwnd(&swift, 10.1);
    // First timeout, no decrease yet: 10.1·(1 − 0.5) = 5.05.
    swift.on_retransmit_timeout(T0 + US);
    assert_cwnd(&swift, 5.05);
    // Second, 1 µs after that decrease (< 10 µs): no cut.
    swift.on_retransmit_timeout(T0 + 2 * US);
    assert_cwnd(&swift, 5.05);
    assert_eq!(swift.retransmits(), 2);
    // Third = retransmit_reset_threshold: min_cwnd, guard or not.
    swift.on_retransmit_timeout(T0 + 3 * US);
    assert_cwnd(&swift, 0.01);
    // 10 µs / 0.01 = 1 ms between segments.
    assert_eq!(swift.pacing_interval(10 * US), Some(Duration::from_millis(1)));
    // An ACK resets the count; below one segment: 0.01 + 1·1 = 1.01.
    swift.on_ack(T0 + 20 * US, 10 * US, 0, 1);
    assert_cwnd(&swift, 1.01);
    assert_eq!(swift.retransmits(), 0);
    // Before any ACK no RTT is known and every timeout below the threshold cuts: 10·0.5 = 5,
    // then 5·0.5 = 2.5 at the same instant, then min_cwnd.
    let mut swift = Swift::new(params);
    swift.on_retransmit_timeout(T0);
    swift.on_retransmit_timeout(T0);
    assert_cwnd(&swift, 2.5);
    swift.on_retransmit_timeout(T0);
    assert_cwnd(&swift, 0.01);
    assert_eq!(swift.decreases(), 3);
}

#[test]
fn fast_recovery_cuts_by_max_mdf_once_per_rtt() {
    let mut swift = Swift::new(SwiftParams { initial_cwnd: 10.0, ..SwiftParams::default() });
    swift.on_ack(T0, 10 * US, 0, 1); // 10.1, RTT 10 µs
    swift.on_retransmit_timeout(T0 + US); // 5.05
    swift.on_fast_recovery(T0 + 2 * US);
    assert_cwnd(&swift, 5.05);
    assert_eq!(swift.retransmits(), 0, "fast recovery resets the timeout count");
    // 10 µs after the last decrease: 5.05·0.5 = 2.525.
    swift.on_fast_recovery(T0 + 11 * US);
    assert_cwnd(&swift, 2.525);
}

#[test]
fn the_window_stays_within_min_cwnd_and_max_cwnd() {
    // At max_cwnd (256) an increase changes nothing.
    let mut swift = Swift::new(SwiftParams { initial_cwnd: 256.0, ..SwiftParams::default() });
    swift.on_ack(T0, 10 * US, 0, 64);
    assert_cwnd(&swift, 256.0);
    // 0.012 cut by half is 0.006, clamped to min_cwnd 0.01.
    let mut swift = Swift::new(SwiftParams { initial_cwnd: 0.012, ..SwiftParams::default() });
    swift.on_ack(T0, Duration::from_millis(10), 0, 1);
    assert_cwnd(&swift, 0.01);
    assert_eq!(swift.decreases(), 1);
    // At min_cwnd a cut changes nothing and is no decrease.
    let mut swift = Swift::new(SwiftParams { initial_cwnd: 0.01, ..SwiftParams::default() });
    swift.on_ack(T0, Duration::from_millis(10), 0, 1);
    assert_cwnd(&swift, 0.01);
    assert_eq!((swift.decreases(), swift.last_decrease()), (0, None));
}

#[test]
fn validate_names_the_key_and_the_reason() {
    let ok = SwiftParams::default();
    assert_eq!(ok.validate(), Ok(()));
    let bad = |params: SwiftParams| params.validate().unwrap_err();
    assert_eq!(bad(SwiftParams { base_target: Duration::ZERO, ..ok }), "base_target must be at least 1ns");
    assert_eq!(bad(SwiftParams { fs_min_cwnd: 0.0, ..ok }), "fs_min_cwnd 0 must be above 0");
    assert_eq!(bad(SwiftParams { fs_max_cwnd: 0.1, ..ok }), "fs_max_cwnd 0.1 must be above fs_min_cwnd 0.1");
    assert_eq!(bad(SwiftParams { additive_increase: 0.0, ..ok }), "additive_increase 0 must be above 0");
    assert_eq!(bad(SwiftParams { beta: 1.2, ..ok }), "beta 1.2 must be in (0, 1]");
    assert_eq!(bad(SwiftParams { max_mdf: 1.0, ..ok }), "max_mdf 1 must be in (0, 1)");
    assert_eq!(bad(SwiftParams { min_cwnd: 0.0, ..ok }), "min_cwnd 0 must be above 0");
    assert_eq!(bad(SwiftParams { max_cwnd: 0.001, ..ok }), "max_cwnd 0.001 must not be below min_cwnd 0.01");
    assert_eq!(
        bad(SwiftParams { initial_cwnd: 300.0, ..ok }),
        "initial_cwnd 300 must be within [min_cwnd, max_cwnd] = [0.01, 256]"
    );
    assert_eq!(
        bad(SwiftParams { retransmit_reset_threshold: 0, ..ok }),
        "retransmit_reset_threshold must be at least 1"
    );
    let edges = SwiftParams { beta: 1.0, min_cwnd: 1.0, max_cwnd: 1.0, initial_cwnd: 1.0, ..ok };
    assert_eq!(edges.validate(), Ok(()));
}
