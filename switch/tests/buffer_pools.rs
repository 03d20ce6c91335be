//! Buffer mode "pools" driven on virtual time: dynamic thresholds reach Choudhury and
//! Hahne's steady state, α·B / (1 + α·N) per queue for N always-backlogged queues sharing B
//! bytes, on egress queues (tail drop) and on lossless priority groups (where PFC's XOFF
//! point sits); a shared headroom pool; a reload into the mode and back with frames held.

use pfcswitch_link::time::Instant;
use pfcswitch_switch::config::SwitchConfig;
use pfcswitch_switch::counters::DropReason;
use pfcswitch_switch::{Switch, Tx};
use pfcswitch_wire::{DataFrameSpec, EthernetAddress, Pcp, VlanRepr};
use std::time::Duration;

const FRAME: usize = 1000;
const POOL: u64 = 200_000;

fn mac(n: usize) -> EthernetAddress {
    EthernetAddress([2, 0, 0, 0, 0, n as u8 + 1])
}

fn frame(src: usize, dst: usize, priority: u8) -> Vec<u8> {
    let vlan = Some(VlanRepr { pcp: Pcp::new(priority).unwrap(), dei: false, vid: 1 });
    DataFrameSpec::between(mac(src), mac(dst), vlan, FRAME).to_bytes()
}

