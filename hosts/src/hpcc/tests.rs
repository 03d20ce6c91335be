//! Every expected value is worked out here from the control law's equations (the module's
//! doc, the paper's Algorithm 1, `rdma-hw.cc`'s `UpdateRateHp`), never by calling the
//! implementation. The setting throughout: a 100 Gbit/s NIC, base RTT T = 10 µs, so the
//! BDP W = 100e9 × 10e-6 / 8 = 125 000 bytes and a hop at B = 100 Gbit/s contributes
//! q × R_line / B / W = q / 125 000 for a queue of q bytes; η = 0.95, R_AI = 40 Mbit/s.
//! Rates are truncated to whole bit/s after Rc/max_c, as ns-3's `DataRate`.

use super::*;

const LINE: u64 = 100_000_000_000;
const T_NS: u64 = 10_000;
const R_AI: u64 = 40_000_000;
const GBPS_100: BitRate = BitRate::gbps(100);

fn hpcc(params: HpccParams) -> Hpcc {
    Hpcc::new(params, GBPS_100, Duration::from_nanos(T_NS))
}

fn record(timestamp_ns: u64, tx_bytes: u32, queue_bytes: u32) -> HopRecord {
    HopRecord { timestamp_ns, tx_bytes, queue_bytes, link: GBPS_100 }
}

fn assert_close(actual: f64, expected: f64) {
    assert!((actual - expected).abs() < 1e-12, "{actual} != {expected}");
}

#[test]
fn the_first_ack_only_stores_its_records() {
    let mut cc = hpcc(HpccParams::default());
    // As the simulator's queue pair starts: line rate, U = 1, stage 0, window = the BDP.
    assert_eq!(cc.rate().bps(), LINE);
    assert_eq!(cc.window_bytes(), 125_000);
    assert_eq!(cc.utilization(), 1.0);
    // A record of a full queue: were it measured against anything, the rate would drop.
    cc.on_ack(1_000, 10_000, &[record(1_000_000, 5_000_000, 4_000_000)]);
    assert_eq!(cc.rate().bps(), LINE);
    assert_eq!(cc.reference_rate().bps(), LINE);
    assert_eq!(cc.utilization(), 1.0);
    assert_eq!(cc.stage(), 0);
    assert_eq!(cc.window_bytes(), 125_000);
}

#[test]
fn one_hop_two_acks_set_u_max_c_and_the_rate() {
    let mut cc = hpcc(HpccParams::default());
    cc.on_ack(1_000, 10_000, &[record(1_000_000, 5_000_000, 25_000)]);
    // τ = 5 000 ns; Δbytes = 59 375: txRate = 59 375 × 8 / 5 µs = 95 Gbit/s, txRate/B = 0.95.
    // min(q, q_prev) = min(50 000, 25 000) = 25 000: 25 000 / 125 000 = 0.2. u = 1.15.
    // U = (1 × (10 000 − 5 000) + 1.15 × 5 000) / 10 000 = 1.075 = 43/40.
    // max_c = 1.075 / 0.95 ≥ 1: R = Rc / max_c + R_AI = 100e9 × 0.95 / 1.075 + 40e6
    //       = 88 372 093 023.26 → 88 372 093 023 + 40 000 000 = 88 412 093 023.
    cc.on_ack(11_000, 20_000, &[record(1_005_000, 5_059_375, 50_000)]);
    assert_close(cc.utilization(), 1.075);
    assert_eq!(cc.rate().bps(), 88_412_093_023);
    assert_eq!(cc.reference_rate().bps(), 88_412_093_023, "acked 11 000 > snd_nxt 10 000: a commit");
    assert_eq!(cc.stage(), 0);
}

#[test]
fn the_most_loaded_of_two_hops_decides_with_its_own_tau() {
    let mut cc = hpcc(HpccParams::default());
    let slow = BitRate::gbps(25);
    let first = [record(0, 0, 0), HopRecord { timestamp_ns: 500_000, tx_bytes: 0, queue_bytes: 12_500, link: slow }];
    cc.on_ack(1_000, 10_000, &first);
    // Hop 0 at 100 Gbit/s: τ = 4 000 ns, Δbytes = 25 000 → 50 Gbit/s, 0.5; no queue: u = 0.5.
    // Hop 1 at 25 Gbit/s: τ = 8 000 ns, Δbytes = 24 000 → 24 Gbit/s, 24/25 = 0.96; queue
    // min(12 500, 20 000) = 12 500: 12 500 × 100e9 / 25e9 / 125 000 = 0.4; u = 1.36.
    // Hop 1 decides, with its τ: U = (1 × 2 000 + 1.36 × 8 000) / 10 000 = 1.288.
    // (Hop 1's u with hop 0's τ would give (6 000 + 1.36 × 4 000) / 10 000 = 1.144.)
    // R = 100e9 × 0.95 / 1.288 + 40e6 = 73 757 763 975.16 → 73 757 763 975 + 40e6.
    let second = [
        record(4_000, 25_000, 0),
        HopRecord { timestamp_ns: 508_000, tx_bytes: 24_000, queue_bytes: 20_000, link: slow },
    ];
    cc.on_ack(11_000, 20_000, &second);
    assert_close(cc.utilization(), 1.288);
    assert_eq!(cc.rate().bps(), 73_797_763_975);
}

