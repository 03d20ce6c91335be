//! Every expected value is computed here from the paper's equations (§3), with exact
//! fractions for α wherever a cut depends on it, never by calling the implementation.

use super::*;
use serde::de::IntoDeserializer;
use serde::de::value::Error as ValueError;

const T0: Instant = Instant::from_nanos(1_000_000);
const LINE: u64 = 40_000_000_000;
const K: Duration = Duration::from_micros(55);
const T: Duration = Duration::from_micros(55);
const B: u64 = 10_000_000;
const F: u32 = 5;
const R_AI: u64 = 40_000_000;
const R_HAI: u64 = 200_000_000;
const MIN_RATE: u64 = 100_000_000;
const US: Duration = Duration::from_micros(1);

/// α as an exact fraction, with g = 1/256.
#[derive(Clone, Copy, Debug)]
struct Alpha {
    num: u128,
    den: u128,
}

impl Alpha {
    const ONE: Alpha = Alpha { num: 1, den: 1 };

    /// α = (1 − g)·α + g.
    fn after_cnp(self) -> Alpha {
        Alpha { num: self.num * 255 + self.den, den: self.den * 256 }.reduced()
    }

    /// α = (1 − g)·α.
    fn decayed(self) -> Alpha {
        Alpha { num: self.num * 255, den: self.den * 256 }.reduced()
    }

    fn reduced(self) -> Alpha {
        let (mut a, mut b) = (self.num, self.den);
        while b != 0 {
            (a, b) = (b, a % b);
        }
        Alpha { num: self.num / a, den: self.den / a }
    }

    fn value(self) -> f64 {
        self.num as f64 / self.den as f64
    }
}

/// RC·(1 − α/2), with RC·α/2 rounded down; never below the minimum rate.
fn cut(rc: u64, alpha: Alpha) -> u64 {
    assert!(alpha.den <= 1 << 32, "α is exact in the implementation only down to 2^-32");
    let reduction = u128::from(rc) * alpha.num / (2 * alpha.den);
    (rc - reduction as u64).max(MIN_RATE)
}

/// One increase event after the stage counts moved to (`bytes`, `timer`): (RC, RT).
fn increase(rc: u64, rt: u64, bytes: u32, timer: u32) -> (u64, u64) {
    let rt = if bytes.max(timer) < F {
        rt // fast recovery
    } else if bytes.min(timer) > F {
        rt + u64::from(bytes.min(timer) - F) * R_HAI // hyper increase
    } else {
        rt + R_AI // additive increase
    };
    let rt = rt.min(LINE);
    ((rc + rt).div_ceil(2), rt)
}

fn phase(bytes: u32, timer: u32) -> RpPhase {
    if bytes.max(timer) < F {
        RpPhase::FastRecovery
    } else if bytes.min(timer) > F {
        RpPhase::HyperActiveIncrease
    } else {
        RpPhase::ActiveIncrease
    }
}

#[track_caller]
fn check(rp: &Dcqcn, rc: u64, rt: u64, alpha: f64) {
    assert_eq!(rp.rate().bps(), rc, "RC");
    assert_eq!(rp.target().bps(), rt, "RT");
    assert!((rp.alpha() - alpha).abs() < 1e-7, "α {} instead of {alpha}", rp.alpha());
}

fn dcqcn(params: DcqcnParams) -> Dcqcn {
    Dcqcn::new(params, BitRate::gbps(40))
}

