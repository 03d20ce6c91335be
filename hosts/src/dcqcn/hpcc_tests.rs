//! The HPCC model (`hpcc_nic.rs`) against `rdma-hw.cc`'s schedule, with run.py's DCQCN
//! settings at 100 Gbit/s: α every 1 µs with g = 1/256, a cut checked every 4 µs, increase
//! every 300 µs with F = 1, R_AI 20 and R_HAI 200 Mbit/s. Expected values are worked out
//! here from that code's arithmetic, not by calling the model.

use super::*;

const T0: Instant = Instant::from_nanos(1_000_000);
const LINE: u64 = 100_000_000_000;
const US: Duration = Duration::from_micros(1);
const NS: Duration = Duration::from_nanos(1);

fn params(clamp: bool) -> DcqcnParams {
    DcqcnParams {
        g: Fraction::new(1, 256),
        alpha_update_period: US,
        rate_increase_period: 300 * US,
        fast_recovery_threshold: 1,
        additive_increase: BitRate::mbps(20),
        hyper_increase: BitRate::mbps(200),
        min_rate: BitRate::gbps(1),
        model: DcqcnModel::Hpcc,
        rate_decrease_period: 4 * US,
        clamp_target_rate: clamp,
        ..DcqcnParams::default()
    }
}

fn nic(clamp: bool) -> Dcqcn {
    Dcqcn::new(params(clamp), BitRate::from_bps(LINE).unwrap())
}

/// Runs every timer up to `until`, recording each change of RC.
fn run(rp: &mut Dcqcn, until: Instant) -> Vec<(Instant, u64)> {
    let mut changes = Vec::new();
    while let Some(at) = rp.poll_timeout().filter(|&at| at <= until) {
        let before = rp.rate().bps();
        rp.handle_timeout(at);
        if rp.rate().bps() != before {
            changes.push((at, rp.rate().bps()));
        }
    }
    changes
}

#[test]
fn the_first_cnp_does_not_cut_the_check_after_it_halves_less_four_decays() {
    let mut rp = nic(false);
    rp.on_cnp(T0);
    assert_eq!((rp.rate().bps(), rp.alpha()), (LINE, 1.0), "α = 1, no cut");
    let changes = run(&mut rp, T0 + 5 * US);
    // Four α updates without a CNP (the first one's flag is cleared), then the cut 1 ns
    // after the fourth: RC·(1 − α/2), truncated to whole bits.
    let alpha = (255.0f64 / 256.0).powi(4);
    assert_eq!(changes, vec![(T0 + 4 * US + NS, (LINE as f64 * (1.0 - alpha / 2.0)) as u64)]);
    assert_eq!(rp.target().bps(), LINE, "the first cut keeps RT (stage 0, no clamp)");
    assert_eq!(rp.phase(), RpPhase::FastRecovery);
}

#[test]
fn cnps_every_microsecond_cut_once_per_decrease_period_on_the_first_cnps_grid() {
    let mut rp = nic(false);
    let mut cuts = Vec::new();
    for us in 0..20 {
        let now = T0 + us * US;
        cuts.extend(run(&mut rp, now));
        rp.on_cnp(now);
    }
    cuts.extend(run(&mut rp, T0 + 40 * US));
    let times: Vec<Instant> = cuts.iter().map(|&(at, _)| at).collect();
    let expected: Vec<Instant> = (1..=5).map(|k| T0 + k * 4 * US + NS).collect();
    assert_eq!(times, expected, "the CNP at 19 µs cuts at 20 µs, and nothing after it");
    assert!(cuts.windows(2).all(|pair| pair[1].1 < pair[0].1));
}

#[test]
fn increases_are_fast_recovery_below_f_one_additive_step_at_f_then_hyper_steps() {
    let mut rp = nic(true);
    rp.on_cnp(T0);
    run(&mut rp, T0 + 5 * US);
    let cut_at = T0 + 4 * US + NS;
    let (cut, target) = (rp.rate().bps(), rp.target().bps());
    assert_eq!(target, LINE, "clamped to RC before the cut, the line rate");
    // Pull RT below the line so that the steps show: a second cut, clamped to RC.
    rp.on_cnp(cut_at + US);
    run(&mut rp, cut_at + 5 * US);
    let second_at = cut_at + 4 * US;
    assert_eq!(rp.target().bps(), cut, "clamp on: RT = RC at every cut");
    let mut rc = rp.rate().bps();
    let mut rt = cut;
    let steps = [0, 20_000_000, 200_000_000, 200_000_000];
    for (stage, step) in steps.into_iter().enumerate() {
        run(&mut rp, second_at + 300 * US * (stage as u32 + 1));
        rt = (rt + step).min(LINE);
        rc = rc / 2 + rt / 2;
        assert_eq!((rp.target().bps(), rp.rate().bps()), (rt, rc), "stage {stage}");
    }
    assert_eq!(rp.phase(), RpPhase::HyperActiveIncrease);
}

#[test]
fn without_clamping_a_cut_before_any_increase_keeps_the_target() {
    let mut rp = nic(false);
    rp.on_cnp(T0);
    run(&mut rp, T0 + 5 * US);
    rp.on_cnp(T0 + 6 * US);
    run(&mut rp, T0 + 9 * US);
    assert_eq!(rp.target().bps(), LINE, "two cuts, no increase between: RT stays");
    assert!(rp.rate().bps() < LINE);
}
