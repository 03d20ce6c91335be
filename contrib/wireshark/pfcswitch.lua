-- Wireshark/tshark dissector for the frames pfcswitch defines (see docs/frames.md).
--
--   tshark -X lua_script:contrib/wireshark/pfcswitch.lua -r capture.pcap -V
--   Wireshark: copy this file to ~/.local/lib/wireshark/plugins/ (or `Help > About >
--   Folders > Personal Lua Plugins`) and restart.
--
-- Sections, one per frame kind the project defines or Wireshark leaves undecoded; later
-- schemes add theirs below:
--   OFC     the TLV an OFC PAUSE or RESUME carries after the 802.1Qbb PFC fields (byte 34).
--           Wireshark's own dissector still decodes the PFC part (macctrl): this is a
--           postdissector that adds what follows it, so a PFC-only reading and the OFC
--           reading coexist.
--   CN-TAG  802.1Qau's flow tag (EtherType 0x22E9), then the EtherType it encapsulates.
--   CNM     802.1Qau's congestion notification message (EtherType 0x22E7), laid out as in
--           DESIGN.md and docs/frames.md.
--   FECN    the project's local experimental EtherType 0x88B5: version 1 is a FECN rate
--           discovery probe (wire/src/fecn.rs); version 0 a host's announcement.
--   INT     in-band telemetry over UDP port 4792 (docs/frames.md, "INT over UDP"): shim,
--           INT-MD header and hop stack, then the original UDP payload handed to Wireshark's
--           dissector for the original port (4791: InfiniBand's RoCEv2).
--   Traffic the endpoints' header over UDP port 39000 (docs/frames.md): kind, AckReq bit,
--           flow, sequence, message, offset and send timestamp (an ACK's: its delay at the receiver).

local pfcswitch = Proto("pfcswitch", "pfcswitch frames")

-------------------------------------------------------------------------------
-- OFC PAUSE / RESUME TLV
-------------------------------------------------------------------------------
local OFC_OFFSET = 34          -- 14-byte Ethernet header + 20 bytes of PFC fields
local OFC_HEADER_LEN = 12
local OFC_ENTRY_LEN = 12
local OFC_MAGIC = "OFCT"

local ofc_ops = { [1] = "PAUSE", [2] = "RESUME" }
local ofc_keys = { [1] = "MAC pair" }

local f = pfcswitch.fields
f.ofc = ProtoField.none("pfcswitch.ofc", "OFC TLV")
f.ofc_magic = ProtoField.string("pfcswitch.ofc.magic", "Magic")
f.ofc_version = ProtoField.uint8("pfcswitch.ofc.version", "Version")
f.ofc_op = ProtoField.uint8("pfcswitch.ofc.op", "Operation", base.DEC, ofc_ops)
f.ofc_priority = ProtoField.uint8("pfcswitch.ofc.priority", "Priority")
f.ofc_flags = ProtoField.uint8("pfcswitch.ofc.flags", "Flags", base.HEX)
f.ofc_coarse = ProtoField.bool("pfcswitch.ofc.flags.coarse", "COARSE (every flow of the priority)", 8, nil, 0x01)
f.ofc_more = ProtoField.bool("pfcswitch.ofc.flags.more", "MORE (another frame continues the list)", 8, nil, 0x02)
f.ofc_key_type = ProtoField.uint8("pfcswitch.ofc.key_type", "Key type", base.DEC, ofc_keys)
f.ofc_reserved = ProtoField.uint8("pfcswitch.ofc.reserved", "Reserved", base.HEX)
f.ofc_count = ProtoField.uint16("pfcswitch.ofc.count", "Flows")
f.ofc_flow = ProtoField.none("pfcswitch.ofc.flow", "Flow")
f.ofc_flow_src = ProtoField.ether("pfcswitch.ofc.flow.src", "Source")
f.ofc_flow_dst = ProtoField.ether("pfcswitch.ofc.flow.dst", "Destination")

local ofc_malformed = ProtoExpert.new("pfcswitch.ofc.malformed", "Malformed OFC TLV",
  expert.group.MALFORMED, expert.severity.ERROR)
local ofc_unknown = ProtoExpert.new("pfcswitch.ofc.unknown", "OFC TLV field with an unknown value",
  expert.group.PROTOCOL, expert.severity.WARN)
pfcswitch.experts = { ofc_malformed, ofc_unknown }

local eth_type = Field.new("eth.type")
local macc_opcode = Field.new("macc.opcode")

local function dissect_ofc(tvb, pinfo, root)
  if tvb:len() < OFC_OFFSET + 4 or tvb(OFC_OFFSET, 4):string() ~= OFC_MAGIC then
    return -- a plain PFC frame: padding, not a TLV
  end
  local tlv = root:add(f.ofc, tvb(OFC_OFFSET))
  if tvb:len() < OFC_OFFSET + OFC_HEADER_LEN then
    tlv:add_proto_expert_info(ofc_malformed, "TLV header truncated")
    return
  end
  local at = OFC_OFFSET
  tlv:add(f.ofc_magic, tvb(at, 4))
  local version = tvb(at + 4, 1):uint()
  local version_item = tlv:add(f.ofc_version, tvb(at + 4, 1))
  if version ~= 1 then version_item:add_proto_expert_info(ofc_unknown, "unknown version") end
  local op = tvb(at + 5, 1):uint()
  local op_item = tlv:add(f.ofc_op, tvb(at + 5, 1))
  if ofc_ops[op] == nil then op_item:add_proto_expert_info(ofc_unknown, "unknown operation") end
  local priority = tvb(at + 6, 1):uint()
  tlv:add(f.ofc_priority, tvb(at + 6, 1))
  local flags = tlv:add(f.ofc_flags, tvb(at + 7, 1))
  flags:add(f.ofc_coarse, tvb(at + 7, 1))
  flags:add(f.ofc_more, tvb(at + 7, 1))
  tlv:add(f.ofc_key_type, tvb(at + 8, 1))
  tlv:add(f.ofc_reserved, tvb(at + 9, 1))
  local count = tvb(at + 10, 2):uint()
  tlv:add(f.ofc_count, tvb(at + 10, 2))
  local entries = at + OFC_HEADER_LEN
  if tvb:len() < entries + count * OFC_ENTRY_LEN then
    tlv:add_proto_expert_info(ofc_malformed, string.format("%d flows do not fit in the frame", count))
    return
  end
  for i = 0, count - 1 do
    local e = entries + i * OFC_ENTRY_LEN
    local flow = tlv:add(f.ofc_flow, tvb(e, OFC_ENTRY_LEN))
    flow:add(f.ofc_flow_src, tvb(e, 6))
    flow:add(f.ofc_flow_dst, tvb(e + 6, 6))
    flow:append_text(string.format(": %s > %s", tostring(tvb(e, 6):ether()), tostring(tvb(e + 6, 6):ether())))
  end
  tlv:append_text(string.format(": %s priority %d, %d flows", ofc_ops[op] or "?", priority, count))
  pinfo.cols.info:append(string.format(" [OFC %s, %d flows]", ofc_ops[op] or "?", count))
end

function pfcswitch.dissector(tvb, pinfo, tree)
  local ethertype = eth_type()
  local opcode = macc_opcode()
  if ethertype and ethertype.value == 0x8808 and opcode and opcode.value == 0x0101 then
    dissect_ofc(tvb, pinfo, tree:add(pfcswitch, tvb(), "pfcswitch"))
  end
end

register_postdissector(pfcswitch)

-------------------------------------------------------------------------------
-- 802.1Qau CN-TAG (0x22E9) and CNM (0x22E7)
-------------------------------------------------------------------------------
local ethertypes = DissectorTable.get("ethertype")

local cntag = Proto("pfcswitch_cntag", "802.1Qau CN-TAG")
local cntag_flow = ProtoField.uint16("pfcswitch.cntag.flow_id", "Flow id (RPID)")
local cntag_type = ProtoField.uint16("pfcswitch.cntag.type", "Type", base.HEX)
cntag.fields = { cntag_flow, cntag_type }

function cntag.dissector(tvb, pinfo, tree)
  if tvb:len() < 4 then return 0 end
  local item = tree:add(cntag, tvb(0, 4))
  item:add(cntag_flow, tvb(0, 2))
  item:add(cntag_type, tvb(2, 2))
  item:append_text(string.format(", flow id %d", tvb(0, 2):uint()))
  if not ethertypes:try(tvb(2, 2):uint(), tvb(4):tvb(), pinfo, tree) then
    Dissector.get("data"):call(tvb(4):tvb(), pinfo, tree)
  end
  return tvb:len()
end
ethertypes:add(0x22E9, cntag)

local CNM_FIXED_LEN = 24
local CNM_MAX_ENCAPSULATED = 64

local cnm = Proto("pfcswitch_cnm", "802.1Qau Congestion Notification Message")
local c = {
  version = ProtoField.uint16("pfcswitch.cnm.version", "Version", base.DEC, nil, 0xF000),
  reserved = ProtoField.uint16("pfcswitch.cnm.reserved", "Reserved", base.HEX, nil, 0x0FC0),
  qntz_fb = ProtoField.uint16("pfcswitch.cnm.qntz_fb", "Quantized feedback (QntzFb)", base.DEC, nil, 0x003F),
  cpid = ProtoField.uint64("pfcswitch.cnm.cpid", "Congestion point identifier (CPID)", base.HEX),
  q_offset = ProtoField.int16("pfcswitch.cnm.q_offset", "cnmQOffset (64-octet units)"),
  q_delta = ProtoField.int16("pfcswitch.cnm.q_delta", "cnmQDelta (64-octet units)"),
  encap_priority = ProtoField.uint16("pfcswitch.cnm.encap_priority", "Encapsulated priority", base.DEC, nil, 0xE000),
  encap_priority_reserved = ProtoField.uint16("pfcswitch.cnm.encap_priority_reserved", "Reserved", base.HEX, nil,
    0x1FFF),
  encap_dst = ProtoField.ether("pfcswitch.cnm.encap_dst", "Encapsulated destination"),
  msdu_len = ProtoField.uint16("pfcswitch.cnm.msdu_len", "Encapsulated MSDU length"),
  msdu = ProtoField.bytes("pfcswitch.cnm.msdu", "Encapsulated MSDU (first bytes)"),
}
cnm.fields = { c.version, c.reserved, c.qntz_fb, c.cpid, c.q_offset, c.q_delta, c.encap_priority,
  c.encap_priority_reserved, c.encap_dst, c.msdu_len, c.msdu }
local cnm_malformed = ProtoExpert.new("pfcswitch.cnm.malformed", "Malformed CNM", expert.group.MALFORMED,
  expert.severity.ERROR)
local cnm_unknown = ProtoExpert.new("pfcswitch.cnm.unknown", "CNM field with an unexpected value",
  expert.group.PROTOCOL, expert.severity.WARN)
cnm.experts = { cnm_malformed, cnm_unknown }

-- Names the protocol, adds its tree item, and flags a frame shorter than `fixed` bytes.
-- Returns the item, and whether the fixed fields are there.
-- Adds each {field, offset, length} of `layout` to `item`: a header's fixed fields in order.
local function add_fields(item, tvb, layout)
  for _, f in ipairs(layout) do item:add(f[1], tvb(f[2], f[3])) end
end

local function open_item(proto, name, tvb, pinfo, tree, fixed, malformed)
  pinfo.cols.protocol = name
  local item = tree:add(proto, tvb())
  if tvb:len() < fixed then
    item:add_proto_expert_info(malformed, string.format("%d bytes, fewer than the %d fixed ones", tvb:len(), fixed))
    return item, false
  end
  return item, true
end

function cnm.dissector(tvb, pinfo, tree)
  local item, whole = open_item(cnm, "CNM", tvb, pinfo, tree, CNM_FIXED_LEN, cnm_malformed)
  if not whole then return tvb:len() end
  local first = tvb(0, 2):uint()
  local version = item:add(c.version, tvb(0, 2))
  if bit.rshift(first, 12) ~= 0 then version:add_proto_expert_info(cnm_unknown, "version is not 0") end
  local reserved = item:add(c.reserved, tvb(0, 2))
  if bit.band(first, 0x0FC0) ~= 0 then reserved:add_proto_expert_info(cnm_unknown, "reserved bits set") end
  item:add(c.qntz_fb, tvb(0, 2))
  item:add(c.cpid, tvb(2, 8))
  item:add(c.q_offset, tvb(10, 2))
  item:add(c.q_delta, tvb(12, 2))
  item:add(c.encap_priority, tvb(14, 2))
  local low = item:add(c.encap_priority_reserved, tvb(14, 2))
  if bit.band(tvb(14, 2):uint(), 0x1FFF) ~= 0 then low:add_proto_expert_info(cnm_unknown, "reserved bits set") end
  item:add(c.encap_dst, tvb(16, 6))
  local msdu_len = tvb(22, 2):uint()
  item:add(c.msdu_len, tvb(22, 2))
  local carried = math.min(msdu_len, CNM_MAX_ENCAPSULATED)
  if tvb:len() < CNM_FIXED_LEN + carried then
    item:add_proto_expert_info(cnm_malformed, string.format("%d MSDU bytes promised, %d present", carried,
      tvb:len() - CNM_FIXED_LEN))
    return tvb:len()
  end
  if carried > 0 then item:add(c.msdu, tvb(CNM_FIXED_LEN, carried)) end
  local qntz = bit.band(first, 0x3F)
  item:append_text(string.format(", QntzFb %d, CPID %s", qntz, tvb(2, 8):bytes():tohex()))
  pinfo.cols.info = string.format("CNM QntzFb %d, qOffset %d, qDelta %d, for %s", qntz, tvb(10, 2):int(),
    tvb(12, 2):int(), tostring(tvb(16, 6):ether()))
  return tvb:len()
end
ethertypes:add(0x22E7, cnm)

-------------------------------------------------------------------------------
-- FECN probe (EtherType 0x88B5, version 1) and host announcement (version 0)
-------------------------------------------------------------------------------
local FECN_PROBE_LEN = 26
local fecn_subtypes = { [1] = "probe", [2] = "reflected" }

local fecn = Proto("pfcswitch_fecn", "pfcswitch FECN rate discovery probe")
local p = {
  version = ProtoField.uint8("pfcswitch.fecn.version", "Version", base.DEC, nil, 0xF0),
  subtype = ProtoField.uint8("pfcswitch.fecn.subtype", "Subtype", base.DEC, fecn_subtypes, 0x0F),
  hops = ProtoField.uint8("pfcswitch.fecn.hops", "Hops (FECN ports that examined it)"),
  flow_id = ProtoField.uint16("pfcswitch.fecn.flow_id", "Flow id (RPID)"),
  sequence = ProtoField.uint32("pfcswitch.fecn.sequence", "Sequence number"),
  rate = ProtoField.uint32("pfcswitch.fecn.rate_kbps", "Rate (kbit/s)"),
  bottleneck = ProtoField.ether("pfcswitch.fecn.bottleneck", "Bottleneck port"),
  timestamp = ProtoField.uint64("pfcswitch.fecn.timestamp_ns", "Source timestamp (ns)"),
}
fecn.fields = { p.version, p.subtype, p.hops, p.flow_id, p.sequence, p.rate, p.bottleneck, p.timestamp }
local fecn_malformed = ProtoExpert.new("pfcswitch.fecn.malformed", "Malformed FECN probe", expert.group.MALFORMED,
  expert.severity.ERROR)
local fecn_unknown = ProtoExpert.new("pfcswitch.fecn.unknown", "FECN field with an unexpected value",
  expert.group.PROTOCOL, expert.severity.WARN)
fecn.experts = { fecn_malformed, fecn_unknown }

function fecn.dissector(tvb, pinfo, tree)
  if tvb:len() >= 1 and bit.rshift(tvb(0, 1):uint(), 4) == 0 then
    pinfo.cols.protocol = "pfcswitch"
    pinfo.cols.info = "host announcement"
    tree:add(fecn, tvb(), "pfcswitch host announcement (version 0)")
    return tvb:len()
  end
  local item, whole = open_item(fecn, "FECN", tvb, pinfo, tree, FECN_PROBE_LEN, fecn_malformed)
  if not whole then return tvb:len() end
  local first = tvb(0, 1):uint()
  local version = item:add(p.version, tvb(0, 1))
  if bit.rshift(first, 4) ~= 1 then version:add_proto_expert_info(fecn_unknown, "version is not 1") end
  local subtype = item:add(p.subtype, tvb(0, 1))
  local kind = fecn_subtypes[bit.band(first, 0x0F)]
  if kind == nil then subtype:add_proto_expert_info(fecn_unknown, "subtype is neither probe nor reflected") end
  add_fields(item, tvb, { { p.hops, 1, 1 }, { p.flow_id, 2, 2 }, { p.sequence, 4, 4 }, { p.rate, 8, 4 },
    { p.bottleneck, 12, 6 }, { p.timestamp, 18, 8 } })
  pinfo.cols.info = string.format("FECN %s flow %d seq %d, rate %d kbit/s after %d hops", kind or "?",
    tvb(2, 2):uint(), tvb(4, 4):uint(), tvb(8, 4):uint(), tvb(1, 1):uint())
  return FECN_PROBE_LEN
end

ethertypes:add(0x88B5, fecn)

-------------------------------------------------------------------------------
-- INT over UDP (UDP destination port 4792): P4.org INT v2.1 INT-MD, shim NPT 1
-------------------------------------------------------------------------------
-- docs/frames.md, "INT over UDP (in-band telemetry)": shim (4 bytes), INT-MD header
-- (12 bytes), hop stack (newest hop first), then the original UDP payload, which goes to
-- the dissector Wireshark has for the original port the shim carries (4791: InfiniBand).
local INT_UDP_PORT = 4792
local INT_SHIM_LEN = 4
local INT_MD_LEN = 12
local INT_DOMAIN_PFCSWITCH = 0x5046

local int_types = { [1] = "INT-MD", [2] = "INT-Destination (pfcswitch: echo in an ACK)", [3] = "INT-MX" }
local int_npts = { [0] = "DSCP marks INT", [1] = "original UDP payload follows (UDP port)",
  [2] = "original L4 header follows (IP protocol)" }

-- Instruction bits, bit 0 = 0x8000: name, bytes, whether pfcswitch fills it. A hop holds the
-- baseline metadata (bits 0-14) in bit order, then the domain-specific ones, then bit 15's
-- checksum complement.
local int_bits = {
  [0] = { name = "Node ID", len = 4, supported = true },
  [1] = { name = "Level 1 ingress + egress interface ID", len = 4, supported = true },
  [2] = { name = "Hop latency", len = 4 },
  [3] = { name = "Queue ID + queue occupancy", len = 4, supported = true },
  [4] = { name = "Ingress timestamp", len = 8 },
  [5] = { name = "Egress timestamp", len = 8, supported = true },
  [6] = { name = "Level 2 ingress + egress interface ID", len = 8 },
  [7] = { name = "Egress interface Tx utilization", len = 4 },
  [8] = { name = "Buffer ID + buffer occupancy", len = 4 },
  [15] = { name = "Checksum complement", len = 4 },
}
for b = 9, 14 do int_bits[b] = { name = string.format("Reserved (bit %d)", b), len = 4 } end
local int_ds_bits = {
  [0] = { name = "Tx bytes", len = 4, supported = true },
  [1] = { name = "Link speed", len = 4, supported = true },
}

local intp = Proto("pfcswitch_int", "In-band Network Telemetry (INT over UDP)")

local i = {
  shim = ProtoField.none("pfcswitch.int.shim", "INT shim"),
  type = ProtoField.uint8("pfcswitch.int.type", "Type", base.DEC, int_types, 0xF0),
  npt = ProtoField.uint8("pfcswitch.int.npt", "NPT (next protocol type)", base.DEC, int_npts, 0x0C),
  shim_reserved = ProtoField.uint8("pfcswitch.int.shim_reserved", "Reserved", base.HEX, nil, 0x03),
  length = ProtoField.uint8("pfcswitch.int.length", "Length (4-byte words after the shim)"),
  port = ProtoField.uint16("pfcswitch.int.port", "Original UDP destination port"),
  md = ProtoField.none("pfcswitch.int.md", "INT-MD metadata header"),
  version = ProtoField.uint8("pfcswitch.int.version", "Version", base.DEC, nil, 0xF0),
  d = ProtoField.bool("pfcswitch.int.d", "D (discard)", 8, nil, 0x08),
  e = ProtoField.bool("pfcswitch.int.e", "E (max hop count exceeded)", 8, nil, 0x04),
  m = ProtoField.bool("pfcswitch.int.m", "M (MTU exceeded)", 8, nil, 0x02),
  hop_ml = ProtoField.uint8("pfcswitch.int.hop_ml", "HopML (per-hop metadata, 4-byte words)", base.DEC, nil, 0x1F),
  remaining = ProtoField.uint8("pfcswitch.int.remaining_hops", "Remaining hop count"),
  instructions = ProtoField.uint16("pfcswitch.int.instructions", "Instruction bitmap", base.HEX),
  ds_id = ProtoField.uint16("pfcswitch.int.ds_id", "Domain specific ID", base.HEX,
    { [INT_DOMAIN_PFCSWITCH] = "pfcswitch (\"PF\")", [0] = "default" }),
  ds_instructions = ProtoField.uint16("pfcswitch.int.ds_instructions", "DS instruction", base.HEX),
  ds_flags = ProtoField.uint16("pfcswitch.int.ds_flags", "DS flags", base.HEX),
  hops = ProtoField.uint8("pfcswitch.int.hops", "Hops in the stack"),
  hop = ProtoField.none("pfcswitch.int.hop", "Hop"),
  hop_index = ProtoField.uint8("pfcswitch.int.hop.index", "Index (1 = newest)"),
  node_id = ProtoField.uint32("pfcswitch.int.hop.node_id", "Node ID"),
  ingress_port = ProtoField.uint16("pfcswitch.int.hop.ingress_port", "Ingress port"),
  egress_port = ProtoField.uint16("pfcswitch.int.hop.egress_port", "Egress port"),
  hop_latency = ProtoField.uint32("pfcswitch.int.hop.hop_latency", "Hop latency"),
  queue_id = ProtoField.uint8("pfcswitch.int.hop.queue_id", "Queue ID"),
  queue_occupancy = ProtoField.uint24("pfcswitch.int.hop.queue_occupancy", "Queue occupancy (bytes)"),
  ingress_ts = ProtoField.uint64("pfcswitch.int.hop.ingress_ts", "Ingress timestamp"),
  egress_ts = ProtoField.uint64("pfcswitch.int.hop.egress_ts", "Egress timestamp (ns)"),
  l2_ingress = ProtoField.uint32("pfcswitch.int.hop.l2_ingress", "Level 2 ingress interface ID"),
  l2_egress = ProtoField.uint32("pfcswitch.int.hop.l2_egress", "Level 2 egress interface ID"),
  tx_utilization = ProtoField.uint32("pfcswitch.int.hop.tx_utilization", "Egress interface Tx utilization"),
  buffer_id = ProtoField.uint8("pfcswitch.int.hop.buffer_id", "Buffer ID"),
  buffer_occupancy = ProtoField.uint24("pfcswitch.int.hop.buffer_occupancy", "Buffer occupancy"),
  reserved_md = ProtoField.uint32("pfcswitch.int.hop.reserved", "Reserved instruction's metadata", base.HEX),
  checksum_complement = ProtoField.uint32("pfcswitch.int.hop.checksum_complement", "Checksum complement", base.HEX),
  tx_bytes = ProtoField.uint32("pfcswitch.int.hop.tx_bytes", "Tx bytes (mod 2^32)"),
  link_speed = ProtoField.uint32("pfcswitch.int.hop.link_speed", "Link speed (Mbit/s)"),
  ds_metadata = ProtoField.bytes("pfcswitch.int.hop.ds_metadata", "Domain specific metadata"),
  raw = ProtoField.bytes("pfcswitch.int.hop.raw", "Metadata (not decoded: HopML disagrees with the bitmaps)"),
}
local int_bit_fields, int_ds_bit_fields = {}, {}
for b = 0, 15 do
  int_bit_fields[b] = ProtoField.bool(string.format("pfcswitch.int.instructions.bit%d", b),
    string.format("bit %d: %s%s", b, int_bits[b].name, int_bits[b].supported and "" or " (pfcswitch: all ones)"), 16,
    nil, bit.rshift(0x8000, b))
end
for b = 0, 1 do
  int_ds_bit_fields[b] = ProtoField.bool(string.format("pfcswitch.int.ds_instructions.bit%d", b),
    string.format("DS bit %d: %s", b, int_ds_bits[b].name), 16, nil, bit.rshift(0x8000, b))
end
do
  local list = {}
  for _, field in pairs(i) do list[#list + 1] = field end
  for b = 0, 15 do list[#list + 1] = int_bit_fields[b] end
  for b = 0, 1 do list[#list + 1] = int_ds_bit_fields[b] end
  intp.fields = list
end

local int_malformed = ProtoExpert.new("pfcswitch.int.malformed", "Malformed INT", expert.group.MALFORMED,
  expert.severity.ERROR)
local int_unknown = ProtoExpert.new("pfcswitch.int.unknown", "INT field with an unexpected value",
  expert.group.PROTOCOL, expert.severity.WARN)
intp.experts = { int_malformed, int_unknown }

local udp_ports = DissectorTable.get("udp.port")
local data_dissector = Dissector.get("data")

-- The words a hop takes for the bitmaps (DS bits count only in pfcswitch's domain).
local function int_hop_words(instructions, ds_id, ds)
  local words = 0
  for b = 0, 15 do
    if bit.band(instructions, bit.rshift(0x8000, b)) ~= 0 then words = words + int_bits[b].len / 4 end
  end
  if ds_id == INT_DOMAIN_PFCSWITCH then
    for b = 0, 1 do
      if bit.band(ds, bit.rshift(0x8000, b)) ~= 0 then words = words + 1 end
    end
  end
  return words
end

local function all_ones(range)
  for k = 0, range:len() - 1 do
    if range(k, 1):uint() ~= 0xFF then return false end
  end
  return true
end

-- Adds one field; an all-ones value is "not supported", as pfcswitch fills what it cannot give.
local function int_add(tree, field, range, label)
  local item = tree:add(field, range)
  if all_ones(range) then item:set_text(label .. ": not supported (all ones)") end
  return item
end

-- One hop's fields at `at`, in bitmap order. Returns a one-line summary.
local function dissect_int_hop(tvb, at, tree, instructions, ds_id, ds, hop_bytes)
  local summary = {}
  local start = at
  for b = 0, 14 do
    if bit.band(instructions, bit.rshift(0x8000, b)) ~= 0 then
      local len = int_bits[b].len
      local r = tvb(at, len)
      local unsupported = all_ones(r)
      if b == 0 then
        int_add(tree, i.node_id, r, "Node ID")
        if not unsupported then summary[#summary + 1] = string.format("node %d", r:uint()) end
      elseif b == 1 then
        int_add(tree, i.ingress_port, r(0, 2), "Ingress port")
        int_add(tree, i.egress_port, r(2, 2), "Egress port")
        if not unsupported then summary[#summary + 1] = string.format("port %d>%d", r(0, 2):uint(), r(2, 2):uint()) end
      elseif b == 2 then
        int_add(tree, i.hop_latency, r, "Hop latency")
      elseif b == 3 then
        int_add(tree, i.queue_id, r(0, 1), "Queue ID")
        int_add(tree, i.queue_occupancy, r(1, 3), "Queue occupancy")
        if not unsupported then
          summary[#summary + 1] = string.format("queue %d %d B", r(0, 1):uint(), r(1, 3):uint())
        end
      elseif b == 4 then
        int_add(tree, i.ingress_ts, r, "Ingress timestamp")
      elseif b == 5 then
        int_add(tree, i.egress_ts, r, "Egress timestamp")
        if not unsupported then summary[#summary + 1] = string.format("egress %s ns", tostring(r:uint64())) end
      elseif b == 6 then
        int_add(tree, i.l2_ingress, r(0, 4), "Level 2 ingress interface ID")
        int_add(tree, i.l2_egress, r(4, 4), "Level 2 egress interface ID")
      elseif b == 7 then
        int_add(tree, i.tx_utilization, r, "Egress interface Tx utilization")
      elseif b == 8 then
        int_add(tree, i.buffer_id, r(0, 1), "Buffer ID")
        int_add(tree, i.buffer_occupancy, r(1, 3), "Buffer occupancy")
      else
        int_add(tree, i.reserved_md, r, int_bits[b].name)
      end
      at = at + len
    end
  end
  if ds_id == INT_DOMAIN_PFCSWITCH then
    -- pfcswitch's domain-specific fields, 4 bytes each, in DS bit order.
    local ds_fields = {
      { mask = 0x8000, field = i.tx_bytes, name = "Tx bytes", summary = "tx %d B" },
      { mask = 0x4000, field = i.link_speed, name = "Link speed", summary = "%d Mbit/s" },
    }
    for _, f in ipairs(ds_fields) do
      if bit.band(ds, f.mask) ~= 0 then
        local r = tvb(at, 4)
        local item = tree:add(f.field, r)
        if all_ones(r) then
          item:set_text(f.name .. ": not supported (all ones)")
        else
          summary[#summary + 1] = string.format(f.summary, r:uint())
        end
        at = at + 4
      end
    end
  end
  -- The checksum complement comes last, after the domain-specific metadata (v2.1).
  local cc = bit.band(instructions, 0x0001) ~= 0 and 4 or 0
  local finish = start + hop_bytes - cc
  if at < finish then tree:add(i.ds_metadata, tvb(at, finish - at)) end
  if cc > 0 then int_add(tree, i.checksum_complement, tvb(finish, 4), "Checksum complement") end
  return table.concat(summary, ", ")
end

function intp.dissector(tvb, pinfo, tree)
  local total = tvb:len()
  local item = tree:add(intp, tvb())
  if total < INT_SHIM_LEN then
    item:add_proto_expert_info(int_malformed, string.format("truncated: %d bytes, no room for the shim", total))
    return total
  end
  -- Shim.
  local first = tvb(0, 1):uint()
  local kind = bit.rshift(first, 4)
  local npt = bit.band(bit.rshift(first, 2), 3)
  local length = tvb(1, 1):uint()
  local port = tvb(2, 2):uint()
  local shim = item:add(i.shim, tvb(0, INT_SHIM_LEN))
  local type_item = shim:add(i.type, tvb(0, 1))
  if kind ~= 1 and kind ~= 2 then
    type_item:add_proto_expert_info(int_unknown, "Type is neither 1 (INT-MD) nor 2 (echo)")
  end
  local npt_item = shim:add(i.npt, tvb(0, 1))
  if npt ~= 1 then npt_item:add_proto_expert_info(int_unknown, "NPT is not 1 (original UDP port in the shim)") end
  shim:add(i.shim_reserved, tvb(0, 1))
  shim:add(i.length, tvb(1, 1))
  shim:add(i.port, tvb(2, 2))
  local echo = kind == 2
  pinfo.cols.protocol = "INT"
  shim:append_text(string.format(": %s, Length %d, original port %d", int_types[kind] or "?", length, port))
  -- Bytes of INT (shim + MD header + stack) from the shim's Length, which counts the words
  -- after the shim (MD header + stack), not the shim's own (v2.1).
  local int_bytes = INT_SHIM_LEN + length * 4
  if total < INT_SHIM_LEN + INT_MD_LEN then
    item:add_proto_expert_info(int_malformed, string.format("truncated: %d bytes, no room for the MD header", total))
    return total
  end
  -- MD header.
  local at = INT_SHIM_LEN
  local md = item:add(i.md, tvb(at, INT_MD_LEN))
  local flags = tvb(at, 1):uint()
  local version = bit.rshift(flags, 4)
  local version_item = md:add(i.version, tvb(at, 1))
  if version ~= 2 then version_item:add_proto_expert_info(int_unknown, string.format("version %d, not 2", version)) end
  md:add(i.d, tvb(at, 1))
  md:add(i.e, tvb(at, 1))
  md:add(i.m, tvb(at, 1))
  local hop_ml = bit.band(tvb(at + 2, 1):uint(), 0x1F)
  md:add(i.hop_ml, tvb(at + 2, 1))
  md:add(i.remaining, tvb(at + 3, 1))
  local instructions = tvb(at + 4, 2):uint()
  local bitmap = md:add(i.instructions, tvb(at + 4, 2))
  for b = 0, 15 do bitmap:add(int_bit_fields[b], tvb(at + 4, 2)) end
  local ds_id = tvb(at + 6, 2):uint()
  md:add(i.ds_id, tvb(at + 6, 2))
  local ds = tvb(at + 8, 2):uint()
  local ds_item = md:add(i.ds_instructions, tvb(at + 8, 2))
  if ds_id == INT_DOMAIN_PFCSWITCH then
    for b = 0, 1 do ds_item:add(int_ds_bit_fields[b], tvb(at + 8, 2)) end
  end
  md:add(i.ds_flags, tvb(at + 10, 2))
  local e_set = bit.band(flags, 0x04) ~= 0
  local m_set = bit.band(flags, 0x02) ~= 0
  md:append_text(string.format(": version %d, HopML %d, remaining %d%s%s", version, hop_ml, tvb(at + 3, 1):uint(),
    e_set and ", E" or "", m_set and ", M" or ""))
  at = at + INT_MD_LEN
  -- Hop stack.
  local stack = int_bytes - INT_SHIM_LEN - INT_MD_LEN
  if stack < 0 then
    item:add_proto_expert_info(int_malformed, string.format("Length %d words is shorter than the MD header (3 words)", length))
    return total
  end
  if int_bytes > total then
    item:add_proto_expert_info(int_malformed, string.format("truncated: Length says %d bytes of INT, %d present",
      int_bytes, total))
    return total
  end
  local expected = int_hop_words(instructions, ds_id, ds)
  local decodable = true
  if ds_id == INT_DOMAIN_PFCSWITCH and bit.band(ds, 0x3FFF) ~= 0 then
    ds_item:add_proto_expert_info(int_unknown, "DS instruction bits pfcswitch's domain does not define")
    decodable = false
  elseif ds_id == INT_DOMAIN_PFCSWITCH and hop_ml ~= expected then
    md:add_proto_expert_info(int_malformed, string.format("HopML %d, but the bitmaps ask for %d words", hop_ml,
      expected))
    decodable = false
  elseif ds_id ~= INT_DOMAIN_PFCSWITCH and hop_ml < expected then
    md:add_proto_expert_info(int_malformed, string.format("HopML %d, fewer than the %d words the bitmap asks for",
      hop_ml, expected))
    decodable = false
  end
  local hop_bytes = hop_ml * 4
  local hops = 0
  if stack > 0 and (hop_bytes == 0 or stack % hop_bytes ~= 0) then
    -- Said once: a wrong HopML already explains a stack that is no whole number of hops.
    if decodable then
      item:add_proto_expert_info(int_malformed, string.format("Length %d words: a stack of %d bytes is not a whole "
        .. "number of %d-byte hops (HopML %d)", length, stack, hop_bytes, hop_ml))
    end
    decodable = false
  elseif hop_bytes > 0 then
    hops = stack / hop_bytes
  end
  local hops_item = item:add(i.hops, hops)
  hops_item:set_generated()
  if decodable then
    for index = 1, hops do
      local hop = item:add(i.hop, tvb(at, hop_bytes))
      hop:add(i.hop_index, index):set_generated()
      local summary = dissect_int_hop(tvb, at, hop, instructions, ds_id, ds, hop_bytes)
      local place = ""
      if index == 1 then place = " (newest)" end
      if index == hops and hops > 1 then place = " (oldest)" end
      hop:set_text(string.format("Hop %d%s: %s", index, place, summary))
      at = at + hop_bytes
    end
  elseif stack > 0 then
    item:add(i.raw, tvb(at, stack))
  end
  at = INT_SHIM_LEN + INT_MD_LEN + stack
  local what = echo and "INT echo" or "INT"
  item:append_text(string.format(", %s, %d hop%s, original port %d", echo and "echo (Type 2)" or "INT-MD (Type 1)",
    hops, hops == 1 and "" or "s", port))
  -- The original UDP payload, to Wireshark's dissector for the original port.
  if at < total then
    local rest = tvb(at):tvb()
    local handle = udp_ports:get_dissector(port)
    if handle ~= nil then
      handle:call(rest, pinfo, tree)
    else
      data_dissector:call(rest, pinfo, tree)
    end
  end
  pinfo.cols.info:append(string.format(" [%s %d hop%s%s%s]", what, hops, hops == 1 and "" or "s",
    e_set and ", E" or "", m_set and ", M" or ""))
  return total
end

udp_ports:add(INT_UDP_PORT, intp)

-------------------------------------------------------------------------------
-- The traffic endpoints' header (UDP destination port 39000, version 1)
-------------------------------------------------------------------------------
-- docs/frames.md, "Traffic endpoints' frames": 32 bytes, big-endian; then the payload.
local TRAFFIC_UDP_PORT = 39000
local TRAFFIC_HEADER_LEN = 32
local traffic_kinds = { [0] = "data", [1] = "ACK", [2] = "NAK", [3] = "CNP" }

local traffic = Proto("pfcswitch_traffic", "pfcswitch traffic endpoints' header")
local t = {
  magic = ProtoField.uint16("pfcswitch.traffic.magic", "Magic", base.HEX),
  version = ProtoField.uint8("pfcswitch.traffic.version", "Version"),
  ack_req = ProtoField.bool("pfcswitch.traffic.ack_req", "ACK requested", 8, nil, 0x80),
  kind = ProtoField.uint8("pfcswitch.traffic.kind", "Kind", base.DEC, traffic_kinds, 0x7F),
  flow_id = ProtoField.uint32("pfcswitch.traffic.flow_id", "Flow id"),
  sequence = ProtoField.uint32("pfcswitch.traffic.sequence", "Sequence number"),
  message_id = ProtoField.uint32("pfcswitch.traffic.message_id", "Message id"),
  message_len = ProtoField.uint32("pfcswitch.traffic.message_len", "Message length (bytes)"),
  offset = ProtoField.uint32("pfcswitch.traffic.offset", "Offset in the message"),
  timestamp = ProtoField.uint64("pfcswitch.traffic.timestamp_ns", "Send timestamp, or an ACK's delay at its receiver (ns)"),
  payload = ProtoField.bytes("pfcswitch.traffic.payload", "Payload"),
}
traffic.fields = { t.magic, t.version, t.ack_req, t.kind, t.flow_id, t.sequence, t.message_id, t.message_len,
  t.offset, t.timestamp, t.payload }
local traffic_malformed = ProtoExpert.new("pfcswitch.traffic.malformed", "Malformed traffic header",
  expert.group.MALFORMED, expert.severity.ERROR)
local traffic_unknown = ProtoExpert.new("pfcswitch.traffic.unknown", "Traffic header field with an unexpected value",
  expert.group.PROTOCOL, expert.severity.WARN)
traffic.experts = { traffic_malformed, traffic_unknown }

function traffic.dissector(tvb, pinfo, tree)
  local item, whole = open_item(traffic, "pfcswitch", tvb, pinfo, tree, TRAFFIC_HEADER_LEN, traffic_malformed)
  if not whole then return tvb:len() end
  local magic = item:add(t.magic, tvb(0, 2))
  if tvb(0, 2):uint() ~= 0x5046 then magic:add_proto_expert_info(traffic_unknown, "magic is not 0x5046 (\"PF\")") end
  local version = item:add(t.version, tvb(2, 1))
  if tvb(2, 1):uint() ~= 1 then version:add_proto_expert_info(traffic_unknown, "version is not 1") end
  local kind_byte = tvb(3, 1):uint()
  local name = traffic_kinds[bit.band(kind_byte, 0x7F)]
  local kind = item:add(t.kind, tvb(3, 1))
  if name == nil then kind:add_proto_expert_info(traffic_unknown, "kind is none of data, ACK, NAK, CNP") end
  add_fields(item, tvb, { { t.ack_req, 3, 1 }, { t.flow_id, 4, 4 }, { t.sequence, 8, 4 }, { t.message_id, 12, 4 },
    { t.message_len, 16, 4 }, { t.offset, 20, 4 }, { t.timestamp, 24, 8 } })
  if tvb:len() > TRAFFIC_HEADER_LEN then item:add(t.payload, tvb(TRAFFIC_HEADER_LEN)) end
  local asks = bit.band(kind_byte, 0x80) ~= 0 and ", ACK requested" or ""
  pinfo.cols.info = string.format("%s flow %d seq %d, message %d at %d of %d%s", name or "?", tvb(4, 4):uint(),
    tvb(8, 4):uint(), tvb(12, 4):uint(), tvb(20, 4):uint(), tvb(16, 4):uint(), asks)
  return tvb:len()
end

udp_ports:add(TRAFFIC_UDP_PORT, traffic)
