#!/usr/bin/python3
"""make-seeds.py: regenerates the seed corpora in tests/fuzz/corpus/ from
tests/data/, data/ and the formats the kernel and drives produce.
Run from the source root; files are named by content hash, so re-running
only adds what is new. Names of targets as arguments: only those."""
import hashlib
import os
import re
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def block_dump_lines():
    out = []
    d = os.path.join(ROOT, "tests", "data", "block_dump")
    for name in sorted(os.listdir(d)):
        if not name.endswith(".txt"):
            continue
        with open(os.path.join(d, name), "rb") as f:
            lines = f.read().split(b"\n")
        # The block_dump lines and a few others of each recording.
        bd = [l for l in lines if re.search(rb"\(\d+\): (READ|WRITE|dirtied)|suppressed", l)]
        out += bd[:12] + lines[:3]
    return out


def kmsg():
    for l in block_dump_lines():
        put("kmsg", l)
    for l in [
        "6,1234,5678901,-;jbd2/sda1-8(312): WRITE block 12345 on sda1 (8 sectors)",
        "[ 12.345678] bash(2345): dirtied inode 20934 (.bash_history) on sda1",
        "[ 12.345678] kworker/u8:2(99): dirtied page 77 on sda",
        "[ 12.345678] cat(1): dirtied buffer on nvme0n1p2",
        "4,99,100,-;block_dump_printk: 17 callbacks suppressed",
        "[ 1.0] a b c(1): READ block 0 on dm-0",
    ]:
        put("kmsg", l)


def uevent():
    for ev in [
        b"change@/devices/LNXSYSTM:00/LNXSYBUS:00/PNP0C0A:00/power_supply/BAT0\0ACTION=change\0"
        b"DEVPATH=/devices/LNXSYSTM:00/LNXSYBUS:00/PNP0C0A:00/power_supply/BAT0\0SUBSYSTEM=power_supply\0"
        b"POWER_SUPPLY_NAME=BAT0\0POWER_SUPPLY_STATUS=Discharging\0SEQNUM=4242\0",
        b"add@/devices/virtual/block/loop3\0ACTION=add\0DEVPATH=/devices/virtual/block/loop3\0"
        b"SUBSYSTEM=block\0MAJOR=7\0MINOR=3\0DEVNAME=loop3\0DEVTYPE=disk\0SEQNUM=17\0",
        b"remove@/devices/pci0000:00/usb1/1-1\0ACTION=remove\0SUBSYSTEM=usb\0",
        b"libudev\0\xfe\xed\xca\xfe(\0\0\0",
        b"change@/x\0SUBSYSTEM=power_supply\0ACTION=change",
    ]:
        put("uevent", ev)


def lines():
    # Byte 0: the cap, byte 1: how many cut sizes follow, then the stream.
    recs = b"\n".join(block_dump_lines()[:8]) + b"\n"
    put("lines", bytes([63, 3, 5, 1, 200]) + recs)
    put("lines", bytes([10, 0]) + b"short\nthis line is longer than ten\n\nx\npartial")
    put("lines", bytes([0, 2, 0, 0]) + b"\n\n\n")


