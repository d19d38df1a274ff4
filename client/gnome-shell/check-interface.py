#!/usr/bin/python3
"""check-interface: the GNOME Shell extension's D-Bus interface against the
daemon's XML.

daemon.js carries the part of org.laptopmode.LaptopMode1 it uses as a
string (INTERFACE_XML). Every member there must exist in
dbus/org.laptopmode.LaptopMode1.xml with the same kind, access, argument
directions and types; a member renamed or retyped in the XML fails here,
not in a user's session. Reads files only.
"""

import os
import re
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.environ.get("LM_SRCDIR", os.path.dirname(os.path.dirname(HERE)))
IFACE = "org.laptopmode.LaptopMode1"
XML = os.path.join(SRCDIR, "dbus", IFACE + ".xml")
DAEMON_JS = os.path.join(HERE, "daemon.js")


def members(root):
    """{(kind, name): shape} of the interface IFACE under @root."""
    ifaces = [i for i in root.iter("interface") if i.get("name") == IFACE]
    if len(ifaces) != 1:
        raise SystemExit("check-interface: no single interface %s" % IFACE)
    found = {}
    for el in ifaces[0]:
        if el.tag == "property":
            found[("property", el.get("name"))] = (el.get("type"), el.get("access"))
        elif el.tag in ("method", "signal"):
            args = tuple((a.get("direction", "in" if el.tag == "method" else "out"),
                          a.get("type")) for a in el.findall("arg"))
            found[(el.tag, el.get("name"))] = args
    return found


def main():
    with open(DAEMON_JS) as f:
        js = f.read()
    m = re.search(r"const INTERFACE_XML = `(.*?)`;", js, re.S)
    if m is None:
        print("check-interface: no INTERFACE_XML in %s" % DAEMON_JS)
        return 1
    text = m.group(1).replace("${INTERFACE}", IFACE)
    used = members(ET.fromstring(text))
    known = members(ET.parse(XML).getroot())
    bad = 0
    for key, shape in sorted(used.items()):
        if key not in known:
            print("not ok: %s %s is not in %s" % (key[0], key[1], XML))
            bad += 1
        elif known[key] != shape:
            print("not ok: %s %s is %r in daemon.js but %r in the XML"
                  % (key[0], key[1], shape, known[key]))
            bad += 1
    print("%d members checked, %d differ" % (len(used), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
