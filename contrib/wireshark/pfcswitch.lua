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
  item:add(p.hops, tvb(1, 1))
  item:add(p.flow_id, tvb(2, 2))
  item:add(p.sequence, tvb(4, 4))
  item:add(p.rate, tvb(8, 4))
  item:add(p.bottleneck, tvb(12, 6))
  item:add(p.timestamp, tvb(18, 8))
  pinfo.cols.info = string.format("FECN %s flow %d seq %d, rate %d kbit/s after %d hops", kind or "?",
    tvb(2, 2):uint(), tvb(4, 4):uint(), tvb(8, 4):uint(), tvb(1, 1):uint())
  return FECN_PROBE_LEN
end

ethertypes:add(0x88B5, fecn)
