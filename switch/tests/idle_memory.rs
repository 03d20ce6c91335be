//! What an idle switch costs: a simulated fabric holds thousands (a k = 32 fat-tree has
//! 1,280 switches of 32 ports), so a switch's buffers, queues and tables are bounded when it
//! is built and allocated as frames arrive. The datapath allocates them all at once instead
//! (`Switch::preallocate`), and this test shows what that would cost every simulated switch.

use pfcswitch_switch::config::{PortConfig, SwitchConfig};
use pfcswitch_switch::switch::Switch;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

struct Counting;

/// Bytes allocated and not yet freed, by every thread (the test runs alone in its binary).
static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: forwards to the system allocator, only counting bytes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size as isize - layout.size() as isize, Ordering::Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The switch of HPCC's fabrics (`configs/fabric/hpcc.toml`: 32 MB of buffer, 4 MB egress
/// queues) with 32 ports, as a k = 32 fat-tree's switches have.
fn hpcc_switch_config() -> SwitchConfig {
    let mut config: SwitchConfig =
        toml::from_str(include_str!("../../configs/fabric/hpcc.toml")).expect("configs/fabric/hpcc.toml");
    let template = config.ports[0].clone();
    config.ports = (1..=32).map(|i| PortConfig { name: format!("p{i}"), ..template.clone() }).collect();
    config
}

/// Bytes `make` leaves allocated.
fn live_bytes<T>(make: impl FnOnce() -> T) -> (T, usize) {
    let before = LIVE.load(Ordering::Relaxed);
    let made = make();
    (made, (LIVE.load(Ordering::Relaxed) - before) as usize)
}

#[test]
fn an_idle_32_port_switch_with_hpccs_buffer_holds_under_256_kib_and_preallocating_holds_megabytes() {
    let config = hpcc_switch_config();
    let (mut switch, idle) = live_bytes(|| Switch::new(&config).expect("valid").0);
    println!("idle 32-port switch, configs/fabric/hpcc.toml: {idle} B ({:.1} KiB)", idle as f64 / 1024.0);
    assert!(idle < 256 * 1024, "an idle switch holds {idle} B");
    let ((), preallocated) = live_bytes(|| switch.preallocate());
    println!("the same switch preallocated (as the datapath does): {:.1} MiB more", preallocated as f64 / 1048576.0);
    assert!(preallocated > 16 * idle, "preallocating is what the simulator avoids: {preallocated} B");
}
