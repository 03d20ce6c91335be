"""HPCC's fairness on one bottleneck as the authors' ns-3 code runs it, without pfcswitch
(issue 47): a small event-driven model that follows, step by step, `rdma-hw.cc`'s
HandleAckHp / UpdateRateHp / FastReactHp / ChangeRate / UpdateNextAvail (MULTI_RATE 0,
MI_THRESH 0, FAST_REACT 1, VAR_WIN 1, rate-bound pacing), `rdma-queue-pair.cc`'s GetWin /
IsWinBound and `switch-node.cc`'s SwitchNotifyDequeue (PushHop(now, m_txBytes before this
packet, queue bytes after its dequeue)), on sim/tests/delay_cc_network.rs's setting: 4
senders -> 1 switch (FIFO) -> 1 receiver at 100 Gbit/s, 1 us cables, flows joining 300 us
apart, one ACK per packet (the reverse path a fixed delay). Not modelled: PFC, INT field
quantisation. Prints Jain's index over the last 2 ms and, per flow, its mean U, the mean
queue its own records carry, its commits in those 2 ms and its rate. Usage: python3 bench/ns3/hpcc_fairness_model.py [rai_mbps] [run_ms] [-|noq|wire|noq,wire] [payload]"""
import heapq, sys

LINE = 100e9
DELAY = 1000          # ns per cable
PAYLOAD = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
DATA = PAYLOAD + 48   # on the wire: payload + headers + one INT hop (approx.)
ACK = 100
ETA = 0.95
RAI = float(sys.argv[1]) * 1e6 if len(sys.argv) > 1 else 40e6
RUN = float(sys.argv[2]) * 1e6 if len(sys.argv) > 2 else 12e6
NOQ = len(sys.argv) > 3 and "noq" in sys.argv[3]
# "wire": the wire carries 24 B per frame (preamble, SFD, IFG, FCS) that the INT byte counter
# does not count, as in pfcswitch; ns-3 counts what it serialises.
WIRE = 24 if len(sys.argv) > 3 and "wire" in sys.argv[3] else 0
MINRATE = 100e6
N = 4
STAGGER = 300_000
ser = lambda size, rate=LINE: size * 8 / rate * 1e9   # ns
BASE_RTT = 2 * (ser(DATA) + DELAY) + 2 * (ser(ACK) + DELAY)
WIN = int(LINE * BASE_RTT * 1e-9 / 8)                  # m_win: the BDP, bytes

class Qp:
    def __init__(s, i):
        s.i = i; s.snd_nxt = 0; s.snd_una = 0; s.rate = LINE; s.cur_rate = LINE
        s.next_avail = 0.0; s.last_size = DATA; s.last_update_seq = 0; s.u = 1.0
        s.hop = None; s.inc_stage = 0; s.version = 0; s.link_free = 0.0
        s.usum = 0.0; s.qsum = 0.0; s.n = 0; s.commits = 0
    def win(s):
        w = int(WIN * s.rate / LINE)
        return max(w, 1)
    def win_bound(s):
        return s.snd_nxt - s.snd_una >= s.win()

events = []; seq = 0
def at(t, kind, *args):
    global seq
    seq += 1
    heapq.heappush(events, (t, seq, kind, args))

qps = [Qp(i) for i in range(N)]
# switch egress to the receiver: FIFO
fifo = []; fifo_bytes = 0; sw_free = 0.0; tx_bytes = 0; sw_busy = False
rx_expected = [0] * N; rx_bytes = [0] * N; rx_mark = [0] * N
MEASURE_FROM = RUN - 2e6

def try_send(qp, now):
    # the NIC's DequeueAndTransmit for this host's one QP
    if now < qp.i * STAGGER: return
    if qp.win_bound(): return
    t = max(qp.next_avail, qp.link_free)
    if t > now + 1e-9:
        qp.version += 1; at(t, "nic", qp.i, qp.version); return
    s = qp.snd_nxt; qp.snd_nxt += PAYLOAD
    qp.last_size = DATA
    qp.next_avail = now + ser(DATA, qp.rate)   # UpdateNextAvail (m_rateBound)
    qp.link_free = now + ser(DATA)
    at(now + ser(DATA) + DELAY, "sw_arrive", qp.i, s)
    qp.version += 1; at(max(qp.next_avail, qp.link_free), "nic", qp.i, qp.version)

