"""The founding papers' tables and figures with numerical results, and how far ccbench
reproduces each (the static half of ``docs/REPRODUCTIONS.md``; the numbers come from
recorded study results, see :mod:`ccbench.studies.summary`).

Status words: ``reproduced`` (our numbers agree with the paper's within the stated
tolerance, or every qualitative claim holds), ``partly`` (some numbers or claims hold,
others differ, or only part of the setup is covered), ``not yet`` (no study; the
building blocks may exist), ``not reproducible here`` (needs something ccbench cannot
have: Internet paths, real application traces, a specific old simulator).
``status = None`` marks items whose status is computed from the recorded results.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Item:
    item: str                 # "Table 3", "Fig. 4a"
    reports: str              # what the paper reports (numbers where it gives them)
    status: str | None        # static status, or None = computed from recorded results
    why: str = ""             # the reason for the status, or what the study covers
    study: str | None = None  # the `ccbench reproduce` study that covers it
    key: str | None = None    # selector for the summary's ours-vs-paper extractor


@dataclass(frozen=True)
class Paper:
    key: str
    title: str
    seed: str
    notes: str
    studies: tuple[str, ...]
    items: tuple[Item, ...] = field(default_factory=tuple)


NY = "not yet"
NR = "not reproducible here"

PAPERS: tuple[Paper, ...] = (
    Paper(
        "wei", "Wei, Microscopic Behavior of Internet Congestion Control (Caltech PhD thesis, 2007)", "003",
        "wei-microscopic-congestion-control.md", ("wei-sync", "wei-vegas", "wei-fast", "wei-ch3", "wei-probe"),
        (
            Item("Fig. 2.1", "single Vegas flow 800 Mbit/s / 200 ms: cwnd in [19067, 19068], inside Theorem 2.1.5's "
                 "bounds", None, "study wei-vegas (captions' path; the bounds recomputed for it)", "wei-vegas",
                 "wei-vegas:fig2.1"),
            Item("Fig. 2.2", "100 Vegas flows: mean cwnd 114.6-115.6, queue 1935-2035 pkts (one packet per flow, in "
                 "step); each flow converges", None, "study wei-vegas (2.6.16 decision; today's beside it)",
                 "wei-vegas", "wei-vegas:fig2.2"),
            Item("Figs 2.3, 2.4", "delay doubled: the queue oscillates in the same region, mean cwnd within one "
                 "packet", None, "study wei-vegas", "wei-vegas", "wei-vegas:fig2.3-2.4"),
            Item("Thms 2.2.3.1-2", "FAST: W -> cd + alpha, w_i -> (alpha_i/alpha)(alpha + cd), exponential "
                 "convergence for gamma in (0, 1); much faster than Vegas (no figure)", None,
                 "study wei-fast (ccsim fast vs the discrete model)", "wei-fast", "wei-fast"),
            Item("Figs 3.1-3.3", "loss burstiness: ns-2 80 % of loss intervals < 1 % RTT, > 10x Poisson", None,
                 "study wei-ch3 (16 Reno, RTTs 2-200 ms); the PlanetLab part needs Internet paths "
                 "(`ccbench probe` measures a real path; wei-probe runs the probe analysis on sim and emu)",
                 "wei-ch3", "claims:Fig. 3.1"),
            Item("Fig. 3.8", "loss-detection fraction: bursty 30 %, paced 70 %", None, "study wei-ch3 (16 flows)",
                 "wei-ch3", "claims:Fig. 3.8"),
            Item("Fig. 3.9", "synchronisation rate vs number of flows (ns-2 and model 3.1-3.3)", None,
                 "study wei-ch3 (N 4-32; --full 2-32)", "wei-ch3", "claims:Fig. 3.9"),
            Item("Tables 3.1, 3.2", "loss synchronisation rate of Reno / HS-TCP / S-TCP under DropTail, pacing, RED, "
                 "P-ECN", None, "study wei-sync (100 Mbit/s, 200 ms, 50 on/off noise flows)", "wei-sync", "wei-sync"),
            Item("Table 3.1 (pooled)", "Reno DropTail λ 0.20 'averaged over all loss events' of Fig. 3.12's runs", None,
                 "study wei-ch3: event-weighted pool over the N and buffer sweeps", "wei-ch3", "claims:Table 3.1"),
            Item("Table 3.1 (phase)", "the same DropTail λ (0.20 / 0.25 / 0.23) from ns-2 runs with equal RTTs and an "
                 "ACK per packet: every ACK clock in one phase at the bottleneck", None,
                 "study wei-ch3, part phase (the RTT swept over one packet time, an ACK per packet and delayed "
                 "ACKs); ns-2 itself in tests/data/ns2/wei_sync_ns2.csv", "wei-ch3", "claims:Table 3.1 (phase)"),
            Item("Figs 3.12-3.23", "fairness convergence: Reno > 1500 RTTs at 100 Mbit/s / 200 ms; time reduced 2.4x "
                 "(pacing), 1.25x (RED), 30x (P-ECN); bound (3.8); HS-TCP and S-TCP no faster than Reno", None,
                 "study wei-ch3 (eq. 3.7 from start-up, N 16/32; HS-TCP and S-TCP N 16)", "wei-ch3",
                 "claims:Figs 3.12-3.22|Fig. 3.12|Fig. 3.23"),
            Item("Figs 3.13-3.14", "MIMD: 8 bursty S-TCP flows without noise do not converge, paced ones do; bursty "
                 "S-TCP fairness (smallest flow / (c/N), 600 s) degrades with N, pacing improves it", None,
                 "study wei-ch3 (S-TCP, no noise, N 2/8/32; --full 2-32)", "wei-ch3", "claims:Fig. 3.13|Fig. 3.14"),
            Item("Figs 3.16, 3.25", "Normalized Throughput Gain: paced Reno loses throughput, less with HS-TCP, "
                 "unnoticeable with S-TCP; under P-ECN Reno loses more, in steps by buffer, within 15 % in most "
                 "cases", None, "study wei-ch3 (16 flows, 1/4-1 BDP)", "wei-ch3", "claims:Fig. 3.16|Fig. 3.25"),
            Item("Figs 3.19, 3.20", "half paced, half bursty Reno under DropTail: most bursty flows above their fair "
                 "share, most paced below (paced flows detect more loss events); paced converge slower than alone, "
                 "bursty faster; §3.2.4 expects λ to rise for the bursty and fall for the paced against isolation",
                 None, "study wei-ch3 (N 16/32, 1 BDP; --full N 2-32, 1/4-1 BDP)", "wei-ch3",
                 "claims:Fig. 3.19|Fig. 3.20|§3.2.4"),
            Item("Fig. 3.26", "the same mix under Persistent ECN: the unfairness disappears, paced flows get more "
                 "throughput than bursty 'in all cases'", None, "study wei-ch3 (as Figs 3.19, 3.20)", "wei-ch3",
                 "claims:Fig. 3.26"),
            Item("Figs 3.21-3.26", "64 MB transfer: bound 5.39 s, TCP up to 10x at 200 ms, P-ECN <= 2x; P-ECN "
                 "throughput within 15 %", None, "study wei-ch3 (N 2-32, 1/8 and 1 BDP; the throughput part is item Figs 3.16, 3.25)",
                 "wei-ch3", "claims:Fig. 3.24"),
            Item("§4.3 probe", "UDP probe loss traces: PlanetLab 40 % of intervals < 1 % RTT, 60 % < 1 RTT, burstier "
                 "than Poisson", None, "study wei-probe (simulator and emulator, drop-tail and RED; real paths with "
                 "`ccbench probe`)", "wei-probe", "wei-probe"),
            Item("Ch. 4 tables", "ns-2 TCP-Linux vs Sack1 speed and memory", NR,
                 "compares two ns-2 implementations, not a network behaviour"),
        ),
    ),
    Paper(
        "brosh", "Brosh, Baset, Misra, Rubenstein, Schulzrinne, The Delay-Friendliness of TCP (2008/2010)", "001",
        "brosh-delay-friendliness-of-tcp.md", ("brosh-droptail", "brosh-video", "brosh-split", "brosh-model"),
        (
            Item("Figs 2, 18", "traces: Fig. 2 recovery 0.26 s, network-limited 1.9 s; Fig. 18 peak delay of the "
                 "half-MSS flow 45 % lower; cwnd overestimates load by 30 % / 40 %", None, "study brosh-model (Fig. 2 and 18 traces with scripted losses)",
                 "brosh-model", "brosh-model:fig18"),
            Item("Figs 5-11", "model vs random-drop testbed: VoIP mean-delay error < 10 % up to 2 % loss; video ~20 %",
                 None, "study brosh-model (simulated random-drop path, `ccbench model brosh`)", "brosh-model",
                 "brosh-model:figs5-11"),
            Item("Fig. 12a", "PlanetLab paths, model vs measurement", NR, "Internet paths; values not in the text"),
            Item("Table 3", "VoIP over drop-tail: loss, RTT, jitter, 95 % delay for 0-25 web flows, packet and byte "
                 "queues", None, "study brosh-droptail", "brosh-droptail", "brosh-droptail"),
            Item("Table 4", "video over drop-tail at 30 Mbit/s: same columns, 0-100 web flows; RTT 0.101 s throughout",
                 None, "study brosh-video", "brosh-video", "brosh-video"),
            Item("Fig. 14", "working region: VoIP 95 % delay <= 200 ms up to 2 % loss at 100 ms (5 % at 20 ms); video "
                 "max <= 5 s up to 3 % at 100 ms, 0.1 % at 300 ms; Figs 15-16 from the model", None,
                 "study brosh-model", "brosh-model", "brosh-model:fig14"),
            Item("Figs 17, 19-24, Table 5", "packet size, byte counting (+10-20 % delay), timeouts, bottleneck type, "
                 "playout (<= 5 % late at L + 1.5 RTT + 60 ms)", None,
                 "study brosh-model (Fig. 21's byte-vs-packet queue claim is checked in the Table 5 row)", "brosh-model",
                 "brosh-model:figs17-24"),
            Item("Figs 25-28", "model, random drops: split-2 and 5 blind connections -60 % (video); drop-tail testbed: "
                 "split-2 up to -30 %, split-4 -27 % FTP throughput, 5 blind connections -90 %, intelligent better",
                 None, "study brosh-split: 5 video flows on the 30 Mbit/s drop-tail testbed (as configured, and at "
                 "Table 4's load), the model's bound, one flow at 1 % random loss", "brosh-split", "brosh-split"),
        ),
    ),
    Paper(
        "luebben", "Lübben, Fidler, A Benchmark for the Performance of Time-varying Closed-loop Flow Control "
        "with Application to TCP (2016)", "000", "luebben-fidler-service-curve-benchmark.md", ("luebben", "luebben-fig9"),
        (
            Item("Fig. 2", "delay components at 1 and 9 Mbit/s: loss peaks ~100 ms, stack delays of seconds at 9 Mbit/s",
                 None, "study luebben", "luebben", "claims:2"),
            Item("Fig. 4", "static window: 5 / 10 Mbit/s long-term, 50 ms latency; estimate = convex minorant / exact",
                 None, "study luebben (exact packet model)", "luebben", "claims:4"),
            Item("Fig. 5", "adaptive (ECN-AIMD) window: 4100 pkt/s (r_acc 100) vs theory 4143, 4000 (r_acc 800); "
                 "convergence 4 decades slower than w = 41", None, "study luebben", "luebben",
                 "claims:5a|5b"),
            Item("Fig. 6", "per-packet delay bounds (eps = 5e-4) follow the quantiles of 150 000 repetitions", None,
                 "study luebben, synthetic H.264-like video in place of the paper's trace", "luebben", "claims:6"),
            Item("Fig. 8", "NewReno attainable rate: starts at 30 ms, 9 Mbit/s long-term", None, "study luebben",
                 "luebben", "claims:8"),
            Item("Fig. 9", "5 Mbit/s probe: network delay 18-30 ms, sender-stack delay > 10x, P(stack) ~ 0.3",
                 None, "study luebben-fig9", "luebben-fig9", "luebben-fig9"),
            Item("Figs 10-11", "P(sender-stack buffering) vs utilisation; periodic model: none below 2/3; Bernoulli "
                 "cwnd below need for hundreds of ms", None, "study luebben", "luebben", "claims:10|11"),
            Item("Fig. 12", "e2e CCDFs 1-9 Mbit/s: bend at ~30 ms, seconds at high rates", None, "study luebben",
                 "luebben", "claims:12"),
            Item("Figs 13-14", "buffer: 21 pkt -> 8 Mbit/s, others 9; smaller converge faster; e2e tail and CWND "
                 "autocorrelation grow with the buffer", None, "study luebben", "luebben", "claims:13|14a|14b"),
            Item("Fig. 15", "AQM: RED-20, CoDel, drop-tail 9 Mbit/s, RED-5 8; RED > CoDel > drop-tail; Bernoulli ~ "
                 "RED; periodic ~2x", None, "study luebben", "luebben", "claims:15a|15b|15d"),
            Item("Fig. 16", "CC: all 9 Mbit/s; Scalable best, lowest CWND autocorrelation", None, "study luebben",
                 "luebben", "claims:16a|16b"),
            Item("Fig. 17", "video delay bounds: periodic ~ constant rate; Scalable much better; ~50 % reduction",
                 None, "study luebben, synthetic 4 Mbit/s H.264-like video", "luebben", "claims:17"),
        ),
    ),
    Paper(
        "stewart", "Stewart, Hayes, Armitage, Welzl, Petlund, Multimedia-unfriendly TCP Congestion Control and Home "
        "Gateway Queue Management (MMSys 2011)", "002", "stewart-multimedia-unfriendly-tcp.md", ("stewart",),
        (
            Item("Table 1", "thin-stream traffic statistics of seven applications", NR,
                 "statistics of captured application traces (ccbench's thin-stream presets are fitted to it)"),
            Item("Fig. 1", "cwnd and queuing delay, ADSL1 20 kB: delay grows by up to 107 ms; CUBIC consistently "
                 "higher", None, "stewart part fig1", "stewart", "stewart:fig1"),
            Item("Fig. 3", "goodput vs PS queue: ADSL1 CUBIC full from 7 slots, NewReno 20; ADSL2 both below full "
                 "under 40, NewReno never", None, "stewart part fig3", "stewart", "stewart:fig3"),
            Item("Fig. 4a", "CBR loss vs queue per rule (ns-2): FB-loose >> PS > FB-strict ~ 0 %", None,
                 "stewart part fig4", "stewart", "stewart:fig4a"),
            Item("Fig. 4b", "FB-loose loss peaks near 30, 60, 90 kB (testbed and ns-2, clearest for CUBIC)", None,
                 "simulated with ns-2's and with dummynet's accounting (in-service packet counted); the emulator run "
                 "(ccemu, same rules) was not done: the shared machine was loaded and the emulator's "
                 "timing needs idle CPU", "stewart", "stewart:fig4b"),
            Item("ADSL2 loss (text)", "FB-loose CBR loss ~1 % (CUBIC), ~0.4 % (NewReno), insensitive to queue size",
                 None, "stewart part adsl2", "stewart", "stewart:adsl2"),
            Item("Fig. 5", "CUBIC fast-convergence lock-in without CBR jitter: FC-active trials have fewer "
                 "congestion epochs and lower CBR loss; jitter removes it", None, "stewart part fig5", "stewart",
                 "stewart:fig5"),
            Item("Fig. 6", "fine sweep 52.5-67.5 kB: FB-strict peaks just below multiples of 1500 B, FB-loose worst "
                 "just above", None, "stewart part fig6", "stewart", "stewart:fig6"),
            Item("Fig. 7", "CBR extra delay 40 kB FB-loose, RTT/2 12-100 ms: CUBIC higher median, tighter spread",
                 None, "stewart part fig7", "stewart", "stewart:fig7"),
            Item("ADSL2 delay (text)", "median extra delay CUBIC ~11 / 9 ms, NewReno ~5 / 1 ms at RTT/2 12 / 25 ms; "
                 "< 2 ms at 50, 100 ms; max ~13 ms", None, "stewart part fig7", "stewart", "stewart:adsl2delay"),
        ),
    ),
    Paper(
        "weigle", "Weigle, Cheng, Kaur, Kulkarni, Generalized stochastic performance models for loss-based "
        "congestion control (Computer Communications, 2009)", "004", "weigle-lbcc-stochastic-model.md", ("weigle",),
        (
            Item("Table 1", "observed p, computed p_T (Eq. 19), observed p_T for the 7 settings", None,
                 "study weigle", "weigle", "weigle:table1"),
            Item("Figs 1-5", "mean and sd of T_n, 1000 segments: M1 tracks ns-2 Reno at p <= 1 %; M2 under-predicts "
                 "at low capacity", None, "study weigle (textbook-reno and linux stacks)", "weigle", "weigle:low"),
            Item("Figs 6-7", "p = 3 %, 5 %: both models under-predict; M1-p (observed p_T) fairly accurate", None,
                 "study weigle", "weigle", "weigle:high"),
            Item("Fig. 9", "HTTP (PackMime) workload: relative error within 0.1 for 80 % of connections", NY,
                 "needs PackMime-like per-connection delays on Floyd's multi-bottleneck topology"),
            Item("Figs 10-12", "N_delta, throughput convergence, high-speed protocols (model only)", NY,
                 "no numbers in the text to compare; `ccbench model weigle` computes them"),
        ),
    ),
)


def study_names() -> list[str]:
    return [s for p in PAPERS for s in p.studies]
