"""cocktail_lab: the lab library shared by the VM tests (tests/vm) and the
bench (bench/). It builds shaped namespace topologies, runs traffic, takes
packet captures and reads what the kernel reports (tcp_info, module
parameters and counters, the probe's generic netlink family).

Modules:
    topo       namespaces joined by veth with netem/tbf shaping (netem-topo's engine)
    capture    tcpdump captures and their analysis (flights, gaps, retransmissions)
    tcpinfo    struct tcp_info decoding (getsockopt and inet_diag)
    genl       the tcp_oooprobe generic netlink family
    modparams  /sys/module parameters and the module's counters
    proc       processes and sysctls inside namespaces
    traffic    keep-alive request/response traffic and bulk flows

Everything here runs as root inside the test VM; nothing imports tests/ or
bench/.
"""