#[test]
fn one_queue_pair_through_three_cnps_and_its_recovery_follows_the_equations() {
    let mut rp = dcqcn(DcqcnParams::default());
    assert_eq!((rp.phase(), rp.rate().bps(), rp.alpha(), rp.poll_timeout()), (RpPhase::Idle, LINE, 1.0, None));

    // First CNP: RT = RC, RC = RC·(1 − 1/2), α = (1 − g)·1 + g = 1.
    let mut alpha = Alpha::ONE;
    rp.on_cnp(T0);
    let (mut rc, mut rt) = (cut(LINE, alpha), LINE);
    alpha = alpha.after_cnp();
    assert_eq!(rc, 20_000_000_000);
    check(&rp, rc, rt, alpha.value());
    assert_eq!(rp.phase(), RpPhase::FastRecovery);

    // Second CNP 10 µs later: halved again; the timers restart from it.
    let second = T0 + 10 * US;
    rp.on_cnp(second);
    (rc, rt) = (cut(rc, alpha), rc);
    alpha = alpha.after_cnp();
    assert_eq!((rc, rt), (10_000_000_000, 20_000_000_000));
    check(&rp, rc, rt, alpha.value());
    assert_eq!(rp.cnps(), 2);
    assert_eq!(rp.poll_timeout(), Some(second + K), "K = T = 55 µs after the last CNP");

    // K later without a CNP: α decays; the timer fires too (fast recovery).
    rp.handle_timeout(second + K);
    alpha = alpha.decayed();
    (rc, rt) = increase(rc, rt, 0, 1);
    assert_eq!(rc, 15_000_000_000);
    check(&rp, rc, rt, alpha.value());
    assert_eq!(alpha.value(), 255.0 / 256.0);

    // B bytes: the byte counter fires (fast recovery).
    rp.on_sent(B - 1);
    check(&rp, rc, rt, alpha.value());
    rp.on_sent(1);
    (rc, rt) = increase(rc, rt, 1, 1);
    assert_eq!(rc, 17_500_000_000);
    check(&rp, rc, rt, alpha.value());

    // Third CNP, with α < 1 now: RC·(1 − α/2) rounded up to the bit per second.
    let third = T0 + 100 * US;
    rp.on_cnp(third);
    (rc, rt) = (cut(rc, alpha), rc);
    alpha = alpha.after_cnp();
    assert_eq!(rc, 17_500_000_000 - 8_715_820_312, "17.5 G · 255/512 = 8 715 820 312.5");
    assert_eq!((alpha.num, alpha.den), (65_281, 65_536));
    check(&rp, rc, rt, alpha.value());
    assert_eq!(rp.phase(), RpPhase::FastRecovery);

    // Recovery: the timer (with α's decay, both every 55 µs) and B bytes between its
    // firings, until RC is back at the line rate and the limiter is released.
    let mut alpha = alpha.value();
    let (mut bytes, mut timer) = (0, 0);
    let mut now = third;
    for _ in 0..100 {
        now += T;
        assert_eq!(rp.poll_timeout(), Some(now));
        rp.handle_timeout(now);
        alpha *= 255.0 / 256.0;
        timer += 1;
        (rc, rt) = increase(rc, rt, bytes, timer);
        check(&rp, rc, rt, alpha);
        if rc == LINE {
            break;
        }
        assert_eq!(rp.phase(), phase(bytes, timer));
        rp.on_sent(B);
        bytes += 1;
        (rc, rt) = increase(rc, rt, bytes, timer);
        check(&rp, rc, rt, alpha);
        if rc == LINE {
            break;
        }
        assert_eq!(rp.phase(), phase(bytes, timer));
    }
    assert_eq!((rc, rt), (LINE, LINE));
    assert!(bytes > F && timer > F, "hyper increase took it there");
    assert_eq!(rp.phase(), RpPhase::Idle, "released at line rate");
    assert_eq!(rp.poll_timeout(), Some(now + K), "only α's timer is left");
}

