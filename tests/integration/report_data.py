"""Synthetic ledgers for laptop-modectl report's tests and docs/report.png:
a day of a laptop's disk with several wakers, as GetLedger's records."""

import random

US = 1000000


def realistic_day(now_us, disk="sda", seed=17, hostile=False):
    """Records (dicts with GetLedger's keys) for the 24 h before @now_us:
    sleep/wake intervals, spin-ups blamed on a few processes, and activity
    runs (reads, direct writes, dirtying) behind them."""
    rnd = random.Random(seed)
    start = now_us - 24 * 3600 * US
    wakers = [("firefox", "writeback", "/home/ann/.mozilla/firefox/x.default/places.sqlite"),
              ("thunderbird", "writeback", "/home/ann/.thunderbird/y.default/global-messages-db.sqlite"),
              ("cat", "direct", "/usr/share/dict/words"),
              ("updatedb.plocat", "direct", None),
              ("jbd2/sda1-8", "kernel", None),
              ("syncthing", "writeback", "/home/ann/Sync/.stfolder/index"),
              ("cron", "direct", "/etc/crontab")]
    if hostile:
        wakers.append(("<b>\x1b[31m\"&'", "direct", "/tmp/<script>alert(1)</script>\x07\n.txt"))
    weights = [10, 5, 3, 1, 2, 3, 1] + ([4] if hostile else [])
    recs, t = [], start
    asleep = True
    while t < now_us:
        if asleep:
            dur = int(rnd.expovariate(1 / 2400.0) * US) + 60 * US
            end = min(t + dur, now_us)
            recs.append({"Kind": "asleep", "Disk": disk, "Time": t, "End": end})
            if end < now_us:
                comm, via, path = rnd.choices(wakers, weights)[0]
                rec = {"Kind": "spinup", "Disk": disk, "Time": end, "Pid": rnd.randint(300, 9000),
                       "Comm": comm, "Uid": 1000, "Via": via, "Flushed": rnd.randint(0, 400)}
                if path:
                    rec["Path"] = path
                recs.append(rec)
        else:
            dur = int(rnd.uniform(20, 240) * US)
            end = min(t + dur, now_us)
            recs.append({"Kind": "awake", "Disk": disk, "Time": t, "End": end})
            # The activity behind this wake: I/O in a run up to the standby
            # timer (5 s) before it went back to sleep.
            secs = max(1, (end - t) // US - 5)
            recs.append({"Kind": "activity", "Disk": disk, "Time": t, "End": t + secs * US,
                         "Reads": rnd.randint(1, max(1, secs // 4)),
                         "Writes": rnd.randint(0, max(0, secs // 8)),
                         "Dirtied": rnd.randint(0, max(0, secs // 3))})
        t = end
        asleep = not asleep
    # Processes dirtying data now and then while the disk slept: laptop
    # mode held it back, stock writeback would have woken the disk for it.
    for r in [r for r in recs if r["Kind"] == "asleep"]:
        n = (r["End"] - r["Time"]) // (600 * US)
        for _ in range(n):
            at = rnd.randint(r["Time"], r["End"] - US)
            recs.append({"Kind": "activity", "Disk": disk, "Time": at, "End": at + US,
                         "Reads": 0, "Writes": 0, "Dirtied": 1})
    recs.sort(key=lambda r: r["Time"])
    return recs
