// The k-ary fat-tree of pfcswitch's `fabric` generator in ns-3 (3.44), running a flow list that
// `pfcswitch scenario simulate` wrote (DIR/flows.txt) with DCTCP senders and RED as a step
// ECN marker, and writing every flow's FCT. scripts/bench-ns3.sh builds and runs it; the model
// mapping is in docs/simulator.md ("Beside ns-3").
//
// Usage: fat-tree-dctcp --flows=FILE --fcts=FILE [--k=8] [--speed=10e9] [...]  (--help)

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <deque>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

using namespace ns3;

namespace
{

// pfcswitch's ECMP picks a port per flow by a hash of addresses and ports; ns-3's global
// routing has only per-packet random ECMP, which reorders TCP. So every node routes with this:
// the next hops on all shortest paths to a host, one chosen per flow by its 5-tuple.
class FlowEcmpRouting : public Ipv4RoutingProtocol
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("FlowEcmpRouting").SetParent<Ipv4RoutingProtocol>();
        return tid;
    }

    struct NextHop
    {
        uint32_t interface;
        Ipv4Address gateway;
    };

    // Host address → the next hops towards it.
    std::map<uint32_t, std::vector<NextHop>> routes;
    uint32_t salt = 0;

    Ptr<Ipv4Route> RouteOutput(Ptr<Packet> p,
                               const Ipv4Header& header,
                               Ptr<NetDevice>,
                               Socket::SocketErrno& sockerr) override
    {
        const NextHop* hop = Choose(p, header);
        if (!hop)
        {
            sockerr = Socket::ERROR_NOROUTETOHOST;
            return nullptr;
        }
        sockerr = Socket::ERROR_NOTERROR;
        return Route(*hop, header);
    }

    bool RouteInput(Ptr<const Packet> p,
                    const Ipv4Header& header,
                    Ptr<const NetDevice> idev,
                    const UnicastForwardCallback& ucb,
                    const MulticastForwardCallback&,
                    const LocalDeliverCallback& lcb,
                    const ErrorCallback& ecb) override
    {
        if (m_ipv4->IsDestinationAddress(header.GetDestination(), m_ipv4->GetInterfaceForDevice(idev)))
        {
            lcb(p, header, m_ipv4->GetInterfaceForDevice(idev));
            return true;
        }
        const NextHop* hop = Choose(p, header);
        if (!hop)
        {
            ecb(p, header, Socket::ERROR_NOROUTETOHOST);
            return false;
        }
        ucb(Route(*hop, header), p, header);
        return true;
    }

    void NotifyInterfaceUp(uint32_t) override {}
    void NotifyInterfaceDown(uint32_t) override {}
    void NotifyAddAddress(uint32_t, Ipv4InterfaceAddress) override {}
    void NotifyRemoveAddress(uint32_t, Ipv4InterfaceAddress) override {}

    void SetIpv4(Ptr<Ipv4> ipv4) override
    {
        m_ipv4 = ipv4;
    }

    void PrintRoutingTable(Ptr<OutputStreamWrapper> stream, Time::Unit) const override
    {
        *stream->GetStream() << routes.size() << " host routes\n";
    }

  private:
    Ptr<Ipv4> m_ipv4;

    // The packet starts with the TCP header here (IP's is apart), or is absent when a socket
    // asks before it has one: a host has a single next hop anyway.
    const NextHop* Choose(Ptr<const Packet> p, const Ipv4Header& header) const
    {
        auto found = routes.find(header.GetDestination().Get());
        if (found == routes.end() || found->second.empty())
        {
            return nullptr;
        }
        const std::vector<NextHop>& hops = found->second;
        if (hops.size() == 1)
        {
            return &hops[0];
        }
        uint8_t ports[4] = {0, 0, 0, 0};
        if (p && p->GetSize() >= 4)
        {
            p->CopyData(ports, 4);
        }
        uint64_t key = (uint64_t(header.GetSource().Get()) << 32) ^ header.GetDestination().Get();
        key ^= (uint64_t(ports[0]) << 24 | uint64_t(ports[1]) << 16 | uint64_t(ports[2]) << 8 | ports[3]) << 7;
        key ^= uint64_t(header.GetProtocol()) << 56 ^ uint64_t(salt) * 0x9E3779B97F4A7C15ULL;
        // SplitMix64's finaliser: every input bit moves the choice.
        key = (key ^ (key >> 30)) * 0xBF58476D1CE4E5B9ULL;
        key = (key ^ (key >> 27)) * 0x94D049BB133111EBULL;
        key ^= key >> 31;
        return &hops[key % hops.size()];
    }

    Ptr<Ipv4Route> Route(const NextHop& hop, const Ipv4Header& header) const
    {
        Ptr<Ipv4Route> route = Create<Ipv4Route>();
        route->SetDestination(header.GetDestination());
        route->SetGateway(hop.gateway);
        route->SetSource(m_ipv4->GetAddress(hop.interface, 0).GetLocal());
        route->SetOutputDevice(m_ipv4->GetNetDevice(hop.interface));
        return route;
    }
};