def tracefs():
    for l in [
        "            bash-2345    [001] d..1.  1234.567890: block_bio_queue: 8,0 R 2048 + 8 [bash]",
        "     kworker/u8:3-123     [000] .....   98.000001: block_bio_queue: 259,0 WS 123456 + 16 [kworker/u8:3]",
        "  Web Content-4242    [003] ..... 100.000100: block_bio_queue: 7,0 W 0 + 0 [Web Content]",
        "           <...>-777     [002] ..... 5.5: block_bio_queue: 8,16 RA 99 + 256 [<...>]",
        "            vim-3000    [000] ..... 77.123456: writeback_mark_inode_dirty: bdi 8:0: ino=12 state= flags=I_DIRTY_SYNC",
        "   my-prog-name-1-42    [001] ..... 1.000000: writeback_mark_inode_dirty: bdi 7:3: ino=99 state=I_DIRTY_PAGES flags=I_DIRTY_PAGES",
        "             cat-17701   [000] ..... 15588.401575: block_rq_issue: 254,0 N 20 () 0 + 0 none,0,0 [cat]",
        "  smartctl-9 [1] . 2.000003: block_rq_issue: 8,16 N 512 (85 08 0e 00 00 00 01 00 00 00 00 00 00 40 ec 00) 0 + 0 [smartctl]",
        "         python3-8673    [000] .....  1198.155678: task_newtask: pid=8678 comm=python3 clone_flags=3d0f00 oom_score_adj=0",
        "      Cache2 I/O-8678    [000] .....  1198.155999: task_rename: pid=8678 oldcomm=python3 newcomm=Cache2 I/O oom_score_adj=0",
        "    iou-wrk-4242-4250    [001] .....  10.000001: task_rename: oldcomm=fio newcomm=iou-wrk-4242 oom_score_adj=0",
        "         python3-8673    [000] .....  1198.077742: sched_process_exec: filename=/usr/bin/python3 pid=8673 old_pid=8673",
        # A file name holding a forged line (exec is not followed; the line is refused whole).
        "              sh-100 [001] ..... 5.000001: sched_process_exec: filename=/tmp/x 1.0: block_bio_queue: 8,0 W 0 + 8 [f] pid=100 old_pid=100",
        "# tracer: nop",
    ]:
        put("tracefs", l)


def settings():
    with open(os.path.join(ROOT, "data", "laptop-moded.conf"), "rb") as f:
        put("settings", f.read())
    put("settings", "[LaptopMode]\nMode=on\nMaxLostWork=600\nNoRemount=/;/home;/mnt/with space\n"
        "RemountTypes=ext4;btrfs\n\n[Disk ata-WDC_WD5000LPVX_WX11A12345]\nStandbySeconds=1200\nAPM=128\n"
        "Exclude=false\n\n[Disk sdb]\nReadaheadKiB=4096\n")
    put("settings", "# comment\n[LaptopMode]\nAttribution=tracefs\nSpinUpIdle=30\nSpinUpHistory=true\n"
        "DiskRecheck=0\nEngine=userspace\nLowBatteryPercent=5\nDirtyRatio=60\n")
    put("settings", "")
    # Issue 34: a value that is not UTF-8 for each kind of key; on the string
    # key without choices its error message once joined a NULL list.
    for key in ("NvmeLatencyToleranceUs", "Mode", "MaxLostWork", "Remount", "NoRemount",
                "RemountTypes"):
        put("settings", b"[LaptopMode]\n" + key.encode() + b"=\xff\xfe\n")


def state():
    put("state", "[Tunables]\ndirty_ratio=20\ndirty_background_ratio=10\nlaptop_mode=0\n\n"
        "[Remount]\n/home=rw,relatime\n/mnt/a\\x20b=rw,commit=5\n")
    put("state", "[Disks]\nata-WDC_WD5000LPVX_WX11A12345.Device=sda\nata-WDC_WD5000LPVX_WX11A12345.APM=254\n"
        "[Attribution]\ntracefs-mount=/sys/kernel/tracing\n")
    put("state", b"usb-Generic_Flash=Disk_0:0.Device\0sdb")
    put("state", b"[weird]\n key with spaces =  value \n")


def remount():
    for s in [
        b"rw,relatime,commit=600", b"rw,noatime,errors=remount-ro,data=ordered",
        b"rw,relatime,space_cache=v2,subvolid=5,subvol=/", b'rw,"commit=5,x",a=""',
        b"/mnt/with space/and\\backslash", b"/media/\xff\xfe\x01caf\xc3\xa9", b"commit", b",,=,",
        b"/run/media/user/\x1b[31mred",
    ]:
        put("remount", s)


