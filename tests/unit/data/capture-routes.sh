#!/usr/bin/env bash
# Regenerate the `ip -j route` fixtures used by tests/unit/test_tcp_tune.py.
# Run as root inside the test VM (never on a real host's own namespace):
#   dev/vm-run tests/unit/data/capture-routes.sh
# It builds a throw-away namespace with routes carrying many attributes
# (gateways, src, proto, scope, metric, locked metrics, multipath, nhid,
# onlink, blackhole/unreachable, tos, other tables, IPv6 pref) and writes
# what iproute2 really prints, so the parser is tested on real output.
set -euo pipefail
cd "$(dirname "$0")"
ns=ttcap$$
ip netns add "$ns"
trap 'ip netns del "$ns"' EXIT
n() { ip -n "$ns" "$@"; }
n link set lo up
n link add veth0 type veth peer name veth1
n link add dummy0 type dummy
n link set veth0 up; n link set veth1 up; n link set dummy0 up
n addr add 198.18.0.1/24 dev veth0
n addr add 198.18.1.1/24 dev veth1
n addr add 198.18.2.1/24 dev dummy0
n -6 addr add fd00:cc::1/64 dev veth0 nodad
n -6 addr add fd00:cc:1::1/64 dev veth1 nodad
n -6 addr add fd00:cc:2::1/64 dev dummy0 nodad
# IPv4
n route add default via 198.18.0.2 dev veth0 proto static metric 100 src 198.18.0.1 \
	mtu lock 1400 advmss 1360 initcwnd 10 initrwnd 20 quickack 1 congctl cubic \
	rto_min 300ms features ecn window 65535 hoplimit 64 reordering 5 ssthresh 30 \
	rtt 100ms rttvar 50ms fastopen_no_cookie 1
n route add default via 198.18.1.2 dev veth1 metric 200 initcwnd 4
n route add 198.19.0.0/16 via 198.18.0.2 dev veth0 proto bird metric 50 congctl lock reno rto_min 50ms
n route add 198.19.1.0/24 dev dummy0 scope link initrwnd 40
n route add 198.19.2.0/24 proto static \
	nexthop via 198.18.0.2 dev veth0 weight 1 nexthop via 198.18.1.2 dev veth1 weight 3
n route add 198.19.3.0/24 via 198.18.9.9 dev veth0 onlink quickack 0
n route add blackhole 198.19.4.0/24
n route add unreachable 198.19.5.0/24 metric 7
n route add prohibit 198.19.6.0/24
n route add 198.19.7.0/24 tos 0x10 via 198.18.0.2 dev veth0 initcwnd 8
n route add 198.19.8.0/24 via 198.18.0.2 dev veth0 table 100 initcwnd 2
n route add default via 198.18.1.2 dev veth1 table 100
n nexthop add id 17 via 198.18.0.2 dev veth0
n route add 198.19.9.0/24 nhid 17 initcwnd 6
n route add throw 198.19.10.0/24 table 100
# IPv6
n -6 route add default via fd00:cc::2 dev veth0 metric 1024 pref high \
	mtu 1400 initcwnd 10 initrwnd 10 quickack 1 congctl cubic rto_min 200ms hoplimit 60
n -6 route add default via fd00:cc:1::2 dev veth1 metric 2048 initcwnd 4
n -6 route add fd00:cc:10::/48 via fd00:cc::2 dev veth0 proto static metric 10 src fd00:cc::1 advmss 1300 features ecn
n -6 route add fd00:cc:11::/48 proto static \
	nexthop via fd00:cc::2 dev veth0 weight 2 nexthop via fd00:cc:1::2 dev veth1 weight 1
n -6 route add blackhole fd00:cc:12::/48
n -6 route add fd00:cc:13::/48 dev dummy0 rto_min 20ms table 100
n nexthop add id 18 via fd00:cc::2 dev veth0
n -6 route add fd00:cc:14::/48 nhid 18
sleep 1
n -4 -j route show table all >ip4-route-table-all.json
n -6 -j route show table all >ip6-route-table-all.json
n -6 -j route show >ip6-route-main.json
# without -4/-6, "table all" lists both families (iproute2 6.1)
n -j route show table all >route-table-all-nofamily.json
n -4 -j route show >ip4-route-main.json
n -4 -j -d route show table all >ip4-route-table-all-details.json
n -6 -j -d route show table all >ip6-route-table-all-details.json
n -j route get 198.19.1.7 >ip4-route-get.json
n -j route get 198.19.77.1 >ip4-route-get-default.json
n -6 -j route get fd00:cc:10::5 >ip6-route-get.json
# text form too, only for humans comparing with the JSON
n -4 route show table all >ip4-route-table-all.txt
n -6 route show table all >ip6-route-table-all.txt
ip -V >iproute2-version.txt
uname -r >>iproute2-version.txt
echo "captured into $(pwd)"
