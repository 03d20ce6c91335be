//! Every expected value is worked out here from Algorithm 1's equations (defaults: δ = 10
//! Mbit/s, N·δ = 50 Mbit/s, T_low = 50 µs, T_high = 500 µs, β = 0.8, α = 0.875, minRTT = 20
//! µs, min_rate = 100 Mbit/s, line rate 10 Gbit/s), never by calling the implementation.

use super::*;

const T0: Instant = Instant::from_nanos(1_000_000);
const LINE: f64 = 10e9;
const US: Duration = Duration::from_micros(1);

fn timely(params: TimelyParams) -> Timely {
    Timely::new(params, BitRate::gbps(10))
}

/// A connection already at `rate` bit/s (set directly, as if earlier samples had brought it
/// there), with prev_rtt seeded by a first sample of `first` µs at T0.
fn at_rate(params: TimelyParams, rate: f64, first: u32) -> Timely {
    let mut t = timely(params);
    t.rate = rate;
    t.on_rtt(T0, first * US);
    t
}

#[track_caller]
fn assert_rate(t: &Timely, expected: f64) {
    let got = t.rate().bps() as f64;
    assert!((got - expected).abs() <= 1.0, "rate {got} bit/s, expected {expected}");
}

#[test]
fn the_first_sample_only_seeds_prev_rtt() {
    let mut t = timely(TimelyParams::default());
    assert_eq!(t.rate(), BitRate::gbps(10), "a connection starts at the line rate");
    // 600 µs > T_high would cut, but there is no previous RTT to take a difference from.
    t.on_rtt(T0, 600 * US);
    assert_eq!(t.rate(), BitRate::gbps(10));
    assert_eq!((t.rtt_diff(), t.gradient(), t.updates()), (0.0, 0.0, 1));
}

#[test]
fn rtt_diff_is_an_ewma_of_successive_differences_normalised_by_min_rtt() {
    // All samples between T_low and T_high: the gradient decides.
    let mut t = at_rate(TimelyParams::default(), 5e9, 100);
    // new_rtt_diff = 120 − 100 = 20 µs; rtt_diff = 0.125·0 + 0.875·20000 = 17500 ns;
    // gradient = 17500 / 20000 = 0.875 > 0: R = 5e9·(1 − 0.8·0.875) = 5e9·0.3 = 1.5e9.
    t.on_rtt(T0 + 10 * US, 120 * US);
    assert_eq!(t.rtt_diff(), 17_500.0);
    assert_eq!(t.gradient(), 0.875);
    assert_rate(&t, 1.5e9);
    // new_rtt_diff = 110 − 120 = −10 µs; rtt_diff = 0.125·17500 + 0.875·(−10000)
    // = 2187.5 − 8750 = −6562.5 ns; gradient = −0.328125 ≤ 0: R = 1.5e9 + δ = 1.51e9.
    t.on_rtt(T0 + 20 * US, 110 * US);
    assert_eq!(t.rtt_diff(), -6_562.5);
    assert_eq!(t.gradient(), -0.328125);
    assert_rate(&t, 1.51e9);
    // new_rtt_diff = 130 − 110 = 20 µs; rtt_diff = 0.125·(−6562.5) + 0.875·20000
    // = −820.3125 + 17500 = 16679.6875 ns; gradient = 0.833984375;
    // R = 1.51e9·(1 − 0.8·0.833984375) = 1.51e9·0.3328125 = 502546875.
    t.on_rtt(T0 + 30 * US, 130 * US);
    assert_eq!(t.rtt_diff(), 16_679.687_5);
    assert_eq!(t.gradient(), 0.833_984_375);
    assert_rate(&t, 502_546_875.0);
}

#[test]
fn below_t_low_the_rate_grows_by_delta_whatever_the_gradient() {
    let mut t = at_rate(TimelyParams::default(), 5e9, 10);
    // new_rtt_diff = 45 − 10 = 35 µs; rtt_diff = 0.875·35000 = 30625 ns; gradient = 1.53125,
    // positive, but 45 µs < T_low: R = 5e9 + 10e6.
    t.on_rtt(T0 + US, 45 * US);
    assert_eq!(t.gradient(), 1.531_25);
    assert_rate(&t, 5.01e9);
    assert_eq!(t.hai_streak(), 0, "a positive gradient is not part of a HAI streak");
}

