#!/usr/bin/env bash
# System packages the test suite uses, installed only when missing:
#   chromium  - the HTML-report test opens the report in headless Chromium
#   iproute2  - the emulator builds network namespaces with `ip netns`
#   iperf3    - the emulator's iperf3 traffic source (--traffic-source iperf3)
#   tshark    - the pcap tests check Wireshark's TCP analysis of a capture
#   ns2       - ns-2.35 with NS-2 TCP-Linux: the Wei Table 3.1 cross-check runs the thesis's own simulator
# Needs root (as on CI); without it, the tests that need these skip with a reason.
set -euo pipefail
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v ip >/dev/null 2>&1 || need+=(iproute2)
command -v tshark >/dev/null 2>&1 || need+=(tshark)
command -v iperf3 >/dev/null 2>&1 || need+=(iperf3)
command -v ns >/dev/null 2>&1 || need+=(ns2)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
    echo "system-deps: not root; skipping ${need[*]} (the tests that need them will be skipped)" >&2
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
