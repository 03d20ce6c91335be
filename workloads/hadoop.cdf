# Hadoop: flow sizes of Facebook's Hadoop clusters (Roy et al., "Inside the Social Network's
# (Datacenter) Network", SIGCOMM 2015), as HPCC uses them.
#
# Source: HPCC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019),
#   repository alibaba-edu/High-Precision-Congestion-Control, traffic_gen/FbHdp_distribution.txt,
#   https://github.com/alibaba-edu/High-Precision-Congestion-Control/blob/9cf8b9e8c8d04a3775e06c972c4699dcbce53c37/traffic_gen/FbHdp_distribution.txt
# Conversion: cumulative probabilities from percent to fractions (divided by 100); sizes
#   unchanged (bytes). 20 points.
# Mean under linear interpolation: 120,420.75 bytes.
#
# SIZE_BYTES CUMULATIVE_PROBABILITY
0 0
100 0.01
200 0.02
300 0.05
350 0.15
400 0.2
500 0.3
600 0.4
700 0.5
1000 0.6
2000 0.67
7000 0.7
30000 0.72
50000 0.82
80000 0.87
120000 0.9
300000 0.95
1000000 0.975
2000000 0.99
10000000 1