#[test]
fn above_t_high_the_cut_follows_the_rtt_whatever_the_gradient() {
    // Rising: 100 µs then 600 µs > T_high: R = 10e9·(1 − 0.8·(1 − 500/600)) = 10e9·(1 − 0.8/6)
    // = 10e9·13/15 = 8666666666.67.
    let mut t = timely(TimelyParams::default());
    t.on_rtt(T0, 100 * US);
    t.on_rtt(T0 + US, 600 * US);
    assert_rate(&t, LINE * 13.0 / 15.0);
    // Falling: 1000 µs then 800 µs: rtt_diff = 0.875·(−200000) < 0, yet 800 µs > T_high:
    // R = 10e9·(1 − 0.8·(1 − 500/800)) = 10e9·(1 − 0.8·0.375) = 7e9.
    let mut t = timely(TimelyParams::default());
    t.on_rtt(T0, 1000 * US);
    t.on_rtt(T0 + US, 800 * US);
    assert_eq!(t.rtt_diff(), -175_000.0);
    assert_rate(&t, 7e9);
}

#[test]
fn five_non_positive_gradients_in_a_row_switch_to_hyperactive_increase() {
    let mut t = at_rate(TimelyParams::default(), 1e9, 200);
    // RTTs 199, 198, …, 194 µs: each new_rtt_diff = −1000 ns, so
    // rtt_diff₁ = 0.875·(−1000) = −875 and rtt_diffₖ₊₁ = 0.125·rtt_diffₖ − 875 < 0: every
    // gradient is negative. Events 1–4: +δ each; event 5 (five in a row): +N·δ; event 6: +N·δ.
    let expected = [1.01e9, 1.02e9, 1.03e9, 1.04e9, 1.09e9, 1.14e9];
    for (k, rate) in expected.into_iter().enumerate() {
        t.on_rtt(T0 + (k as u32 + 1) * US, (199 - k as u32) * US);
        assert_rate(&t, rate);
        assert_eq!(t.hai_streak(), k as u32 + 1);
    }
    // rtt_diff₂ = −109.375 − 875 = −984.375; rtt_diff₃ = −123.046875 − 875 = −998.046875.
    // A jump to 300 µs: new_rtt_diff = 106000; rtt_diff ≈ 0.125·(−1000) + 0.875·106000 ≈ 92625;
    // gradient ≈ 4.63: 1 − 0.8·4.63 < 0 floors at 0, and the rate at min_rate (100 Mbit/s).
    t.on_rtt(T0 + 7 * US, 300 * US);
    assert!((t.rtt_diff() - 92_625.0).abs() < 0.01, "{}", t.rtt_diff());
    assert_rate(&t, 100e6);
    assert_eq!(t.hai_streak(), 0, "a positive gradient ends the streak");
    assert_eq!(t.updates(), 8, "every completion event updates");
}

#[test]
fn the_rate_stays_within_min_rate_and_the_line_rate() {
    // At the line rate an increase changes nothing: 30 µs then 20 µs (< T_low).
    let mut t = timely(TimelyParams::default());
    t.on_rtt(T0, 30 * US);
    t.on_rtt(T0 + US, 20 * US);
    assert_eq!(t.rate(), BitRate::gbps(10));
    // A cut below min_rate stops there: from 150 Mbit/s, 100 µs then 120 µs gives
    // gradient 0.875 and R = 150e6·0.3 = 45e6 < 100e6.
    let mut t = at_rate(TimelyParams::default(), 150e6, 100);
    t.on_rtt(T0 + US, 120 * US);
    assert_eq!(t.rate(), BitRate::mbps(100));
    // A min_rate above the line rate stops at the line rate.
    let high = TimelyParams { min_rate: BitRate::gbps(40), ..TimelyParams::default() };
    let mut t = timely(high);
    t.on_rtt(T0, 100 * US);
    t.on_rtt(T0 + US, 600 * US);
    assert_eq!(t.rate(), BitRate::gbps(10));
}