def ata():
    put("ata", bytes([0x72, 0x01, 0x00, 0x1D, 0, 0, 0, 0x0E, 0x09, 0x0C, 0, 0x00, 0, 0xFF, 0, 0, 0, 0, 0, 0, 0x40, 0x50]))
    put("ata", bytes([0x72, 0x0B, 0x00, 0x00, 0, 0, 0, 0x0E, 0x09, 0x0C, 0, 0x04, 0, 0x00, 0, 0, 0, 0, 0, 0, 0x40, 0x51]))
    put("ata", bytes([0x70, 0x00, 0x01, 0x00, 0x50, 0x40, 0x00, 0x0A, 0, 0, 0, 0, 0x00, 0x1D, 0, 0, 0, 0]))
    put("ata", bytes([0x70, 0x00, 0x05, 0x00, 0, 0, 0, 0x0A, 0, 0, 0, 0, 0x20, 0x00, 0, 0, 0, 0]))
    put("ata", bytes([0x72, 0x05, 0x24, 0, 0, 0, 0, 0]))
    put("ata", bytes([0x72, 0x01, 0x00, 0x1D, 0, 0, 0, 0xFF, 0x09, 0xFF]))
    ident = bytearray(512)
    ident[83 * 2] = 0x08; ident[83 * 2 + 1] = 0x40
    ident[86 * 2] = 0x08; ident[91 * 2] = 128
    put("ata", bytes(ident))
    ident[86 * 2] = 0
    put("ata", bytes(ident))


def bpf():
    # struct lm_bpf_spinup: 3 u64, 10 u32, two char[16], prev_ns u64
    spin = struct.pack("<QQQ10I16s16sQ", 12_345_678_900, 2048, 12, 8, 0, 4242, 1000, 1, 1, 1, 4343,
                       1000, 0, b"jbd2/sda1-8", b"vim", 12_000_000_000)
    put("bpf", spin)
    put("bpf", struct.pack("<QQQ10I16s16sQ", 1, 0, 0, 7, 3, 1, 0, 0, 0, 0, 0, 0, 0, b"A" * 16,
                           b"B" * 16, 0))
    # struct lm_flush_armed: u64, 4 u32, char[16]
    put("bpf", struct.pack("<Q4I16s", 99_000_000, 259, 0, 77, 1, b"firefox"))
    put("bpf", b"")


def ledger_record(kind, disk, t, end, pid=0, uid=-1, via=0, comm=b"", path=b"", flushed=0,
                  activity=None):
    """One record as lm-ledger-record.c frames it: magic, length, CRC32;
    @activity: (reads, writes, dirtied[, filesystems[, spells]]), the
    extension of kind 4 (12, 16 or 20 bytes)."""
    import zlib
    ext = struct.pack("<%dI" % len(activity), *activity) if activity is not None else b""
    payload = struct.pack("<BBBBHHqqIqI", kind, via, len(disk), len(comm), len(path), len(ext), t,
                          end, pid, uid, flushed) + ext + disk + comm + path
    return b"LMr1" + struct.pack("<II", len(payload), zlib.crc32(payload)) + payload


def ledger():
    t = 1_780_000_000_000_000
    spin = ledger_record(1, b"sda", t, t, 4242, 1000, 0, b"cat", b"notes.txt")
    wb = ledger_record(1, b"sda", t + 5, t + 5, 4343, 1000, 1, b"dd", b"out.bin", 3)
    asleep = ledger_record(2, b"sda", t - 600_000_000, t)
    awake = ledger_record(3, b"nvme0n1", t, t + 20_000_000)
    put("ledger", spin)
    put("ledger", asleep + spin + wb + awake)
    put("ledger", spin + wb[:-7])                      # torn tail
    put("ledger", spin[:20] + bytes([spin[20] ^ 1]) + spin[21:] + wb)  # flipped byte
    put("ledger", b"LMr1" + b"\xff" * 8 + asleep)       # corrupt length
    put("ledger", b"")
    act = ledger_record(4, b"sda", t, t + 3_000_000, activity=(2, 0, 3))
    put("ledger", spin + act + awake)
    put("ledger", act[:18] + b"\x00" + act[19:])          # extension length wrong
    act_fs = ledger_record(4, b"sda", t, t + 3_000_000, activity=(2, 0, 3, 1))
    act_spells = ledger_record(4, b"sda", t, t + 3_000_000, activity=(0, 0, 3, 2, 2))
    put("ledger", act + act_fs + act_spells)


