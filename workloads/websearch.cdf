# WebSearch: flow sizes of the web-search cluster measured in DCTCP (Alizadeh et al.,
# "Data Center TCP (DCTCP)", SIGCOMM 2010), the workload pFabric and HPCC evaluate with.
#
# Source: HPCC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019),
#   repository alibaba-edu/High-Precision-Congestion-Control, traffic_gen/WebSearch_distribution.txt,
#   https://github.com/alibaba-edu/High-Precision-Congestion-Control/blob/9cf8b9e8c8d04a3775e06c972c4699dcbce53c37/traffic_gen/WebSearch_distribution.txt
# Conversion: cumulative probabilities from percent to fractions (divided by 100); sizes
#   unchanged (bytes). 12 points.
# Mean under linear interpolation: 1,711,250 bytes.
#
# SIZE_BYTES CUMULATIVE_PROBABILITY
0 0
10000 0.15
20000 0.2
30000 0.3
50000 0.4
80000 0.53
200000 0.6
1000000 0.7
2000000 0.8
5000000 0.9
10000000 0.97
30000000 1
