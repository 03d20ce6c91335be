# Storage: flow sizes of the distributed-storage workload of HPCC (Li et al., "HPCC: High
# Precision Congestion Control", SIGCOMM 2019), named AliStorage2019 in its repository.
#
# Source: repository alibaba-edu/High-Precision-Congestion-Control, traffic_gen/AliStorage2019.txt,
#   https://github.com/alibaba-edu/High-Precision-Congestion-Control/blob/fe18e47f4cded502eb5f9c99e4a4941645ab889b/traffic_gen/AliStorage2019.txt
# Conversion: cumulative probabilities from percent to fractions (divided by 100); sizes
#   unchanged (bytes). 9 points.
# Mean under linear interpolation: 40,869.8 bytes.
#
# SIZE_BYTES CUMULATIVE_PROBABILITY
0 0
4000 0.2293
8000 0.6921
16000 0.8061
32000 0.9047
64000 0.9353
128000 0.9677
256000 0.9753
2000000 1