def nvme():
    # dword 0, then the recorded answers (tests/data/nvme).
    d = os.path.join(ROOT, "tests", "data", "nvme")
    for name, result in (("qemu-7.2-identify-ctrl.bin", 0), ("synthetic-identify-5ps.bin", 0x23),
                         ("synthetic-apst-table.bin", 1)):
        with open(os.path.join(d, name), "rb") as f:
            body = f.read()
        put("nvme", struct.pack("<I", result) + body)
    put("nvme", struct.pack("<I", 0xFFFFFFFF) + b"\xff" * 300)
    put("nvme", b"\x02\x00\x00\x00")


def configure():
    # Configure's a{sv} as GVariant's serialised bytes (what the bus carries):
    # every hostile value of issue 24 that must come back from the config
    # file, and the input that once failed (an empty RemountTypes list).
    from gi.repository import GLib

    def asv(d):
        put("configure", GLib.Variant("a{sv}", d).get_data_as_bytes().get_data())

    paths = ["/mnt/a;b", "/mnt/tab\there\t", "/mnt/back\\slash\\", "/mnt/trailing  ",
             "/mnt/caf\u00e9 \u202e", "/mnt/x\\x41\\s", "/mnt/nl\nand\rcr", "/mnt/\\;;"]
    asv({"RemountTypes": GLib.Variant("as", [])})
    asv({"RemountTypes": GLib.Variant("as", []), "NoRemount": GLib.Variant("as", [])})
    asv({"NoRemount": GLib.Variant("as", paths)})
    for p in paths:
        asv({"NoRemount": GLib.Variant("as", [p]), "RemountTypes": GLib.Variant("as", ["btrfs"])})
    asv({"Mode": GLib.Variant("s", "on"), "NvmeLatencyToleranceUs": GLib.Variant("s", "keep"),
         "SataLinkPolicy": GLib.Variant("s", "")})
    # Issue 36: DiskSettings ids and string values with tabs, ';', '\\', blanks
    # at the ends and non-ASCII: kept exactly, or refused.
    for ident in ["ata-a;b", "ata-back\\slash\\", "ata-caf\u00e9\u202e", "ata-#x", "ata-tab\tx",
                  " ata-lead", "ata-trail ", "ata-\"q\""]:
        asv({"DiskSettings": GLib.Variant("a{sa{sv}}", {ident: {"APM": GLib.Variant("u", 128)}})})
    for key, value in [("Mode", "on\t"), ("Engine", " auto"), ("SataLinkPolicy", "keep;"),
                       ("NvmeLatencyToleranceUs", "keep\\"), ("Attribution", "bpf\u00e9")]:
        asv({key: GLib.Variant("s", value)})


def smart():
    # SMART READ DATA pages: a laptop disk's counters (4, 9, 12, 193 among
    # others) with a good checksum, an SSD's, a bad checksum, a short page.
    def page(attrs):
        p = bytearray(512)
        p[0] = 0x10
        for i, (ident, raw) in enumerate(attrs):
            struct.pack_into("<BHBB", p, 2 + 12 * i, ident, 0x32, 100, 100)
            p[2 + 12 * i + 5:2 + 12 * i + 11] = raw.to_bytes(6, "little")
        p[511] = (0x100 - sum(p[:511]) % 256) % 256
        return bytes(p)
    disk = page([(1, 0), (3, 0), (4, 5123), (5, 0), (9, 0x3A00004E20), (12, 2011), (193, 246810),
                 (194, 0x32001E0023), (193, 1)])
    put("smart", disk)
    put("smart", page([(173, 40), (9, 12000)]))
    put("smart", disk[:511] + bytes([disk[511] ^ 1]))
    put("smart", disk[:300])


only = sys.argv[1:]
for f in (kmsg, uevent, lines, tracefs, settings, state, remount, ata, bpf, ledger, nvme, configure,
          smart):
    if not only or f.__name__ in only:
        f()
