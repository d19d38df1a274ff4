#!/bin/sh
# kernel-patch/e2e/guest.sh: the end-to-end hook of the test guest
# (kernel-patch/test --e2e installs it as /etc/lmtest/hook). Runs a private
# dbus-daemon, laptop-moded with the block_dump backend and
# "laptop-modectl watch --json" as root, reads an uncached file on the ext4
# disk after the disk has been idle for longer than SpinUpIdle, and prints
# what it saw for the host to check:
#   e2e: KEY=VALUE lines
#   ----- BEGIN E2E WATCH ----- / ----- END E2E WATCH -----        watch stdout
#   ----- BEGIN E2E WATCHERR ----- / ----- END E2E WATCHERR -----  watch stderr
#   ----- BEGIN E2E DAEMON ----- / ----- END E2E DAEMON -----      daemon log
# Exits non-zero when a step could not be done (the host reports which).
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
E=/etc/lmtest/e2e
IDLE=$(sed -n 's/^SpinUpIdle=//p' "$E/laptop-moded.conf")
BD=/proc/sys/vm/block_dump

fact() { echo "e2e: $1=$2"; }
mark() { echo "LMTEST: $*" > /dev/kmsg; }
mounted() { grep -q " $1 " /proc/mounts; }
section() { # section NAME FILE
	echo "----- BEGIN E2E $1 -----"
	cat "$2" 2>/dev/null
	echo "----- END E2E $1 -----"
}
wait_for() { # wait_for SECONDS command...: poll until the command succeeds
	n=$(($1 * 5))
	shift
	while [ "$n" -gt 0 ]; do
		"$@" && return 0
		sleep 0.2
		n=$((n - 1))
	done
	return 1
}
disk_ios() { # reads + writes completed on vda so far
	awk '{ print $1 + $5 }' /sys/block/vda/stat
}
idle_for() { # idle_for SECONDS TIMEOUT: until vda has done no I/O for SECONDS
	quiet=0
	last=$(disk_ios)
	n=$(($2 * 5))
	while [ "$n" -gt 0 ]; do
		sleep 0.2
		now=$(disk_ios)
		if [ "$now" = "$last" ]; then
			quiet=$((quiet + 1))
			[ "$quiet" -ge $(($1 * 5)) ] && return 0
		else
			quiet=0
			last=$now
		fi
		n=$((n - 1))
	done
	return 1
}

# /init has done these; do them again where missing so that the script also
# works as a stand-alone /init fragment.
mounted /proc || mount -t proc proc /proc
mounted /sys || mount -t sysfs sysfs /sys
mounted /dev || mount -t devtmpfs devtmpfs /dev
mounted /tmp || mount -t tmpfs tmpfs /tmp
mkdir -p /run /var/lib
mounted /run || mount -t tmpfs tmpfs /run
mkdir -p /run/lmtest /var/lib/laptop-moded

status=0
# As in the other test tiers: a GLib critical aborts the daemon or client
# (the host also fails the run on any CRITICAL or WARNING line they print).
export G_DEBUG=fatal-criticals
# block_dump's lines are readable by whoever may read dmesg: the daemon
# warns unless only root may (laptop-moded.8), and a warning fails the run.
echo 1 > /proc/sys/kernel/dmesg_restrict
# Off, so that the daemon must turn it on (and restore it) itself.
echo 0 > "$BD"
fact block_dump_before "$(cat "$BD")"

dbus-daemon --config-file="$E/bus.conf" --nofork --nopidfile > /tmp/e2e-bus.log 2>&1 &
bus_pid=$!
export DBUS_SYSTEM_BUS_ADDRESS=unix:path=/run/lmtest/system_bus_socket
if wait_for 30 test -S /run/lmtest/system_bus_socket; then
	fact bus started
else
	fact bus failed
	section BUSLOG /tmp/e2e-bus.log
	exit 1
fi

# Only when the daemon asks polkit (e2e/make-rootfs then adds polkitd).
if [ -x /usr/lib/polkit-1/polkitd ]; then
	/usr/lib/polkit-1/polkitd --no-debug > /tmp/e2e-polkitd.log 2>&1 &
	polkitd_pid=$!
	if wait_for 30 sh -c 'dbus-send --system --print-reply --dest=org.freedesktop.DBus \
			/org/freedesktop/DBus org.freedesktop.DBus.NameHasOwner \
			string:org.freedesktop.PolicyKit1 | grep -q "boolean true"'; then
		fact polkitd started
	else
		fact polkitd failed
		status=1
	fi
else
	fact polkitd "not needed"
fi

STATE_DIRECTORY=/var/lib/laptop-moded LAPTOP_MODED_CONFIG=$E/laptop-moded.conf \
	laptop-moded --verbose > /tmp/e2e-daemon.log 2>&1 &
daemon_pid=$!
if wait_for 60 sh -c 'laptop-modectl status > /tmp/e2e-status.txt 2>&1'; then
	fact daemon started
else
	fact daemon failed
	status=1
fi

laptop-modectl watch --json > /tmp/e2e-watch.out 2> /tmp/e2e-watch.err &
watch_pid=$!
if wait_for 30 grep -q 'Watching spin-ups' /tmp/e2e-watch.err; then
	fact watch subscribed
else
	fact watch failed
	status=1
fi
fact block_dump_while_watching "$(cat "$BD")"

# Nothing dirty, nothing cached: the next read of data.bin goes to the disk.
sync
echo 3 > /proc/sys/vm/drop_caches
# The kernel log's clock (printk time) against CLOCK_BOOTTIME (/proc/uptime),
# both since boot: the daemon compares kmsg time stamps with its own clock.
mark "e2e clock"
fact uptime_at_clock_mark "$(cut -d' ' -f1 /proc/uptime)"
# The disk must be idle for longer than SpinUpIdle before the read: watch
# its counters until they have not moved for SpinUpIdle + 1 s.
if idle_for $((IDLE + 1)) 120; then
	fact idle_before_read yes
else
	fact idle_before_read no
	status=1
fi

mark "e2e read after idle"
sh -c 'echo $$ > /tmp/e2e-cat.pid; exec cat /mnt/data.bin' > /dev/null
fact cat_pid "$(cat /tmp/e2e-cat.pid)"
mark "e2e read done"
# Until the watch prints the SpinUp of that read (the daemon reads the
# kernel lines, the signal travels the bus).
if wait_for 60 grep -q "\"Pid\": $(cat /tmp/e2e-cat.pid)[,}]" /tmp/e2e-watch.out; then
	fact spinup_seen yes
else
	fact spinup_seen no
fi

kill -TERM "$watch_pid" 2>/dev/null
wait "$watch_pid"
fact watch_status $?
# The last subscriber left: monitoring stops and vm.block_dump goes back.
wait_for 10 sh -c "[ \"\$(cat $BD)\" = 0 ]"
fact block_dump_after_watch "$(cat "$BD")"

kill -TERM "$daemon_pid" 2>/dev/null
wait "$daemon_pid"
fact daemon_status $?
[ -n "${polkitd_pid:-}" ] && kill -TERM "$polkitd_pid" 2>/dev/null
kill -TERM "$bus_pid" 2>/dev/null
wait "$bus_pid"

section WATCH /tmp/e2e-watch.out
section WATCHERR /tmp/e2e-watch.err
section STATUS /tmp/e2e-status.txt
section DAEMON /tmp/e2e-daemon.log
section BUSLOG /tmp/e2e-bus.log
[ -f /tmp/e2e-polkitd.log ] && section POLKITD /tmp/e2e-polkitd.log
exit $status
