//! PFC deadlock on the virtual clock: OFC's cyclic-buffer-dependency scenario (Fig. 9) with
//! the OFC paper's switch (configs/ofc-paper.toml, 40 Gbit/s) deadlocks under PFC when all
//! four flows are large, the detector names the cycle, and without the flows that close
//! the cycle every frame arrives; OFC deadlocks no more often than PFC over random splits.

use pfcswitch_link::rng::Rng;
use pfcswitch_link::time::Instant;
use pfcswitch_sim::deadlock::{CbdScenario, Draw};
use pfcswitch_switch::config::{PolicyKind, SwitchConfig};
use std::time::Duration;

fn scenario(kind: PolicyKind) -> CbdScenario {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/ofc-paper.toml");
    let mut config: SwitchConfig = toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    config.policy.kind = kind;
    config.validate().unwrap();
    CbdScenario::new(&config, kind == PolicyKind::Ofc, config.pfc.cable_delay).unwrap()
}

const LIMIT: Duration = Duration::from_secs(1);

#[test]
fn four_large_flows_deadlock_pfc_around_the_cycle_and_two_do_not() {
    let pfc = scenario(PolicyKind::Pfc);
    let stagger = [0, 250, 500, 750].map(Duration::from_nanos);
    let run = pfc.run(&Draw { split: [160; 4], offsets: stagger }, LIMIT).unwrap();
    let mut cycle = run.cycle.clone().expect("a deadlock");
    let start = cycle.iter().position(|&s| s == 1).expect("leaf 2 in the cycle");
    cycle.rotate_left(start);
    // Leaf 2 waits on spine 1, which waits on leaf 3, which waits on spine 2, and back.
    assert_eq!(cycle, vec![1, 4, 2, 5], "{run:?}");
    assert!(run.delivered < 640 && run.ended < Instant::ZERO + Duration::from_millis(200), "{run:?}");

    // f1 and f2 alone bounce through leaves 2 and 3 but close no cycle: everything arrives.
    let run = pfc.run(&Draw { split: [320, 320, 0, 0], offsets: stagger }, LIMIT).unwrap();
    assert_eq!((run.cycle, run.delivered), (None, 640));
}

#[test]
fn ofc_deadlocks_no_more_often_than_pfc_over_random_splits() {
    let (pfc, ofc) = (scenario(PolicyKind::Pfc), scenario(PolicyKind::Ofc));
    let mut rng = Rng::new(1);
    let (mut pfc_deadlocks, mut ofc_deadlocks) = (0, 0);
    for _ in 0..200 {
        let draw = Draw::random(640, &mut rng);
        pfc_deadlocks += u32::from(pfc.run(&draw, LIMIT).unwrap().cycle.is_some());
        ofc_deadlocks += u32::from(ofc.run(&draw, LIMIT).unwrap().cycle.is_some());
    }
    println!("deadlocks in 200 random splits of 640 frames: pfc {pfc_deadlocks}, ofc {ofc_deadlocks}");
    assert!(pfc_deadlocks > 0, "the scenario deadlocks PFC at M = 640");
    assert!(ofc_deadlocks <= pfc_deadlocks);
}