#[test]
fn alpha_decays_by_one_minus_g_per_k_without_cnps() {
    // A long rate-increase period keeps the rate timer out of the way.
    let params = DcqcnParams { rate_increase_period: Duration::from_secs(1), ..DcqcnParams::default() };
    let mut rp = dcqcn(params);
    // No α timer before the first CNP: α stays at its initial value.
    rp.handle_timeout(T0 + Duration::from_secs(1));
    assert_eq!((rp.alpha(), rp.poll_timeout()), (1.0, None));

    rp.on_cnp(T0);
    assert_eq!(rp.alpha(), 1.0);
    assert_eq!(rp.poll_timeout(), Some(T0 + K));
    rp.handle_timeout(T0 + (K - Duration::from_nanos(1)));
    assert_eq!(rp.alpha(), 1.0, "not yet K");
    rp.handle_timeout(T0 + K);
    assert_eq!(rp.alpha(), 255.0 / 256.0);
    assert_eq!(rp.poll_timeout(), Some(T0 + 2 * K));
    // A late call applies every period that ended.
    rp.handle_timeout(T0 + 3 * K);
    let three = Alpha::ONE.decayed().decayed().decayed();
    assert_eq!(rp.alpha(), three.value());
    assert_eq!(rp.alpha(), 255f64.powi(3) / 256f64.powi(3));

    // A CNP restarts the α timer: K after it, not at the old period's end.
    let cnp = T0 + 3 * K + 20 * US;
    rp.on_cnp(cnp);
    let after = three.after_cnp();
    assert_eq!(rp.alpha(), after.value());
    assert_eq!(rp.poll_timeout(), Some(cnp + K));
    rp.handle_timeout(T0 + 4 * K);
    assert_eq!(rp.alpha(), after.value());

    // A hundred periods later: α·(1 − g)^100 (the fixed point loses at most 2^-32 a step).
    rp.handle_timeout(cnp + 100 * K);
    let expected = after.value() * (255.0f64 / 256.0).powi(100);
    assert!((rp.alpha() - expected).abs() < 1e-7, "{} instead of {expected}", rp.alpha());
    assert_eq!(rp.poll_timeout(), Some(cnp + 101 * K));
}

#[test]
fn the_alpha_timer_outlives_the_limiter_and_stops_once_alpha_is_zero() {
    // The α timer keeps running after the limiter is released at line rate.
    let params = DcqcnParams { byte_counter: ByteSize(1_000), ..DcqcnParams::default() };
    let mut rp = dcqcn(params);
    rp.on_cnp(T0);
    rp.on_sent(1_000 * 100);
    assert_eq!((rp.phase(), rp.rate().bps()), (RpPhase::Idle, LINE));
    assert_eq!(rp.poll_timeout(), Some(T0 + K), "the rate timer is gone, α's is not");
    rp.handle_timeout(T0 + 2 * K);
    assert_eq!(rp.alpha(), (255.0f64 / 256.0).powi(2));
    assert_eq!(rp.rate().bps(), LINE);

    // With g = 1 one decay takes α to 0, where decays change nothing: the α timer stops.
    let params =
        DcqcnParams { g: Fraction::ONE, rate_increase_period: Duration::from_secs(1), ..DcqcnParams::default() };
    let mut rp = dcqcn(params);
    rp.on_cnp(T0);
    assert_eq!(rp.alpha(), 1.0);
    rp.handle_timeout(T0 + K);
    assert_eq!(rp.alpha(), 0.0);
    assert_eq!(rp.poll_timeout(), Some(T0 + Duration::from_secs(1)), "only the rate timer");
    // With α = 0 a CNP does not cut (RC·(1 − 0/2)) but restarts fast recovery and α.
    rp.on_cnp(T0 + 2 * K);
    assert_eq!((rp.rate().bps(), rp.target().bps()), (LINE / 2, LINE / 2));
    assert_eq!(rp.phase(), RpPhase::FastRecovery);
    assert_eq!(rp.alpha(), 1.0);
    assert_eq!(rp.poll_timeout(), Some(T0 + 3 * K));
}

