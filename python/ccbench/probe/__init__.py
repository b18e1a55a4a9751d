"""Path loss-process probe after Wei's PlanetLab UDP loss-measurement system (thesis
§4.3), driving the ``ccprobe`` binary (``crates/ccprobe``).

A ``ccprobe server`` receives UDP test packets (sequence number, timestamp, HMAC tag;
probe protocol v2) and reports losses over a TCP control connection, with a 128-packet
reordering window;
a ``ccprobe client`` sends them smooth (paced CBR) or bursty (TCP-like on/off within an
RTT) and writes one record per packet. This module finds the binary, runs server and
client, and turns the client's records into a :class:`ccbench.run.Run`. Like the
emulator's package (:mod:`ccbench.emu`), it is a backend that drives one of the project's
binaries: ``runner.py`` starts server and client (:func:`probe` is one measurement),
``tables.py`` turns records into the Run tables, ``loss.py`` measures the loss process
of any run; ``ccbench probe`` (``cli/probe.py``) only parses options and prints.
The Run:

- ``packets``: one row per probe packet; ``t_write`` = ``t_first_tx`` = send time
  (seconds from the client's start); ``t_arrive`` = ``t_deliver`` = send time + one-way
  delay (server receive clock minus client send clock; exact on one host, NaN for
  lost packets, and NaN for all if the clocks are visibly offset, i.e. a negative
  delay); an extra boolean column ``lost``.
- ``drops``: one row per lost packet, ``link = "path"``, ``t`` = its send time,
  ``kind = "drop"``, ``reason = "path"``.
- ``flows``: one row (``flow = "probe"``, ``transport = "udp"``).
- ``cwnd``, ``queue``: empty.
- ``meta["rtt_s"]``: the RTT estimate, the minimum of the RTT samples (report arrival
  minus the timestamp of the packet that triggered it), as in the thesis (it
  underestimates the RTT, hence also sub-RTT burstiness). ``meta["probe"]`` holds the
  client's summary (rates, sizes, pattern, counts, request id).

Example::

    with start_server(port=0) as srv:
        run = probe(srv.address, packets=2000, out="runs/probe-lo")
    print(loss_burstiness_of(run).frac_within)
"""

from .loss import loss_burstiness_of, run_rtt
from .runner import (
    TOKEN_ENV,
    ProbeError,
    ProbeServer,
    check_token,
    client_args,
    find_ccprobe,
    probe,
    probe_env,
    run_client,
    server_args,
    start_server,
)
from .tables import FLOW, read_records, records_to_run

__all__ = [
    "ProbeError",
    "find_ccprobe",
    "ProbeServer",
    "server_args",
    "start_server",
    "client_args",
    "run_client",
    "read_records",
    "records_to_run",
    "probe",
    "run_rtt",
    "loss_burstiness_of",
]