class FlowEcmpRoutingHelper : public Ipv4RoutingHelper
{
  public:
    // Node id → its routing, filled in once every address is known.
    std::map<uint32_t, Ptr<FlowEcmpRouting>>* made;
    uint32_t salt;

    FlowEcmpRoutingHelper(std::map<uint32_t, Ptr<FlowEcmpRouting>>* made, uint32_t salt)
        : made(made),
          salt(salt)
    {
    }

    Ipv4RoutingHelper* Copy() const override
    {
        return new FlowEcmpRoutingHelper(made, salt);
    }

    Ptr<Ipv4RoutingProtocol> Create(Ptr<Node> node) const override
    {
        Ptr<FlowEcmpRouting> routing = CreateObject<FlowEcmpRouting>();
        // Per node, so that two tiers do not pick alike (no hash polarisation).
        routing->salt = node->GetId() + salt * 1000003;
        (*made)[node->GetId()] = routing;
        return routing;
    }
};

struct Flow
{
    uint32_t connection;
    uint32_t message;
    uint32_t sender;
    uint32_t receiver;
    uint64_t size;
    uint64_t start_ns;
    Ptr<Socket> socket;
    bool started = false;
    uint64_t queued = 0; // bytes handed to the socket so far
    int64_t finish_ns = -1;
};

std::vector<Flow> flows;
uint64_t finished = 0;
uint64_t packet_hops = 0;

void
Refill(uint32_t f, Ptr<Socket> socket, uint32_t available)
{
    Flow& flow = flows[f];
    // The socket also calls this when its handshake completes, before the flow's start.
    if (!flow.started)
    {
        return;
    }
    while (flow.queued < flow.size && available > 0)
    {
        uint32_t chunk = uint32_t(std::min<uint64_t>({flow.size - flow.queued, available, 1 << 16}));
        int sent = socket->Send(Create<Packet>(chunk));
        if (sent <= 0)
        {
            return;
        }
        flow.queued += uint64_t(sent);
        available -= uint32_t(sent);
    }
}

void
Start(uint32_t f)
{
    flows[f].started = true;
    Refill(f, flows[f].socket, flows[f].socket->GetTxAvailable());
}

// The sender's highest cumulative ACK: the flow is complete when its last byte is
// acknowledged (sequence 1 is the first data byte; the SYN took 0), as pfcswitch's FCT ends
// when the message's last segment is acknowledged.
void
Acked(uint32_t f, SequenceNumber32, SequenceNumber32 ack)
{
    Flow& flow = flows[f];
    if (flow.finish_ns < 0 && flow.queued == flow.size && uint64_t(ack.GetValue()) >= flow.size + 1)
    {
        flow.finish_ns = int64_t(Simulator::Now().GetNanoSeconds());
        if (++finished == flows.size())
        {
            Simulator::Stop();
        }
    }
}

void
Drain(Ptr<Socket> socket)
{
    while (socket->Recv(1 << 20, 0))
    {
    }
}

void
Accept(Ptr<Socket> socket, const Address&)
{
    socket->SetRecvCallback(MakeCallback(&Drain));
}

void
CountHop(Ptr<const Packet>)
{
    ++packet_hops;
}

