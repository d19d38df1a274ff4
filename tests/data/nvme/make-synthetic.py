#!/usr/bin/python3
# make-synthetic.py: writes the hand-made NVMe recordings next to it: an
# Identify Controller with 5 power states (two non-operational, one with the
# 0.0001 W scale) and APST supported, and the APST table the Linux driver
# builds from it with the default 100 ms latency bound (entries 0-2 go to
# ps3 after 50 x (its ENLAT + EXLAT), entry 3 to ps4 likewise), and the
# same Identify with IDLP and ACTP reported.
import os
import struct

here = os.path.dirname(os.path.abspath(__file__))

ident = bytearray(4096)
ident[4:24] = b"LMSYNTH0001".ljust(20)
ident[24:64] = b"laptop-moded synthetic NVMe SSD".ljust(40)
ident[64:72] = b"1.0".ljust(8)
ident[263] = 4  # NPSS: five states, 0-based
ident[265] = 0x01  # APSTA
# (max power, MPS, NOPS, ENLAT us, EXLAT us)
states = [
    (702, 0, 0, 0, 0),  # 7.02 W
    (630, 0, 0, 0, 0),  # 6.30 W
    (350, 0, 0, 0, 0),  # 3.50 W
    (760, 1, 1, 210, 1200),  # 0.0760 W, non-operational
    (50, 1, 1, 2000, 8000),  # 0.0050 W, non-operational
]
for i, (mp, mps, nops, enlat, exlat) in enumerate(states):
    off = 2048 + 32 * i
    flags = (mps << 0) | (nops << 1)
    struct.pack_into("<HBBII", ident, off, mp, 0, flags, enlat, exlat)
with open(os.path.join(here, "synthetic-identify-5ps.bin"), "wb") as f:
    f.write(ident)

# The same drive reporting its idle and active power (IDLP, ACTP; scale in
# bits 7:6 of the byte after each: 1 = 0.0001 W, 2 = 0.01 W, 0 = not
# reported): (IDLP, IPS, ACTP, APS).
powers = [
    (90, 2, 520, 2),  # idle 0.90 W, active 5.20 W
    (90, 2, 460, 2),  # idle 0.90 W, active 4.60 W
    (90, 2, 290, 2),  # idle 0.90 W, active 2.90 W
    (450, 1, 0, 0),  # idle 0.0450 W, active not reported
    (30, 1, 0, 0),  # idle 0.0030 W, active not reported
]
reported = bytearray(ident)
reported[24:64] = b"laptop-moded synthetic NVMe SSD IDLP".ljust(40)
for i, (idlp, ips, actp, aps) in enumerate(powers):
    off = 2048 + 32 * i
    struct.pack_into("<HBxHB", reported, off + 16, idlp, ips << 6, actp, aps << 6)
with open(os.path.join(here, "synthetic-identify-5ps-idlp.bin"), "wb") as f:
    f.write(reported)


def entry(target, ms):
    return struct.pack("<Q", (target << 3) | (ms << 8))


def idle_ms(state):
    _, _, _, enlat, exlat = states[state]
    return (enlat + exlat + 19) // 20


table = bytearray(256)
for i in range(3):
    table[8 * i : 8 * i + 8] = entry(3, idle_ms(3))
table[24:32] = entry(4, idle_ms(4))
with open(os.path.join(here, "synthetic-apst-table.bin"), "wb") as f:
    f.write(table)
