//! `scenario simulate --capture`: the simulator's frames in pcaps, stamped in nanoseconds of
//! virtual time, read by tshark: every frame the link carried, PFC frames as many as the
//! switch counted and inside the run.

use pfcswitch_tests::oracle::{tshark_expert_messages, tshark_fields};
use pfcswitch_tests::scenario::{pfcswitch_scenario, results};

#[test]
fn a_simulated_link_capture_holds_every_frame_and_the_pfc_frames_the_switch_counted() {
    let out = tempfile::tempdir().unwrap();
    let stdout = pfcswitch_scenario(&["simulate", "incast", "--capture", "h1"], out.path());
    let pcap = out.path().join("captures/sw1.p1-h1.pcap");
    assert!(stdout.contains(&format!("capture: {}", pcap.display())), "{stdout}");
    let results = results(out.path());
    let port = &results["switches"][0]["snapshot"]["ports"][0];
    assert_eq!(port["name"], "p1");
    let (switch_mac, pfc_sent) = (port["mac"].as_str().unwrap(), port["priorities"][3]["pfc_tx"].as_u64().unwrap());
    let segments: u64 = (results["flows"].as_array().unwrap().iter())
        .filter(|f| f["from"] == "h1")
        .map(|f| f["sender"]["segments"].as_u64().unwrap())
        .sum();

    let rows = tshark_fields(&pcap, &["frame.time_epoch", "eth.src", "macc.opcode", "udp.dstport"], &[]);
    let seconds = |row: &Vec<String>| row[0].parse::<f64>().unwrap();
    let pfc: Vec<&Vec<String>> = rows.iter().filter(|r| r[1] == switch_mac && r[2] == "0x0101").collect();
    assert!(pfc_sent > 0, "the incast paused h1");
    assert_eq!(pfc.len() as u64, pfc_sent, "every PFC frame sw1 counted on p1 is in the capture");
    let data = rows.iter().filter(|r| r[1] == "02:00:00:00:00:01" && r.get(3).is_some_and(|p| p == "39000")).count();
    assert_eq!(data as u64, segments, "every segment h1 sent, retransmissions included");
    // Virtual time: the run's epoch is 1 s, its workload 3 s; stamps rise and some are not
    // whole microseconds (a nanosecond pcap).
    assert!(rows.windows(2).all(|w| seconds(&w[0]) <= seconds(&w[1])), "in time order");
    assert!(pfc.iter().all(|r| (1.0..4.0).contains(&seconds(r))), "PFC frames inside the run");
    let nanos = rows.iter().filter(|r| r[0].rsplit('.').next().is_some_and(|f| !f.ends_with("000"))).count();
    assert!(nanos > 0, "nanosecond stamps");
    for (index, message) in tshark_expert_messages(&pcap).iter().enumerate() {
        assert!(message.is_empty(), "frame {}: expert message {message}", index + 1);
    }
}