std::vector<Flow>
ReadFlows(const std::string& path)
{
    std::ifstream in(path);
    if (!in)
    {
        NS_FATAL_ERROR("cannot read the flow list " << path);
    }
    std::vector<Flow> list;
    std::string line;
    for (size_t number = 1; std::getline(in, line); ++number)
    {
        if (line.empty() || line[0] == '#')
        {
            continue;
        }
        std::istringstream fields(line);
        Flow flow;
        if (!(fields >> flow.connection >> flow.message >> flow.sender >> flow.receiver >> flow.size >>
              flow.start_ns))
        {
            NS_FATAL_ERROR(path << ":" << number << ": expected six numbers, got `" << line << "`");
        }
        list.push_back(flow);
    }
    return list;
}

} // namespace

int
main(int argc, char* argv[])
{
    std::string flowsPath;
    std::string fctsPath;
    uint32_t k = 8;
    double speed = 10e9;
    uint32_t cableNs = 1000;
    // pfcswitch's full segment: a 1518-byte tagged frame (FCS, preamble and gap add 24 on
    // the wire) carrying 1440 bytes of payload; ns-3's is MSS + 40 bytes of TCP/IP + 2 of PPP.
    uint32_t mss = 1440;
    uint32_t frameLen = 1518;
    uint64_t ecnBytes = 100000;
    uint64_t queueBytes = 1000000;
    uint32_t window = 128;
    uint32_t initialWindow = 10;
    uint32_t ackEvery = 1;
    uint32_t rtoUs = 1000;
    uint64_t epochNs = 10000000;
    uint64_t durationNs = 20000000;
    uint64_t drainNs = 500000000;
    uint32_t ecmpSalt = 0;

    CommandLine cmd(__FILE__);
    cmd.AddValue("flows", "flow list (pfcswitch's DIR/flows.txt)", flowsPath);
    cmd.AddValue("fcts", "where to write `connection message fct_ns` per flow", fctsPath);
    cmd.AddValue("k", "fat-tree arity", k);
    cmd.AddValue("speed", "every link's rate in bit/s (pfcswitch's, with Ethernet framing)", speed);
    cmd.AddValue("cable", "every link's propagation delay in ns", cableNs);
    cmd.AddValue("mss", "TCP payload of a full segment (pfcswitch's payload per segment)", mss);
    cmd.AddValue("frame", "pfcswitch's full frame length without FCS", frameLen);
    cmd.AddValue("ecn", "ECN step threshold in bytes of pfcswitch frames", ecnBytes);
    cmd.AddValue("queue", "egress queue limit in bytes of pfcswitch frames", queueBytes);
    cmd.AddValue("window", "most segments in flight", window);
    cmd.AddValue("iw", "initial window in segments", initialWindow);
    cmd.AddValue("ack-every", "segments per ACK (DelAckCount)", ackEvery);
    cmd.AddValue("rto-us", "minimum retransmission timeout in µs", rtoUs);
    cmd.AddValue("epoch", "when the flow list's time 0 is, in ns", epochNs);
    cmd.AddValue("duration", "the workload's length in ns (flows start within it)", durationNs);
    cmd.AddValue("drain", "how long after the workload flows may take, in ns", drainNs);
    cmd.AddValue("ecmp-salt", "another value draws other paths for the same flows", ecmpSalt);
    cmd.Parse(argc, argv);
    if (flowsPath.empty() || fctsPath.empty())
    {
        NS_FATAL_ERROR("--flows and --fcts are required");
    }
    flows = ReadFlows(flowsPath);

    // ns-3's point-to-point link carries the IP packet and a 2-byte PPP header, no preamble,
    // gap, FCS or Ethernet header: the rate is scaled so that a full segment takes as long on
    // the wire as pfcswitch's full frame (frame + 24 bytes at `speed`), and byte thresholds
    // count IP bytes in the same proportion.
    const uint32_t ipPacket = mss + 40;
    const double scale = double(ipPacket + 2) / double(frameLen + 24);
    const DataRate rate(uint64_t(speed * scale));
    const double queueScale = double(ipPacket) / double(frameLen);
    const uint64_t ecnIp = uint64_t(double(ecnBytes) * queueScale);
    const uint64_t queueIp = uint64_t(double(queueBytes) * queueScale);

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpDctcp::GetTypeId()));
    Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue("On"));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(initialWindow));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(ackEvery));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(window * mss));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 22));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MicroSeconds(rtoUs)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MicroSeconds(1)));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(MilliSeconds(1)));
    GlobalValue::Bind("ChecksumEnabled", BooleanValue(false));

    // pfcswitch's `fabric` fat-tree: edges pod by pod, then aggregations, then cores; host h
    // on edge h / (k/2), its port h % (k/2).
    const uint32_t half = k / 2;
    const uint32_t hostCount = k * half * half;
    const uint32_t edges = k * half;
    const uint32_t cores = half * half;
    NodeContainer hosts;
    hosts.Create(hostCount);
    NodeContainer switches;
    switches.Create(2 * edges + cores);

    std::map<uint32_t, Ptr<FlowEcmpRouting>> routing;
    FlowEcmpRoutingHelper routingHelper(&routing, ecmpSalt);
    InternetStackHelper stack;
    stack.SetRoutingHelper(routingHelper);
    stack.Install(hosts);
    stack.Install(switches);

    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", DataRateValue(rate));
    p2p.SetChannelAttribute("Delay", TimeValue(NanoSeconds(cableNs)));
    // One packet in the device: the queue is the queue disc's, where RED sees it.
    p2p.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));

    TrafficControlHelper red;
    red.SetRootQueueDisc("ns3::RedQueueDisc",
                         "MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::BYTES, queueIp)),
                         "MinTh", DoubleValue(double(ecnIp)),
                         "MaxTh", DoubleValue(double(ecnIp)),
                         "QW", DoubleValue(1.0),
                         "UseEcn", BooleanValue(true),
                         "UseHardDrop", BooleanValue(false),
                         "MeanPktSize", UintegerValue(ipPacket),
                         "LinkBandwidth", DataRateValue(rate),
                         "LinkDelay", TimeValue(NanoSeconds(cableNs)));
    // pfcswitch's host sends its connections' segments in turn, one at a time; ns-3's TCP puts
    // a window's segments in one queue at once. Flow queueing in the host (fq_codel with a
    // target no queue reaches: no drops, no marks) serves them in turn, as ours does.
    TrafficControlHelper nic;
    nic.SetRootQueueDisc("ns3::FqCoDelQueueDisc",
                         "MaxSize", StringValue("100000p"),
                         "Target", StringValue("10s"),
                         "Interval", StringValue("100s"));

    Ipv4AddressHelper addresses;
    addresses.SetBase("10.0.0.0", "255.255.255.252");
    // Node id → (interface, neighbour's node id, neighbour's address) per link.
    struct Neighbour
    {
        uint32_t interface;
        uint32_t node;
        Ipv4Address address;
    };
    std::map<uint32_t, std::vector<Neighbour>> neighbours;
    QueueDiscContainer queues;
    std::vector<Ipv4Address> hostAddress(hostCount);
    auto join = [&](Ptr<Node> a, Ptr<Node> b, bool aIsHost) {
        NetDeviceContainer devices = p2p.Install(a, b);
        queues.Add((aIsHost ? nic : red).Install(devices.Get(0)));
        queues.Add(red.Install(devices.Get(1)));
        Ipv4InterfaceContainer ifs = addresses.Assign(devices);
        addresses.NewNetwork();
        neighbours[a->GetId()].push_back({ifs.Get(0).second, b->GetId(), ifs.GetAddress(1)});
        neighbours[b->GetId()].push_back({ifs.Get(1).second, a->GetId(), ifs.GetAddress(0)});
        return ifs;
    };
    for (uint32_t pod = 0; pod < k; ++pod)
    {
        for (uint32_t i = 0; i < half; ++i)
        {
            const uint32_t edge = pod * half + i;
            const uint32_t aggregation = edges + pod * half + i;
            for (uint32_t port = 0; port < half; ++port)
            {
                const uint32_t host = edge * half + port;
                hostAddress[host] = join(hosts.Get(host), switches.Get(edge), true).GetAddress(0);
            }
        }
        for (uint32_t i = 0; i < half; ++i)
        {
            for (uint32_t port = 0; port < half; ++port)
            {
                join(switches.Get(pod * half + i), switches.Get(edges + pod * half + port), false);
                join(switches.Get(edges + pod * half + i), switches.Get(2 * edges + i * half + port), false);
            }
        }
    }

    // Next hops towards each host: the neighbours one hop closer to it (breadth first).
    const uint32_t nodeCount = NodeList::GetNNodes();
    for (uint32_t h = 0; h < hostCount; ++h)
    {
        std::vector<uint32_t> distance(nodeCount, UINT32_MAX);
        std::deque<uint32_t> frontier{hosts.Get(h)->GetId()};
        distance[frontier.front()] = 0;
        while (!frontier.empty())
        {
            uint32_t node = frontier.front();
            frontier.pop_front();
            for (const Neighbour& n : neighbours[node])
            {
                if (distance[n.node] == UINT32_MAX)
                {
                    distance[n.node] = distance[node] + 1;
                    frontier.push_back(n.node);
                }
            }
        }
        for (auto& [node, list] : neighbours)
        {
            for (const Neighbour& n : list)
            {
                if (node != hosts.Get(h)->GetId() && distance[n.node] + 1 == distance[node])
                {
                    routing[node]->routes[hostAddress[h].Get()].push_back({n.interface, n.address});
                }
            }
        }
    }

    Config::ConnectWithoutContext("/NodeList/*/DeviceList/*/$ns3::PointToPointNetDevice/PhyTxBegin",
                                  MakeCallback(&CountHop));

    const uint16_t port = 5000;
    for (uint32_t h = 0; h < hostCount; ++h)
    {
        Ptr<Socket> listener = Socket::CreateSocket(hosts.Get(h), TcpSocketFactory::GetTypeId());
        listener->Bind(InetSocketAddress(Ipv4Address::GetAny(), port));
        listener->Listen();
        listener->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(), MakeCallback(&Accept));
    }
    // Each flow is a connection of its own, opened before the workload starts (pfcswitch's
    // transport has no handshake), spread over the first half of the lead-in.
    for (uint32_t f = 0; f < flows.size(); ++f)
    {
        Flow& flow = flows[f];
        if (flow.sender >= hostCount || flow.receiver >= hostCount)
        {
            NS_FATAL_ERROR("flow " << flow.connection << ": host out of range (" << hostCount << " hosts)");
        }
        flow.socket = Socket::CreateSocket(hosts.Get(flow.sender), TcpSocketFactory::GetTypeId());
        flow.socket->Bind();
        flow.socket->TraceConnectWithoutContext("HighestRxAck", MakeBoundCallback(&Acked, f));
        flow.socket->SetSendCallback(MakeBoundCallback(&Refill, f));
        Ptr<Socket> socket = flow.socket;
        const InetSocketAddress to(hostAddress[flow.receiver], port);
        Simulator::Schedule(NanoSeconds(f * (epochNs / 2) / std::max<size_t>(flows.size(), 1)),
                            [socket, to]() { socket->Connect(to); });
        Simulator::Schedule(NanoSeconds(epochNs + flow.start_ns), &Start, f);
    }

    Simulator::Stop(NanoSeconds(epochNs + durationNs + drainNs));
    const auto wall = std::chrono::steady_clock::now();
    Simulator::Run();
    const double wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count();
    const double simulated = Simulator::Now().GetSeconds();
    const uint64_t events = Simulator::GetEventCount();
    uint64_t drops = 0;
    uint64_t marks = 0;
    for (auto q = queues.Begin(); q != queues.End(); ++q)
    {
        drops += (*q)->GetStats().nTotalDroppedPackets;
        marks += (*q)->GetStats().nTotalMarkedPackets;
    }
    Simulator::Destroy();

    std::ofstream out(fctsPath);
    out << "# connection message fct_ns (- if unfinished)\n";
    for (const Flow& flow : flows)
    {
        out << flow.connection << " " << flow.message << " ";
        if (flow.finish_ns < 0)
        {
            out << "-\n";
        }
        else
        {
            out << uint64_t(flow.finish_ns) - (epochNs + flow.start_ns) << "\n";
        }
    }
    std::cout << "ns-3: " << flows.size() << " flows, " << finished << " finished; simulated_seconds "
              << simulated << " wall_seconds " << wallSeconds << " events " << events << " packet_hops "
              << packet_hops << " drops " << drops << " marks " << marks << std::endl;
    return 0;
}
