-- Wireshark/tshark dissector for the frames pfcswitch defines (see docs/frames.md).
--
--   tshark -X lua_script:contrib/wireshark/pfcswitch.lua -r capture.pcap -V
--   Wireshark: copy this file to ~/.local/lib/wireshark/plugins/ (or `Help > About >
--   Folders > Personal Lua Plugins`) and restart.
--
-- Sections, one per frame kind the project defines; later schemes add theirs below:
--   OFC  the TLV an OFC PAUSE or RESUME carries after the 802.1Qbb PFC fields (byte 34).
--
-- Wireshark's own dissector still decodes the PFC part (macctrl): this is a postdissector
-- that adds what follows it, so a PFC-only reading and the OFC reading coexist.

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