#[test]
fn hpcc_updates_once_per_rtt_and_counts_every_increase_towards_hai() {
    let params = TimelyParams { model: TimelyModel::Hpcc, ..TimelyParams::default() };
    let mut t = at_rate(params, 1e9, 100);
    assert_eq!(t.updates(), 1);
    // Sent at T0 + 50 − 100 µs, before the update at T0: ignored.
    t.on_rtt(T0 + 50 * US, 100 * US);
    assert_eq!((t.updates(), t.rate().bps()), (1, 1_000_000_000));
    // Sent at T0 + 100 − 100 = T0, at the update: counts. new_rtt_diff = 0, rtt_diff = 0,
    // gradient 0 ≤ 0: increase number 1, +δ.
    t.on_rtt(T0 + 100 * US, 100 * US);
    assert_rate(&t, 1.01e9);
    // At T0 + 200 µs, 40 µs (< T_low): new_rtt_diff = 40 − 100 = −60 µs, rtt_diff =
    // 0.875·(−60000) = −52500; increase number 2, +δ.
    t.on_rtt(T0 + 200 * US, 40 * US);
    assert_eq!(t.rtt_diff(), -52_500.0);
    assert_rate(&t, 1.02e9);
    // Sent at T0 + 50 µs, before the update at T0 + 200 µs: ignored, and not prev_rtt.
    t.on_rtt(T0 + 250 * US, 200 * US);
    assert_eq!((t.updates(), t.rtt_diff()), (3, -52_500.0));
    // At T0 + 300 µs, 40 µs: new_rtt_diff = 40 − 40 = 0 (prev_rtt is the last update's),
    // rtt_diff = 0.125·(−52500) = −6562.5; increase number 3.
    t.on_rtt(T0 + 300 * US, 40 * US);
    assert_eq!(t.rtt_diff(), -6_562.5);
    assert_rate(&t, 1.03e9);
    // Increases 4 and 5 by δ; five came before the sixth and seventh: +RATE_HAI each.
    for (k, rate) in [(4, 1.04e9), (5, 1.05e9), (6, 1.10e9), (7, 1.15e9)] {
        t.on_rtt(T0 + k * 100 * US, 40 * US);
        assert_rate(&t, rate);
    }
    assert_eq!(t.hai_streak(), 7);
    // At T0 + 1300 µs, 600 µs, sent at T0 + 700 µs = the last update: counts, and cuts by
    // 1 − 0.8·(1 − 500/600) = 13/15: 1.15e9·13/15 = 996666666.67; the count restarts.
    t.on_rtt(T0 + 1300 * US, 600 * US);
    assert_rate(&t, 1.15e9 * 13.0 / 15.0);
    assert_eq!(t.hai_streak(), 0);
}

#[test]
fn validate_names_the_key_and_the_reason() {
    let ok = TimelyParams::default();
    assert_eq!(ok.validate(), Ok(()));
    assert_eq!(ok.validate_for(BitRate::gbps(10)), Ok(()));
    let bad = |params: TimelyParams| params.validate().unwrap_err();
    assert_eq!(bad(TimelyParams { beta: 0.0, ..ok }), "beta 0 must be in (0, 1]");
    assert_eq!(bad(TimelyParams { beta: 1.5, ..ok }), "beta 1.5 must be in (0, 1]");
    assert_eq!(bad(TimelyParams { alpha: f64::NAN, ..ok }), "alpha NaN must be in (0, 1]");
    assert_eq!(bad(TimelyParams { t_low: 500 * US, ..ok }), "t_low 500us must be below t_high 500us");
    assert_eq!(bad(TimelyParams { min_rtt: Duration::ZERO, ..ok }), "min_rtt must be at least 1ns");
    assert_eq!(bad(TimelyParams { hai_threshold: 0, ..ok }), "hai_threshold must be at least 1");
    assert_eq!(
        ok.validate_for(BitRate::mbps(50)).unwrap_err(),
        "min_rate 100Mbps must not exceed the line rate 50Mbps"
    );
    let edges = TimelyParams { beta: 1.0, alpha: 1.0, min_rtt: Duration::from_nanos(1), hai_threshold: 1, ..ok };
    assert_eq!(edges.validate(), Ok(()));
}
