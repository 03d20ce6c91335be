//! INT on real frames: a datapath `hpcc-incast` run captured on h8's link. pfcswitchd pushes
//! its record onto every HPCC data frame in place, h8 echoes the records in its ACKs, and
//! what the records say agrees with what the switch counted. Wireshark reads the frames
//! with the project's dissector without an expert message, and an independent decoder
//! (tests/oracles/int_check.py, written from docs/frames.md) reads the same bytes.

use pfcswitch_tests::oracle::{
    int_check, read_pcap, tshark_expert_messages_with_dissector, tshark_fields_with_dissector,
};
use pfcswitch_tests::scenario::{pfcswitch_scenario, results};
use pfcswitch_tests::topology::serial;
use serde_json::Value;

const RECORD_BYTES: u64 = 24;

#[test]
fn a_datapath_hpcc_run_carries_the_switchs_int_records_as_it_counted_them() {
    let _serial = serial();
    let out = tempfile::tempdir().unwrap();
    let args = ["run", "hpcc-incast", "--set", "duration=2s", "--capture", "h8"];
    println!("{}", pfcswitch_scenario(&args, out.path()));
    let results = results(out.path());
    assert_eq!(results["summary"]["lossless_drops"], 0, "lossless");
    let snapshot = &results["switches"][0]["snapshot"];
    let node_id = snapshot["int"]["node_id"].as_u64().expect("the switch stamps");
    let p8 = &snapshot["ports"][7];
    assert_eq!(p8["name"], "p8");
    let stamped = p8["int"]["stamped"].as_u64().unwrap();
    assert!(stamped > 1000, "the incast's frames were stamped: {stamped}");
    assert_eq!(p8["int"]["mtu"], 0, "the senders left room for the record");

    let pcap = out.path().join("captures/sw1.p8-h8.pcap");
    let frames = int_check(&pcap);
    let errors: Vec<&Value> = frames.iter().filter(|f| f["errors"].as_array().is_some_and(|e| !e.is_empty())).collect();
    assert!(errors.is_empty(), "the oracle found: {errors:?}");
    let (data, echoes): (Vec<&Value>, Vec<&Value>) = frames.iter().partition(|f| f["kind"] == "data");
    let data_count = data.len();
    println!("{data_count} data frames with INT, {} echoes, {stamped} stamped by the switch", echoes.len());
    // The switch's snapshot comes when the hosts are done; the segments still in flight then
    // leave after it, stamped too: the capture holds a few more than the snapshot counted.
    assert!(data.len() as u64 >= stamped && data.len() as u64 <= stamped + 200, "{} of {stamped}", data.len());
    assert!(!echoes.is_empty() && echoes.iter().all(|e| e["hops"] == 1), "h8's ACKs echo one record");

    // What p8 sent, frame by frame as captured: each record's tx bytes is the port's count
    // with that frame, so from one record on the capture predicts every later one exactly.
    let captured = read_pcap(&pcap);
    let h8 = captured[data[0]["frame"].as_u64().unwrap() as usize - 1][..6].to_vec();
    // What p8 sent and counted: every frame but h8's own and the switch's MAC control frames
    // (PFC), which leave beside the data queues; flooded frames (another host's IPv6
    // neighbour discovery, say) count too.
    let counted_by_p8 = |bytes: &[u8]| bytes[6..12] != h8[..] && bytes[12..14] != [0x88, 0x08];
    let wrap = |bytes: u64| bytes % (1 << 32);
    let (mut count, mut counts) = (None::<u64>, Vec::new());
    let mut data = data.iter().peekable();
    let mut last_ts = 0;
    for (number, bytes) in captured.iter().enumerate().map(|(i, b)| (i as u64 + 1, b)) {
        if !counted_by_p8(bytes) {
            continue;
        }
        count = count.map(|c| wrap(c + bytes.len() as u64));
        if let Some(frame) = data.next_if(|f| f["frame"].as_u64() == Some(number)) {
            assert_eq!((frame["hops"].as_u64(), frame["remaining_hops"].as_u64()), (Some(1), Some(4)), "{frame}");
            assert_eq!(frame["icrc_ok"], true, "the sink's view of the packet holds its ICRC");
            let hop = &frame["hop"][0];
            assert_eq!(hop["node_id"].as_u64(), Some(node_id));
            assert_eq!(hop["queue_id"].as_u64(), Some(3), "the frame's priority");
            assert_eq!(hop["link_speed_mbps"].as_u64(), Some(100));
            let queue = hop["queue_occupancy"].as_u64().unwrap();
            let high_water = p8["priorities"][3]["egress_high_water"].as_u64().unwrap();
            assert!(queue <= high_water, "a record's queue {queue} B within the port's peak {high_water} B");
            let (ts, tx) = (hop["egress_ts"].as_u64().unwrap(), hop["tx_bytes"].as_u64().unwrap());
            // Frames the daemon sends in one turn of its loop share that turn's clock reading.
            assert!(ts >= last_ts, "the switch's clock only grows: {frame}");
            assert!(count.is_none_or(|c| c == tx), "tx bytes move by what p8 sent: {count:?} then {frame}");
            (count, last_ts) = (Some(tx), ts);
        }
        counts.extend(count);
    }
    assert!(data.next().is_none(), "every record was met in the capture");
    // At the snapshot, p8 had counted exactly the bytes up to one of the frames it sent.
    let sent: u64 = (0..8).map(|p| p8["priorities"][p]["tx_bytes"].as_u64().unwrap()).sum();
    let counted = wrap(sent + stamped * RECORD_BYTES);
    assert!(counts.contains(&counted), "the switch's {counted} bytes fall on a frame's count");

    let dissected = tshark_fields_with_dissector(&pcap, &["pfcswitch.int.type", "pfcswitch.int.hops"]);
    let typed = |t: &str| dissected.iter().filter(|row| row[0] == t && row[1] == "1").count();
    assert_eq!((typed("1"), typed("2")), (data_count, echoes.len()), "Wireshark reads the same INT");
    let expert = tshark_expert_messages_with_dissector(&pcap);
    let complaints: Vec<&String> = expert.iter().filter(|m| !m.trim().is_empty()).collect();
    assert!(complaints.is_empty(), "tshark's expert messages: {complaints:?}");
}