#[test]
fn fast_reaction_sets_the_rate_not_rc_and_the_next_commit_starts_from_rc() {
    let mut cc = hpcc(HpccParams::default());
    cc.on_ack(1_000, 10_000, &[record(1_000_000, 5_000_000, 25_000)]);
    // The commit of the previous test: U = 1.075, Rc = R = 88 412 093 023; snd_nxt 30 000.
    cc.on_ack(11_000, 30_000, &[record(1_005_000, 5_059_375, 50_000)]);
    let rc = 88_412_093_023;
    assert_eq!(cc.reference_rate().bps(), rc);

    // acked 20 000 ≤ 30 000: fast reaction. τ = 5 000, Δbytes = 62 500 → 100 Gbit/s, 1.0;
    // queue min(100 000, 50 000) = 50 000 → 0.4; u = 1.4.
    // U = (1.075 × 5 000 + 1.4 × 5 000) / 10 000 = 1.2375 = 99/80.
    // R = Rc × 0.95 / 1.2375 + 40e6 = 67 871 909 795.43 → 67 871 909 795 + 40e6.
    cc.on_ack(20_000, 35_000, &[record(1_010_000, 5_121_875, 100_000)]);
    assert_close(cc.utilization(), 1.2375);
    assert_eq!(cc.rate().bps(), 67_911_909_795);
    assert_eq!(cc.reference_rate().bps(), rc, "fast reaction leaves Rc alone");

    // acked 31 000 > 30 000: a commit. τ = 5 000, Δbytes = 50 000 → 0.8; queue
    // min(0, 100 000) = 0; u = 0.8. U = (1.2375 × 5 000 + 0.8 × 5 000) / 10 000 = 1.01875.
    // From the committed Rc: R = 88 412 093 023 × 0.95 / 1.01875 + 40e6
    //   = 82 445 632 757.64 → 82 445 632 757 + 40e6 = 82 485 632 757.
    // (From the fast-reaction rate it would be 63 368 897 477.)
    cc.on_ack(31_000, 50_000, &[record(1_015_000, 5_171_875, 0)]);
    assert_close(cc.utilization(), 1.01875);
    assert_eq!(cc.rate().bps(), 82_485_632_757);
    assert_eq!(cc.reference_rate().bps(), 82_485_632_757);
}

#[test]
fn additive_steps_below_eta_count_stages_until_max_stage() {
    let mut cc = hpcc(HpccParams { max_stage: 2, ..HpccParams::default() });
    cc.on_ack(1_000, 10_000, &[record(0, 0, 112_500)]);
    // τ = 20 000 ns, capped at T = 10 000. Δbytes = 250 000 → 100 Gbit/s, 1.0; queue
    // min(100 000, 112 500) = 100 000 → 0.8; u = 1.8.
    // U = (1 × (10 000 − 10 000) + 1.8 × 10 000) / 10 000 = 1.8 (uncapped it would be 2.6).
    // max_c = 1.8 / 0.95 ≥ 1: R = 100e9 × 0.95 / 1.8 + 40e6 = 52 777 777 777.78 → + 40e6.
    cc.on_ack(11_000, 20_000, &[record(20_000, 250_000, 100_000)]);
    assert_close(cc.utilization(), 1.8);
    assert_eq!(cc.rate().bps(), 52_817_777_777);
    assert_eq!(cc.stage(), 0);

    // Then every RTT: τ = T, Δbytes = 75 000 → 60 Gbit/s, 0.6; queue min(…, 0) = 0: U = 0.6.
    // max_c = 0.6 / 0.95 < 1 and stage 0 < 2: R = Rc + R_AI, stage 1; again: stage 2.
    let mut at = (20_000u64, 250_000u32);
    let mut next = |cc: &mut Hpcc, acked: u64| {
        at = (at.0 + T_NS, at.1 + 75_000);
        cc.on_ack(acked, acked + 10_000, &[record(at.0, at.1, 0)]);
    };
    next(&mut cc, 21_000);
    assert_close(cc.utilization(), 0.6);
    assert_eq!((cc.rate().bps(), cc.stage()), (52_817_777_777 + R_AI, 1));
    next(&mut cc, 32_000);
    assert_eq!((cc.rate().bps(), cc.stage()), (52_817_777_777 + 2 * R_AI, 2));
    // Stage 2 ≥ maxStage: multiplicative although U < η:
    // R = 52 897 777 777 × 0.95 / 0.6 + 40e6 = 83 754 814 813.58 → 83 754 814 813 + 40e6.
    next(&mut cc, 43_000);
    assert_close(cc.utilization(), 0.6);
    assert_eq!((cc.rate().bps(), cc.stage()), (83_794_814_813, 0));
}