#[test]
fn fast_recovery_then_additive_then_hyper_increase_with_the_timer_and_the_byte_counter() {
    let params = DcqcnParams {
        byte_counter: ByteSize(1_000),
        rate_increase_period: 10 * US,
        alpha_update_period: Duration::from_secs(1),
        ..DcqcnParams::default()
    };
    let mut rp = dcqcn(params);
    rp.on_cnp(T0);
    rp.on_cnp(T0); // α is still 1: RT = 20 G, RC = 10 G.
    let (mut rc, mut rt) = (10_000_000_000, 20_000_000_000);
    check(&rp, rc, rt, 1.0);

    // Four timer cycles of fast recovery: RT stays, RC halves the gap.
    for timer in 1..=4 {
        let at = T0 + timer * 10 * US;
        assert_eq!(rp.poll_timeout(), Some(at));
        rp.handle_timeout(at);
        (rc, rt) = increase(rc, rt, 0, timer);
        check(&rp, rc, rt, 1.0);
        assert_eq!(rt, 20_000_000_000);
        assert_eq!(rp.phase(), RpPhase::FastRecovery);
    }
    // The fifth: additive increase, RT += R_AI.
    rp.handle_timeout(T0 + 50 * US);
    (rc, rt) = increase(rc, rt, 0, 5);
    assert_eq!(rt, 20_000_000_000 + R_AI);
    check(&rp, rc, rt, 1.0);
    assert_eq!(rp.phase(), RpPhase::ActiveIncrease);
    // Unlike QCN the timer keeps its whole period after fast recovery.
    assert_eq!(rp.poll_timeout(), Some(T0 + 60 * US));

    // The byte counter: one timer count at F is enough for additive increase.
    rp.on_sent(999);
    check(&rp, rc, rt, 1.0);
    rp.on_sent(1);
    (rc, rt) = increase(rc, rt, 1, 5);
    check(&rp, rc, rt, 1.0);
    // Whole cycles here too: 999 bytes are not a cycle.
    rp.on_sent(999);
    check(&rp, rc, rt, 1.0);
    rp.on_sent(1);
    (rc, rt) = increase(rc, rt, 2, 5);
    check(&rp, rc, rt, 1.0);
    // Byte counts 3 to 6 with the timer at 5: still additive (min = 5 is not past F).
    rp.on_sent(4_000);
    for bytes in 3..=6 {
        (rc, rt) = increase(rc, rt, bytes, 5);
    }
    check(&rp, rc, rt, 1.0);
    assert_eq!(rt, 20_000_000_000 + 7 * R_AI);
    assert_eq!(rp.phase(), RpPhase::ActiveIncrease);

    // The sixth timer cycle: both counts past F, hyper increase with i = 6 − 5 = 1.
    rp.handle_timeout(T0 + 60 * US);
    (rc, rt) = increase(rc, rt, 6, 6);
    assert_eq!(rt, 20_000_000_000 + 7 * R_AI + R_HAI);
    check(&rp, rc, rt, 1.0);
    assert_eq!(rp.phase(), RpPhase::HyperActiveIncrease);
    // Byte count 7, timer 6: i = min − F = 1; then timer 7: i = 2.
    rp.on_sent(1_000);
    (rc, rt) = increase(rc, rt, 7, 6);
    assert_eq!(rt, 20_000_000_000 + 7 * R_AI + 2 * R_HAI);
    check(&rp, rc, rt, 1.0);
    assert_eq!(rp.poll_timeout(), Some(T0 + 70 * US));
    rp.handle_timeout(T0 + 70 * US);
    (rc, rt) = increase(rc, rt, 7, 7);
    assert_eq!(rt, 20_000_000_000 + 7 * R_AI + 4 * R_HAI);
    check(&rp, rc, rt, 1.0);

    // A CNP restarts fast recovery; the byte counter alone takes it to additive increase.
    let cnp = T0 + 75 * US;
    rp.on_cnp(cnp);
    (rc, rt) = (cut(rc, Alpha::ONE), rc);
    check(&rp, rc, rt, 1.0);
    assert_eq!(rp.poll_timeout(), Some(cnp + 10 * US), "the timer restarts at the CNP");
    for bytes in 1..=5 {
        assert_eq!(rp.phase(), RpPhase::FastRecovery);
        rp.on_sent(1_000);
        (rc, rt) = increase(rc, rt, bytes, 0);
        check(&rp, rc, rt, 1.0);
    }
    assert_eq!(rp.phase(), RpPhase::ActiveIncrease);
}