def sw_kick(now):
    global sw_busy, fifo_bytes, tx_bytes, sw_free
    if sw_busy or not fifo: return
    i, s = fifo.pop(0); fifo_bytes -= DATA
    rec = (now, tx_bytes, fifo_bytes)            # PushHop(Now, m_txBytes, GetNBytesTotal)
    tx_bytes += DATA - WIRE                      # m_txBytes += size, after
    sw_busy = True
    at(now + ser(DATA), "sw_done")
    at(now + ser(DATA) + DELAY, "rx", i, s, rec)

def change_rate(qp, new_rate):
    old_t = ser(qp.last_size, qp.rate); new_t = ser(qp.last_size, new_rate)
    qp.next_avail = qp.next_avail + new_t - old_t
    qp.rate = new_rate

def on_ack(qp, now, ack_seq, rec):
    if ack_seq > qp.snd_una: qp.snd_una = ack_seq
    fast = not (ack_seq > qp.last_update_seq)
    next_seq = qp.snd_nxt
    if qp.last_update_seq == 0:
        qp.last_update_seq = next_seq; qp.hop = rec
    else:
        ts, txb, ql = rec; pts, ptxb, pql = qp.hop
        tau = ts - pts
        U = 0.0; dt = 0
        if tau > 0:
            tx_rate = (txb - ptxb) * 8 / (tau * 1e-9)
            q = 0 if NOQ else min(ql, pql)
            u = tx_rate / LINE + q * LINE / LINE / WIN
            if u > U: U = u; dt = tau
        qp.hop = rec
        if dt > BASE_RTT: dt = BASE_RTT
        if U > 0:
            qp.u = (qp.u * (BASE_RTT - dt) + U * dt) / BASE_RTT
            max_c = qp.u / ETA
            if max_c >= 1 or qp.inc_stage >= 0:   # MI_THRESH 0
                new_rate = qp.cur_rate / max_c + RAI; new_stage = 0
            new_rate = min(max(new_rate, MINRATE), LINE)
            if now >= MEASURE_FROM: qp.usum += qp.u; qp.qsum += ql; qp.n += 1
            change_rate(qp, new_rate)
            if not fast:
                qp.cur_rate = new_rate; qp.inc_stage = new_stage
                if now >= MEASURE_FROM: qp.commits += 1
        if not fast and next_seq > qp.last_update_seq: qp.last_update_seq = next_seq
    try_send(qp, now)   # TriggerTransmit

for qp in qps: at(qp.i * STAGGER, "nic", qp.i, 0)
ack_delay = 2 * (ser(ACK) + DELAY)
while events:
    now, _, kind, args = heapq.heappop(events)
    if now > RUN: break
    if kind == "nic":
        qp = qps[args[0]]
        if args[1] != qp.version and args[1] != 0: continue
        try_send(qp, now)
    elif kind == "sw_arrive":
        fifo.append(args); fifo_bytes += DATA; sw_kick(now)
    elif kind == "sw_done":
        sw_busy = False; sw_kick(now)
    elif kind == "rx":
        i, s, rec = args
        if s == rx_expected[i]:
            rx_expected[i] += PAYLOAD
            if now >= MEASURE_FROM: rx_bytes[i] += PAYLOAD
        at(now + ack_delay, "ack", i, rx_expected[i], rec)
    elif kind == "ack":
        i, a, rec = args
        on_ack(qps[i], now, a, rec)

g = [b * 8 / ((RUN - MEASURE_FROM) * 1e-9) / 1e9 for b in rx_bytes]
j = sum(g) ** 2 / (N * sum(x * x for x in g))
print(f"R_AI {RAI/1e6:.0f} Mbit/s, run {RUN/1e6:.0f} ms{' (no queue term)' if NOQ else ''}{' (24 B/frame uncounted)' if WIRE else ''}, payload {PAYLOAD}: J {j:.4f}, goodput Gbit/s over the last 2 ms: "
      + " ".join(f"{x:.1f}" for x in g))
for qp in qps:
    print(f"  flow {qp.i}: mean U {qp.usum/max(qp.n,1):.4f}, mean queue seen {qp.qsum/max(qp.n,1):.0f} B, commits {qp.commits}, rate {qp.rate/1e9:.2f}G")