#[test]
fn the_rate_stays_between_min_rate_and_the_line_rate() {
    let mut cc = hpcc(HpccParams::default());
    cc.on_ack(1_000, 10_000, &[record(0, 0, 4_000_000_000)]);
    // τ = T; queue 4e9 / 125 000 = 32 000 and nothing sent: U = 32 000.
    // R = 100e9 × 0.95 / 32 000 + 40e6 = 2 968 750 + 40 000 000 < 100 Mbit/s: min_rate.
    cc.on_ack(11_000, 20_000, &[record(T_NS, 0, 4_000_000_000)]);
    assert_close(cc.utilization(), 32_000.0);
    assert_eq!(cc.rate().bps(), 100_000_000);
    assert_eq!(cc.window_bytes(), 125, "125 000 × 100e6 / 100e9");
    // The queue drains: τ = T, Δbytes = 75 000 → 0.6, queue min(0, 4e9) = 0: U = 0.6.
    // From Rc = min_rate: R = 100e6 × 0.95 / 0.6 + 40e6 = 158 333 333.33 → 158 333 333 + 40e6.
    cc.on_ack(21_000, 30_000, &[record(2 * T_NS, 75_000, 0)]);
    assert_eq!(cc.rate().bps(), 198_333_333);

    // Below η at the line rate: R = 100e9 × 0.95 / 0.6 + 40e6 > 100e9: the line rate.
    let mut cc = hpcc(HpccParams::default());
    cc.on_ack(1_000, 10_000, &[record(0, 0, 0)]);
    cc.on_ack(11_000, 20_000, &[record(T_NS, 75_000, 0)]);
    assert_close(cc.utilization(), 0.6);
    assert_eq!(cc.rate().bps(), LINE);
    assert_eq!(cc.reference_rate().bps(), LINE);
}

#[test]
fn an_idle_path_leaves_u_as_it_was() {
    let mut cc = hpcc(HpccParams::default());
    cc.on_ack(1_000, 10_000, &[record(1_000_000, 5_000_000, 25_000)]);
    cc.on_ack(11_000, 20_000, &[record(1_005_000, 5_059_375, 50_000)]);
    assert_close(cc.utilization(), 1.075);
    // Nothing sent and no queue: u = 0, and the simulator keeps only a u above 0 (its search
    // starts at U = 0 with a strict >), so τ = 0 and U stays 1.075; the law runs again:
    // R = 88 412 093 023 × 0.95 / 1.075 + 40e6 = 78 131 617 090.09 → 78 131 617 090 + 40e6.
    cc.on_ack(21_000, 30_000, &[record(1_010_000, 5_059_375, 0)]);
    assert_close(cc.utilization(), 1.075);
    assert_eq!(cc.rate().bps(), 78_171_617_090);
}

#[test]
fn counters_wrap() {
    let mut cc = hpcc(HpccParams::default());
    cc.on_ack(1_000, 10_000, &[record(u64::MAX - 4_999, u32::MAX - 9_999, 0)]);
    // τ = 5 000 + 5 000 = 10 000 ns across 2^64; Δbytes = 10 000 + 52 500 = 62 500 across
    // 2^32 → 50 Gbit/s, 0.5; no queue. U = (1 × 0 + 0.5 × 10 000) / 10 000 = 0.5.
    cc.on_ack(11_000, 20_000, &[record(5_000, 52_500, 0)]);
    assert_close(cc.utilization(), 0.5);
}

