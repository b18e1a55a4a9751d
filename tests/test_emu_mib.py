"""The kernel's TCP MIB counters kept with an emulated run (ccbench.emu.mib)."""

from ccbench.emu.mib import namespace_tcp_mib, parse_mib

NETSTAT = """TcpExt: SyncookiesSent TCPSackRecovery TCPLostRetransmit TCPTimeouts
TcpExt: 0 290 323 0
IpExt: InNoRoutes InOctets
IpExt: 0 4348000
"""
SNMP = """Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens RetransSegs
Tcp: 1 200 120000 -1 4 3213
"""


def test_parse_mib_pairs_names_with_values_per_protocol():
    d = parse_mib(NETSTAT + SNMP)
    assert d["TcpExt:TCPSackRecovery"] == 290
    assert d["TcpExt:TCPLostRetransmit"] == 323
    assert d["Tcp:RetransSegs"] == 3213
    assert d["Tcp:MaxConn"] == -1
    assert d["IpExt:InOctets"] == 4348000
    assert len(d) == 4 + 2 + 6


def test_parse_mib_skips_a_names_line_without_values():
    assert parse_mib("TcpExt: A B\nTcp: C\nTcp: 7\n") == {"Tcp:C": 7}
    assert parse_mib("") == {}


def test_unreadable_namespace_gives_no_counters():
    assert namespace_tcp_mib("ccb-no-such-namespace-srv") == {}
