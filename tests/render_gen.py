#!/usr/bin/env python3
"""Hand-made evt fixtures for the render DPC/ISR tests, with the expected
answers computed here, independently of render's C code.

  render_gen.py edges  OUT.evt   durations at every power-of-two bucket edge
  render_gen.py backup OUT.evt [--fixed]
        the backup-server incident: NDIS DPCs averaging 220 us pinning CPUs
        0,2,4,6 (or, with --fixed, 60 us), storport DPCs elsewhere, ISRs,
        and 1 ms CPU samples flagged dpc=1/isr=1 when they fall inside one.
Expected values are printed as JSON on stdout.
"""
import bisect
import json
import sys

HDR = ("#evt\t1\tsource={src}\tos_build=17763\tcpus={cpus}\tpointer_size=8\tclock=qpc\t"
       "clock_freq=10000000\tstart_utc=2021-03-02T01:00:00.0000000Z\tduration_ms={dur:.6f}\t"
       "events_lost=0\tbuffers_lost=0\tsample_interval_ms=1\n")


def weight(us):
    s = "%.6f" % (us / 1000.0)
    s = s.rstrip("0").rstrip(".")
    return s or "0"


def routine_line(t_ms, kind, cpu, mod, fn, us, extra=""):
    return "%.6f\t%s\t%d\tIdle\t0\t0\t%s\troutine=%s!%s\tmodule=%s\tduration_us=%.3f\tend_ms=%.6f\t%s\t\n" % (
        t_ms, kind, cpu, weight(us), mod, fn, mod, us, t_ms + us / 1000.0, extra) \
        if extra else "%.6f\t%s\t%d\tIdle\t0\t0\t%s\troutine=%s!%s\tmodule=%s\tduration_us=%.3f\tend_ms=%.6f\t\n" % (
        t_ms, kind, cpu, weight(us), mod, fn, mod, us, t_ms + us / 1000.0)


def edges(out):
    durs = [0.5, 1, 1.001, 2, 2.5, 4, 8, 16, 32, 64, 100, 100.001, 128, 129, 220, 256,
            512, 1024, 1025]
    lines = [HDR.format(src="edges.etl", cpus=2, dur=1000)]
    t = 1.0
    for i, d in enumerate(durs):
        lines.append(routine_line(t, "DPC", i % 2, "ndis.sys", "ndisInterruptDpc", d))
        t += 2.0
    # ISR edges around the 25 us guidance
    for d in (24.999, 25, 25.001, 40):
        lines.append(routine_line(t, "ISR", 1, "ndis.sys", "ndisMiniportIsr", d, "vector=5"))
        t += 2.0
    open(out, "w").writelines(lines)
    buckets = {}
    for d in durs:
        k, b = 0, 1.0
        while d > b:
            b *= 2
            k += 1
        buckets[k] = buckets.get(k, 0) + 1
    return {"count": len(durs), "buckets": buckets, "total": sum(durs),
            "over100": sum(1 for d in durs if d > 100),
            "isr_over25": 2}


