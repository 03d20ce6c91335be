//! A datapath whose receive ring backs up holds the port's lossless priorities with PFC
//! (`Switch::hold_lossless`), beside the policy's own XOFF: the pause goes out at once, is
//! refreshed while held, and is released with quanta 0 only when neither asks for it.

mod common;

use common::pcp;
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::BitRate;
use pfcswitch_switch::config::SwitchConfig;
use pfcswitch_switch::{ControlFrame, Switch, Tx};
use pfcswitch_wire::{MacControlRepr, PfcRepr};

fn us(n: u64) -> Instant {
    Instant::from_nanos(n * 1_000)
}

/// The PFC frame `port` sends at `now`, if any.
fn pfc_sent(sw: &mut Switch, now: Instant, port: usize) -> Option<PfcRepr> {
    match sw.poll_tx(now, port)? {
        Tx::Control(ControlFrame::Pause(pause)) => match pause.repr {
            MacControlRepr::Pfc(repr) => Some(repr),
            other => panic!("a PFC frame, not {other:?}"),
        },
        other => panic!("a PFC frame, not {other:?}"),
    }
}

#[test]
fn a_backlog_in_front_of_the_switch_pauses_every_lossless_priority_of_its_port_until_it_clears() {
    let mut config = SwitchConfig::with_ports("sw", 2, BitRate::gbps(1));
    config.pfc.lossless = vec![3, 5];
    let quanta = config.pfc.quanta;
    let mut sw = Switch::new(&config).unwrap().0;

    sw.hold_lossless(us(0), 0, true);
    let xoff = pfc_sent(&mut sw, us(0), 0).expect("XOFF at once");
    assert_eq!(xoff, PfcRepr::default().with_class(pcp(3), quanta).with_class(pcp(5), quanta), "lossless only");
    assert!(sw.poll_tx(us(0), 1).is_none(), "only the backlogged port pauses its peer");
    assert!(sw.queue_state(us(0), 0, pcp(3)).pausing_peer && sw.queue_state(us(0), 0, pcp(5)).pausing_peer);

    // Held on: refreshed before the peer's pause runs out (at half of it).
    let refresh = sw.poll_timeout().expect("a refresh is booked");
    assert!(refresh <= us(0) + BitRate::gbps(1).pause_duration(quanta) / 2, "refresh at {refresh:?}");
    sw.handle_timeout(refresh);
    assert_eq!(pfc_sent(&mut sw, refresh, 0), Some(xoff), "the same XOFF again");

    // After the refresh has left the wire (the port's shaper paces control frames too).
    let clear = refresh + std::time::Duration::from_micros(10);
    sw.hold_lossless(clear, 0, false);
    let xon = pfc_sent(&mut sw, clear, 0).expect("XON when the backlog clears");
    assert_eq!(xon, PfcRepr::default().with_class(pcp(3), 0).with_class(pcp(5), 0));
    assert!(!sw.queue_state(clear, 0, pcp(3)).pausing_peer);
    assert!(sw.poll_timeout().is_none(), "nothing left to refresh");
}