/// `inputs` ports at 100 Gbit/s, then `outputs` at 10 Gbit/s, each output's host static.
fn config(inputs: usize, outputs: usize, buffer: &str) -> SwitchConfig {
    let mut text = String::from("[switch]\nname = \"dt\"\n");
    for i in 0..inputs + outputs {
        let speed = if i < inputs { "100Gbps" } else { "10Gbps" };
        text += &format!("[[port]]\nname = \"p{i}\"\nspeed = \"{speed}\"\n");
    }
    for o in inputs..inputs + outputs {
        text += &format!("[[fdb.static]]\nmac = \"{}\"\nport = \"p{o}\"\n", mac(o));
    }
    text += buffer;
    toml::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// Offers `frames_per_us` frames per microsecond on each of `flows` (ingress, egress) for
/// `duration`, starting with another input every microsecond so that none is always first
/// to the room a departure frees; an input its switch pauses sends nothing (its NIC obeys
/// at once). Returns the switch and each egress queue's mean bytes over the second half.
fn run(
    mut switch: Switch,
    flows: &[(usize, usize)],
    priority: u8,
    frames_per_us: usize,
    duration: Duration,
) -> (Switch, Vec<f64>) {
    let frames: Vec<Vec<u8>> = flows.iter().map(|&(i, o)| frame(i, o, priority)).collect();
    let pcp = Pcp::new(priority).unwrap();
    let (mut handle, mut tick) = (0u64, 0usize);
    let ticks = duration.as_micros() as usize;
    let mut sums = vec![0u64; switch.port_count()];
    for tick_index in 0..ticks {
        let now = Instant::from_nanos(tick_index as u64 * 1000);
        for _ in 0..frames_per_us {
            for f in 0..flows.len() {
                let f = (f + tick) % flows.len();
                let ingress = flows[f].0;
                if !switch.queue_state(now, ingress, pcp).pausing_peer {
                    switch.handle_rx(now, ingress, handle, &frames[f]);
                    handle += 1;
                }
            }
        }
        tick += 1;
        for port in 0..switch.port_count() {
            while let Some(tx) = switch.poll_tx(now, port) {
                assert!(matches!(tx, Tx::Data { .. } | Tx::Control(_)));
            }
        }
        while switch.poll_free().is_some() {}
        if tick_index >= ticks / 2 {
            for (port, sum) in sums.iter_mut().enumerate() {
                *sum += switch.queue_state(now, port, pcp).egress.bytes;
            }
        }
    }
    let samples = (ticks - ticks / 2) as f64;
    (switch, sums.iter().map(|&sum| sum as f64 / samples).collect())
}

/// α·B / (1 + α·N), the steady state of N backlogged queues under a dynamic threshold.
fn steady_state(k: i8, queues: usize) -> f64 {
    let alpha = 2f64.powi(i32::from(k));
    alpha * POOL as f64 / (1.0 + alpha * queues as f64)
}

/// Within two frames: a queue is admitted a frame while it holds less than its threshold.
fn assert_near(held: f64, expected: f64, what: &str) {
    let error = (held - expected).abs();
    assert!(error <= 2.0 * FRAME as f64, "{what}: {held} B held, α·B/(1+α·N) = {expected:.0} B");
}

#[test]
fn backlogged_egress_queues_settle_at_alpha_b_over_one_plus_alpha_n() {
    for (k, n) in [(0, 1), (0, 4), (1, 2), (2, 8), (-1, 3), (-2, 2)] {
        let buffer = format!(
            "[buffer]\nmode = \"pools\"\n\
             [buffer.pools.egress_lossy_pool]\ntype = \"egress\"\nsize = {POOL}\n\
             [buffer.profiles.q_lossy]\npool = \"egress_lossy_pool\"\ndynamic_th = {k}\n\
             [buffer.queue]\n\"*|0-7\" = \"q_lossy\"\n\
             [pfc]\nlossless = []\n"
        );
        let (switch, _) = Switch::new(&config(n, n, &buffer)).unwrap();
        // Each output gets 2 frames per µs at 10 Gbit/s (about 1.2 frames per µs): backlogged.
        let flows: Vec<(usize, usize)> = (0..n).map(|i| (i, n + i)).collect();
        let (switch, mean) = run(switch, &flows, 0, 2, Duration::from_millis(2));
        let expected = steady_state(k, n);
        for &(_, output) in &flows {
            assert_near(mean[output], expected, &format!("α = 2^{k}, N = {n}, queue of p{output}"));
            assert!(switch.counters(output).priority[0].drops[DropReason::EgressFull as usize] > 0, "tail drop");
        }
        let total: f64 = flows.iter().map(|&(_, o)| mean[o]).sum();
        assert_near(total / n as f64, expected, &format!("α = 2^{k}, N = {n}, pool per queue"));
    }
}

/// A lossless ingress pool of [`POOL`] bytes at α = 2^k with XON right below XOFF, and a
/// lossy egress pool.
fn lossless_tables(k: i8) -> String {
    format!(
        "[buffer]\nmode = \"pools\"\n\
         [buffer.pools.ingress_lossless_pool]\ntype = \"ingress\"\nsize = {POOL}\n\
         [buffer.pools.egress_lossy_pool]\ntype = \"egress\"\nsize = {POOL}\n\
         [buffer.profiles.pg_lossless]\npool = \"ingress_lossless_pool\"\ndynamic_th = {k}\nxon_offset = 0\n\
         [buffer.profiles.q_lossy]\npool = \"egress_lossy_pool\"\ndynamic_th = 0\n\
         [buffer.pg]\n\"*|3\" = \"pg_lossless\"\n\
         [buffer.queue]\n\"*|0-2,4-7\" = \"q_lossy\"\n"
    )
}

#[test]
fn lossless_priority_groups_send_xoff_at_alpha_times_free_and_lose_nothing() {
    for (k, n) in [(0, 2), (1, 4), (-1, 3)] {
        let (switch, _) = Switch::new(&config(n, 1, &lossless_tables(k))).unwrap();
        // Every input sends to the one output: N PGs share the ingress pool, paused by PFC.
        // XON right below XOFF (xon_offset 0) is the pure dynamic threshold; a wider
        // hysteresis lets the one PG still sending grow by up to (N − 1)·α·xon_offset/(1 + α)
        // while the paused ones drain below it.
        let flows: Vec<(usize, usize)> = (0..n).map(|i| (i, n)).collect();
        let (switch, _) = run(switch, &flows, 3, 1, Duration::from_millis(3));
        let pools = switch.pools().unwrap();
        let expected = steady_state(k, n);
        let mut paused = 0;
        for &(input, _) in &flows {
            let state = switch.queue_state(Instant::ZERO, input, Pcp::new(3).unwrap());
            paused += u64::from(state.xoff_to_xon > 0);
            assert_near(state.ingress.high_water as f64, expected, &format!("α = 2^{k}, N = {n}, PG of p{input}"));
            assert_eq!(switch.counters(input).priority[3].rx_dropped, 0, "a lossless PG drops nothing");
        }
        assert_eq!(paused, n as u64, "every PG went through XOFF and XON");
        assert!(pools.pool_named("ingress_lossless_pool").unwrap().shared.high_water <= POOL);
    }
}

#[test]
fn a_shared_headroom_pool_caps_what_all_pgs_take_above_their_thresholds() {
    let buffer = "[buffer]\nmode = \"pools\"\n\
         [buffer.pools.ingress_lossless_pool]\ntype = \"ingress\"\nsize = 100000\nxoff = 30000\n\
         [buffer.pools.egress_lossy_pool]\ntype = \"egress\"\nsize = 100000\n\
         [buffer.profiles.pg_lossless]\npool = \"ingress_lossless_pool\"\ndynamic_th = 0\nxoff = 20000\n\
         [buffer.profiles.q_lossy]\npool = \"egress_lossy_pool\"\ndynamic_th = 0\n\
         [buffer.pg]\n\"*|3\" = \"pg_lossless\"\n\
         [buffer.queue]\n\"*|0-2,4-7\" = \"q_lossy\"\n";
    let (mut switch, warnings) = Switch::new(&config(2, 1, buffer)).unwrap();
    assert!(
        warnings.iter().any(|w| w.key == "buffer.pools.ingress_lossless_pool.xoff" && w.message.contains("60000 B")),
        "oversubscribed headroom is said: {warnings:?}"
    );
    // Two senders that ignore PFC, and an output that sends nothing: 100 frames each.
    let frames = [frame(0, 2, 3), frame(1, 2, 3)];
    for handle in 0..200u64 {
        let input = (handle % 2) as usize;
        switch.handle_rx(Instant::ZERO, input, handle, &frames[input]);
    }
    let pools = switch.pools().unwrap();
    assert_eq!(pools.pool_named("ingress_lossless_pool").unwrap().headroom.bytes, 30_000, "the headroom pool is full");
    for input in 0..2 {
        let pg = pools.pg(input, 3);
        assert_eq!(pg.headroom.bytes, 15_000, "each PG took its half of the headroom pool");
        assert!(pg.shared.abs_diff(33_333) <= 1000, "each PG holds α·B/(1+α·N) of the pool: {pg:?}");
        assert!(switch.queue_state(Instant::ZERO, input, Pcp::new(3).unwrap()).pausing_peer);
        let drops = switch.counters(input).priority[3].drops[DropReason::IngressMax as usize];
        assert_eq!(drops + 15 + pg.shared / 1000, 100, "what found no room was dropped at ingress and counted");
    }
}

#[test]
fn a_reload_into_pools_and_back_keeps_every_frame_and_the_accounting_exact() {
    let (old, new) = (config(2, 1, "[pfc]\nlossless = [3]\n"), config(2, 1, &lossless_tables(0)));
    let (mut switch, _) = Switch::new(&old).unwrap();
    // 40 frames wait at the output, which sends nothing: 20 KB in each input's PG.
    let frames = [frame(0, 2, 3), frame(1, 2, 3)];
    for handle in 0..40u64 {
        switch.handle_rx(Instant::ZERO, (handle % 2) as usize, handle, &frames[(handle % 2) as usize]);
    }
    switch.reconfigure(Instant::ZERO, &old, &new).unwrap();
    let pools = switch.pools().expect("mode pools after the reload");
    assert_eq!(pools.pool_named("ingress_lossless_pool").unwrap().shared.bytes, 40_000, "rebuilt from the PGs");
    assert_eq!(switch.frames_held(), 40);
    let mut now = Instant::ZERO;
    let mut sent = 0;
    while sent < 40 {
        now += Duration::from_micros(1);
        while let Some(tx) = switch.poll_tx(now, 2) {
            sent += u32::from(matches!(tx, Tx::Data { .. }));
        }
    }
    assert_eq!(switch.pools().unwrap().pool_named("ingress_lossless_pool").unwrap().shared.bytes, 0, "all freed");
    switch.reconfigure(now, &new, &old).unwrap();
    assert!(switch.pools().is_none());
}