#[test]
fn the_window_follows_the_rate_when_variable() {
    let fixed = HpccParams { variable_window: false, ..HpccParams::default() };
    for params in [HpccParams::default(), fixed] {
        let mut cc = hpcc(params);
        cc.on_ack(1_000, 10_000, &[record(1_000_000, 5_000_000, 25_000)]);
        cc.on_ack(11_000, 20_000, &[record(1_005_000, 5_059_375, 50_000)]);
        assert_eq!(cc.rate().bps(), 88_412_093_023);
        // BDP × R / line rate = 125 000 × 88 412 093 023 / 100e9 = 110 515.12 → 110 515.
        let expected = if params.variable_window { 110_515 } else { 125_000 };
        assert_eq!(cc.window_bytes(), expected);
    }

    // A 1 ns base RTT: BDP = 100e9 × 1e-9 / 8 = 12.5 → 12 bytes. One record pair 1 ns apart
    // with a 1 200 000-byte queue: 1 200 000 × 100e9 / 100e9 / 12 = 100 000 = U; R =
    // 100e9 × 0.95 / 100 000 + 40e6 = 40 950 000 → min_rate; 12 × 100e6 / 100e9 = 0.012:
    // at least one byte.
    let mut cc = Hpcc::new(HpccParams::default(), GBPS_100, Duration::from_nanos(1));
    assert_eq!(cc.window_bytes(), 12);
    cc.on_ack(1_000, 10_000, &[record(0, 0, 1_200_000)]);
    cc.on_ack(11_000, 20_000, &[record(1, 0, 1_200_000)]);
    assert_close(cc.utilization(), 100_000.0);
    assert_eq!(cc.rate().bps(), 100_000_000);
    assert_eq!(cc.window_bytes(), 1);
}

#[test]
fn without_fast_reaction_acks_between_commits_are_ignored_records_included() {
    let mut cc = hpcc(HpccParams { fast_react: false, ..HpccParams::default() });
    cc.on_ack(1_000, 10_000, &[record(1_000_000, 5_000_000, 30_000)]);
    // acked 5 000 ≤ 10 000: ignored.
    cc.on_ack(5_000, 15_000, &[record(1_005_000, 5_062_500, 0)]);
    assert_eq!((cc.rate().bps(), cc.utilization()), (LINE, 1.0));
    // The commit measures against the first ACK's record: τ = 10 000, Δbytes = 100 000 →
    // 80 Gbit/s, 0.8; queue min(30 000, 30 000) → 0.24; u = 1.04; U = 1.04.
    // (Against the ignored record: τ = 5 000, 0.6 and no queue, U = (5 000 + 3 000)/10 000.)
    // R = 100e9 × 0.95 / 1.04 + 40e6 = 91 346 153 846.15 → 91 346 153 846 + 40e6.
    cc.on_ack(11_000, 20_000, &[record(1_010_000, 5_100_000, 30_000)]);
    assert_close(cc.utilization(), 1.04);
    assert_eq!(cc.rate().bps(), 91_386_153_846);
}

#[test]
fn a_new_path_is_measured_afresh() {
    let mut cc = hpcc(HpccParams::default());
    cc.on_ack(1_000, 10_000, &[record(0, 0, 4_000_000_000)]);
    // Two records where one was stored: stored, nothing measured; a commit all the same, so
    // the next RTT ends at snd_nxt 20 000.
    let slow = BitRate::gbps(25);
    let first = [record(0, 0, 0), HopRecord { timestamp_ns: 500_000, tx_bytes: 0, queue_bytes: 12_500, link: slow }];
    cc.on_ack(11_000, 20_000, &first);
    assert_eq!((cc.rate().bps(), cc.utilization(), cc.stage()), (LINE, 1.0, 0));
    // Measured against those: the two-hop case above, U = 1.288, R = 73 797 763 975; acked
    // 15 000 ≤ 20 000 is a fast reaction, so Rc stays.
    let second = [
        record(4_000, 25_000, 0),
        HopRecord { timestamp_ns: 508_000, tx_bytes: 24_000, queue_bytes: 20_000, link: slow },
    ];
    cc.on_ack(15_000, 25_000, &second);
    assert_close(cc.utilization(), 1.288);
    assert_eq!(cc.rate().bps(), 73_797_763_975);
    assert_eq!(cc.reference_rate().bps(), LINE);
}

#[test]
fn validation_names_the_key_and_the_reason() {
    assert_eq!(HpccParams::default().validate_for(GBPS_100), Ok(()));
    for eta in [0.0, -0.5, 1.01, f64::NAN] {
        let params = HpccParams { target_utilization: eta, ..HpccParams::default() };
        assert_eq!(params.validate(), Err(format!("target_utilization {eta} must be in (0, 1]")));
    }
    let params = HpccParams { target_utilization: 1.0, ..HpccParams::default() };
    assert_eq!(params.validate(), Ok(()));
    let slow = BitRate::mbps(30);
    assert_eq!(
        HpccParams::default().validate_for(slow),
        Err("min_rate 100Mbps must not exceed the line rate 30Mbps".into())
    );
    let params = HpccParams { min_rate: BitRate::mbps(10), ..HpccParams::default() };
    assert_eq!(params.validate_for(slow), Err("rate_ai 40Mbps must not exceed the line rate 30Mbps".into()));
}