def backup(out, fixed):
    cpus, dur_ms = 8, 2000.0
    lines = [HDR.format(src="backup-fixed.etl" if fixed else "backup.etl", cpus=cpus, dur=dur_ms)]
    events = []   # (time, line)
    per_cpu_dpc = {c: 0.0 for c in range(cpus)}
    per_cpu_isr = {c: 0.0 for c in range(cpus)}
    intervals = {c: [] for c in range(cpus)}  # (start, end, cls, module)
    ndis = []
    stor = []
    # NDIS receive DPCs on the even CPUs: 180/260 us alternating (avg 220), every 400 us
    for c in (0, 2, 4, 6):
        t = 0.050 + c * 0.01
        i = 0
        while t < dur_ms - 1:
            d = (40.0 if i % 2 == 0 else 80.0) if fixed else (180.0 if i % 2 == 0 else 260.0)
            fn = "ndisInterruptDpc" if i % 3 else "ndisMDispatchReceiveNetBufferLists"
            events.append((t, routine_line(t, "DPC", c, "ndis.sys", fn, d)))
            per_cpu_dpc[c] += d
            intervals[c].append((t, t + d / 1000.0, "DPC", "ndis.sys"))
            ndis.append(d)
            t += 0.4
            i += 1
    # storport DPCs on the odd CPUs, 20 us every 1.5 ms; ISRs 8 us before each
    for c in (1, 3, 5, 7):
        t = 0.3 + c * 0.01
        while t < dur_ms - 1:
            events.append((t, routine_line(t, "ISR", c, "storport.sys", "RaidpAdapterInterrupt", 8.0,
                                           "vector=130")))
            per_cpu_isr[c] += 8.0
            intervals[c].append((t, t + 0.008, "ISR", "storport.sys"))
            t2 = t + 0.010
            events.append((t2, routine_line(t2, "DPC", c, "storport.sys", "RaidpAdapterDpcRoutine", 20.0)))
            per_cpu_dpc[c] += 20.0
            intervals[c].append((t2, t2 + 0.020, "DPC", "storport.sys"))
            stor.append(20.0)
            t += 1.5
    # 1 ms samples on every CPU
    in_dpc = {}
    for c in range(cpus):
        ivs = sorted(intervals[c])
        starts = [iv[0] for iv in ivs]
        for k in range(int(dur_ms)):
            t = k + 0.5 + c * 0.013
            hit = None
            # intervals never last over 1 ms: look at the few that start before t
            j = bisect.bisect_right(starts, t)
            for iv in ivs[max(0, j - 8):j]:
                if iv[0] <= t <= iv[1]:
                    if hit is None or iv[0] > hit[0]:
                        hit = iv
            if hit:
                if hit[3] == "ndis.sys":
                    stack = ("ntoskrnl.exe!KiIdleLoop;ntoskrnl.exe!KiRetireDpcList;ndis.sys!ndisInterruptDpc;"
                             "NdisImPlatform.sys!implatReceive;ndis.sys!ndisMIndicateNetBufferListsToOpen;"
                             "tcpip.sys!TcpReceive")
                else:
                    stack = "ntoskrnl.exe!KiIdleLoop;ntoskrnl.exe!KiRetireDpcList;storport.sys!RaidpAdapterDpcRoutine"
                    if hit[2] == "ISR":
                        stack = "ntoskrnl.exe!KiIdleLoop;ntoskrnl.exe!KiInterruptDispatch;storport.sys!RaidpAdapterInterrupt"
                flag = "dpc=1" if hit[2] == "DPC" else "isr=1"
                key = "[%s] %s" % (hit[2], hit[3])
                in_dpc[key] = in_dpc.get(key, 0) + 1
                events.append((t, "%.6f\tSample\t%d\tIdle\t0\t0\t1\tip=0xfffff80000001000\tprio=0\t%s\t%s\n"
                               % (t, c, flag, stack)))
            else:
                events.append((t, "%.6f\tSample\t%d\tBackup.exe\t2212\t%d\t1\tip=0x7ff6a1b2c3d4\tprio=8\t"
                               "ntdll.dll!RtlUserThreadStart;kernel32.dll!BaseThreadInitThunk;Backup.exe!CopyLoop\n"
                               % (t, c, 4100 + c)))
    events.sort(key=lambda e: e[0])
    lines += [e[1] for e in events]
    open(out, "w").writelines(lines)
    return {
        "ndis_count": len(ndis), "ndis_avg": sum(ndis) / len(ndis), "ndis_max": max(ndis),
        "ndis_over100": sum(1 for d in ndis if d > 100),
        "stor_count": len(stor),
        "cpu_dpc_us": {str(c): per_cpu_dpc[c] for c in range(cpus)},
        "cpu_dpc_pct": {str(c): 100 * per_cpu_dpc[c] / (dur_ms * 1000) for c in range(cpus)},
        "cpu_isr_us": {str(c): per_cpu_isr[c] for c in range(cpus)},
        "stacks_samples": in_dpc,
    }


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    if sys.argv[1] == "edges":
        exp = edges(sys.argv[2])
    elif sys.argv[1] == "backup":
        exp = backup(sys.argv[2], "--fixed" in sys.argv[3:])
    else:
        sys.exit(__doc__)
    json.dump(exp, sys.stdout, sort_keys=True)
    print()


main()