#[test]
fn never_below_the_minimum_rate_never_above_the_line_rate_and_released_there() {
    let mut rp = dcqcn(DcqcnParams::default());
    // α stays 1 under back-to-back CNPs: each halves RC, down to the minimum rate.
    let mut rc = LINE;
    for _ in 0..20 {
        rp.on_cnp(T0);
        rc = cut(rc, Alpha::ONE);
        assert_eq!(rp.rate().bps(), rc);
    }
    assert_eq!((rp.rate().bps(), rp.target().bps()), (MIN_RATE, MIN_RATE));

    // Both counters drive it back; RC ≤ RT ≤ the line rate throughout.
    let mut now = T0;
    while rp.phase() != RpPhase::Idle {
        now += T;
        rp.handle_timeout(now);
        rp.on_sent(B);
        assert!(rp.rate().bps() >= MIN_RATE);
        assert!(rp.rate() <= rp.target() && rp.target().bps() <= LINE);
        assert!(now < T0 + Duration::from_secs(1), "recovers well within a second");
    }
    assert_eq!((rp.rate().bps(), rp.target().bps()), (LINE, LINE));
    // Released: no rate timer, and neither bytes nor time change the rate.
    let alpha_timer = rp.poll_timeout().expect("α's timer");
    assert_eq!(alpha_timer, now + K);
    rp.on_sent(B * 100);
    rp.handle_timeout(now + 100 * T);
    assert_eq!((rp.rate().bps(), rp.target().bps(), rp.phase()), (LINE, LINE, RpPhase::Idle));

    // A minimum above the line rate stops at the line rate.
    let high = DcqcnParams { min_rate: BitRate::gbps(100), ..DcqcnParams::default() };
    let mut rp = dcqcn(high);
    rp.on_cnp(T0);
    assert_eq!(rp.rate().bps(), LINE);
}

#[test]
fn validate_names_the_key_and_the_reason() {
    let ok = DcqcnParams::default();
    assert_eq!(ok.validate(), Ok(()));
    assert_eq!(ok.validate_for(BitRate::gbps(40)), Ok(()));
    let bad = |params: DcqcnParams| params.validate().unwrap_err();
    assert_eq!(bad(DcqcnParams { g: Fraction::new(0, 256), ..ok }), "g 0/256 must be in (0, 1]");
    assert_eq!(bad(DcqcnParams { g: Fraction::new(3, 2), ..ok }), "g 3/2 must be in (0, 1]");
    assert_eq!(bad(DcqcnParams { initial_alpha: Fraction::new(5, 4), ..ok }), "initial_alpha 5/4 must be in [0, 1]");
    assert_eq!(
        bad(DcqcnParams { alpha_update_period: Duration::ZERO, ..ok }),
        "alpha_update_period must be at least 1ns"
    );
    assert_eq!(
        bad(DcqcnParams { rate_increase_period: Duration::ZERO, ..ok }),
        "rate_increase_period must be at least 1ns"
    );
    assert_eq!(bad(DcqcnParams { byte_counter: ByteSize(0), ..ok }), "byte_counter must be at least 1 byte");
    let high = DcqcnParams { min_rate: BitRate::gbps(50), ..ok };
    assert_eq!(high.validate(), Ok(()));
    assert_eq!(
        high.validate_for(BitRate::gbps(40)).unwrap_err(),
        "min_rate 50Gbps must not exceed the line rate 40Gbps"
    );
    // The edges are accepted: g = 1, α₀ = 0, one byte, one nanosecond.
    let edges = DcqcnParams {
        g: Fraction::ONE,
        initial_alpha: Fraction::new(0, 1),
        alpha_update_period: Duration::from_nanos(1),
        rate_increase_period: Duration::from_nanos(1),
        byte_counter: ByteSize(1),
        ..ok
    };
    assert_eq!(edges.validate(), Ok(()));
}

#[test]
fn fractions_are_read_and_written_as_p_over_q() {
    let parse = |text: &str| Fraction::deserialize(text.into_deserializer()).map_err(|e: ValueError| e.to_string());
    assert_eq!(parse("1/256"), Ok(Fraction::new(1, 256)));
    assert_eq!(parse(" 5 / 1024 "), Ok(Fraction::new(5, 1024)));
    assert_eq!(parse("1"), Ok(Fraction::ONE));
    assert_eq!(parse("0.5"), Err("`0.5` is not a fraction such as \"1/256\"".into()));
    assert_eq!(parse("1/0"), Err("`1/0` has a zero denominator".into()));
    assert_eq!(Fraction::new(1, 256).to_string(), "1/256");
    assert_eq!(Fraction::ONE.to_string(), "1");
    assert_eq!(DcqcnParams::default().g.to_f64(), 1.0 / 256.0);
}
