# Data Mining: flow sizes of the data-mining cluster measured in VL2 (Greenberg et al.,
# "VL2: A Scalable and Flexible Data Center Network", SIGCOMM 2009), the workload pFabric,
# pHost and Homa evaluate with.
#
# Source: YAPS, the simulator of pHost (Gao et al., CoNEXT 2015),
#   repository NetSys/simulator, py/CDF_datamining.txt,
#   https://github.com/NetSys/simulator/blob/117bb0c30102db860ef206aefccfbb960cbf0a5e/py/CDF_datamining.txt
# Conversion: the source has three columns, size in packets, an unused 1, cumulative
#   probability (fractions); the middle column is dropped and packets are multiplied by
#   1460 bytes, the payload per packet YAPS gives a flow (coresim/event.cpp: size = packets
#   * 1460). 9 points. The first two points share a size: half of the flows are exactly one
#   packet (1460 bytes).
# Mean under linear interpolation: 7,470,236 bytes (YAPS prints the same, 5116.6 packets).
#
# SIZE_BYTES CUMULATIVE_PROBABILITY
1460 0
1460 0.5
2920 0.6
4380 0.7
10220 0.8
389820 0.9
3076220 0.95
97333820 0.99
973333820 1
