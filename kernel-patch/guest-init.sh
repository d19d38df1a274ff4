#!/bin/busybox sh
# /init of the test guest that kernel-patch/test boots. Exercises
# vm.block_dump on an ext4 disk (/dev/vda) and a raw disk (/dev/vdb), then
# prints its findings and the kernel log to the console between markers:
#   ----- BEGIN FACTS ----- / ----- END FACTS -----   key=value lines
#   ----- BEGIN HOOK -----  / ----- END HOOK -----    output of the hook
#   ----- BEGIN DMESG ----- / ----- END DMESG -----   dmesg
#   ----- BEGIN KMSG -----  / ----- END KMSG -----    cat /dev/kmsg
# Optional hook: /etc/lmtest/hook (kernel-patch/test --guest-script), run with
# vm.block_dump=1 and the ext4 disk mounted on /mnt. Files added with
# kernel-patch/test --extra are in the initramfs root.

/bin/busybox --install -s /bin
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
exec </dev/console >/dev/console 2>&1
# Keep the console for our own output; everything is in dmesg anyway.
dmesg -n 1

BD=/proc/sys/vm/block_dump
FACTS=/tmp/facts
: > "$FACTS"
fact() { echo "$1=$2" >> "$FACTS"; }
mark() { echo "LMTEST: $*" > /dev/kmsg; }
# Run a command as a child that execs it, and record the child's pid, so the
# host can look for "<comm>(<pid>): ..." lines.
run_as() { # run_as FACTNAME command... (sets $name)
	name=$1
	shift
	sh -c 'echo $$ > /tmp/child.pid; exec "$@"' sh "$@"
	fact "$name" "$(cat /tmp/child.pid)"
}

echo "lmtest: guest up, kernel $(uname -r)"

if [ -e "$BD" ]; then
	fact sysctl_mode "$(stat -c %a "$BD")"
else
	fact sysctl_mode missing
fi
if echo -1 > "$BD" 2>/dev/null; then
	fact negative_rejected no
else
	fact negative_rejected yes
fi

mount -t ext4 /dev/vda /mnt || echo "lmtest: mounting /dev/vda failed"
sync
echo 3 > /proc/sys/vm/drop_caches
echo 1 > "$BD"
fact enabled_value "$(cat "$BD")"

mark "read of an uncached file"
run_as reader_pid cat /mnt/data.bin > /dev/null

mark "touch of an existing file"
run_as touch_pid touch /mnt/notes.txt

mark "buffered write, then sync"
run_as writer_pid dd if=/dev/zero of=/mnt/written.bin bs=4k count=256 2>/dev/null
sync

mark "write with fsync"
run_as fsync_pid dd if=/dev/zero of=/mnt/fsynced.bin bs=4k count=64 conv=fsync 2>/dev/null

mark "buffered write to the raw block device, then sync"
run_as raw_pid dd if=/dev/zero of=/dev/vdb bs=4k count=64 2>/dev/null
sync

mark "data=journal"
umount /mnt
if mount -t ext4 -o data=journal /dev/vda /mnt; then
	i=0
	while [ $i -lt 20 ]; do
		dd if=/dev/zero of=/mnt/j$i bs=4k count=8 2>/dev/null
		i=$((i + 1))
	done
	# Write to a file that is already unlinked, then drop the last reference.
	exec 3>/mnt/unlinked
	echo data >&3
	rm /mnt/unlinked
	echo more >&3
	exec 3>&-
	rm /mnt/j*
	sync
	umount /mnt
	fact journal_done yes
else
	fact journal_done no
fi
mount -t ext4 /dev/vda /mnt

# Start a fresh rate limit window, create many dirty inodes quickly, wait for
# the window to end and cause one more message, which reports the number of
# suppressed messages.
sleep 6
mark "storm begin"
n=1500
i=0
while [ $i -lt $n ]; do
	echo x > /mnt/s$i
	i=$((i + 1))
done
mark "storm end"
fact storm_files $n
sleep 6
sync

echo 0 > "$BD"
mark "block_dump off"
echo 3 > /proc/sys/vm/drop_caches
cat /mnt/data.bin > /dev/null
touch /mnt/notes.txt
echo y > /mnt/off.txt
sync
mark "block_dump off end"

if [ -x /etc/lmtest/hook ]; then
	echo 1 > "$BD"
	mark "hook begin"
	echo "----- BEGIN HOOK -----"
	/etc/lmtest/hook
	fact hook_status $?
	echo "----- END HOOK -----"
	mark "hook end"
	echo 0 > "$BD"
fi

umount /mnt

echo "----- BEGIN FACTS -----"
cat "$FACTS"
echo "----- END FACTS -----"
echo "----- BEGIN DMESG -----"
dmesg
echo "----- END DMESG -----"
echo "----- BEGIN KMSG -----"
cat /dev/kmsg &
catpid=$!
sleep 2
kill $catpid
wait $catpid 2>/dev/null
echo "----- END KMSG -----"
sync
reboot -f
