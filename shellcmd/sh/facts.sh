# Host facts, probed once per connection and printed for the client to cache.
#
# The boot evidence (docs/protocol.md, "Previous boot"): the machine
# (/etc/machine-id and the host name), the kernel's boot_id, and the PID
# namespace with the start time of its PID 1 (field 22 of /proc/1/stat). The
# namespace is read only when /proc belongs to it (h_procown: /proc/self is
# this shell). Anything that cannot be read stays "-", and an unknown fact
# never makes a lock stealable.
h_mach=- h_bootid=- h_pidns=- h_init=- h_stat=none
# The host name as uname -n gives it, from /proc where Linux has it (no
# process to start).
if { IFS= read -r h_x </etc/machine-id || IFS= read -r h_x </var/lib/dbus/machine-id; } 2>/dev/null; then
	{ IFS= read -r h_y </proc/sys/kernel/hostname; } 2>/dev/null || h_y=$(uname -n 2>/dev/null) || h_y=
	[ -z "$h_y" ] || h_mach=$h_x:$h_y
fi
{ IFS= read -r h_bootid </proc/sys/kernel/random/boot_id; } 2>/dev/null || h_bootid=-
# The namespace's number is the inode of /proc/self/ns/pid (readlink
# would say "pid:[NUMBER]"): one stat, which also proves that this host's
# stat takes -c %Y (below), costs no second process.
if h_procown; then
	h_x=$(stat -L -c %i:%Y /proc/self/ns/pid 2>/dev/null) || h_x=
	case $h_x in
	*[!0-9:]* | *:*:* | :* | *:) ;;
	*:*) h_pidns=${h_x%:*} h_stat=gnu ;;
	esac
	if { IFS= read -r h_x </proc/1/stat; } 2>/dev/null && h_pfields "$h_x"; then
		h_init=$h_pst
	fi
fi
case $h_mach in '' | *[!0-9A-Za-z.:_-]*) h_mach=- ;; esac
case $h_bootid in '' | *[!0-9a-f-]*) h_bootid=- ;; esac
case $h_pidns in '' | *[!0-9]*) h_pidns=- ;; esac
case $h_init in '' | *[!0-9]*) h_init=- ;; esac
if [ "$h_pidns" = - ]; then h_init=-; fi
# Which stat prints a modification time in seconds: GNU and busybox take -c %Y,
# BSD takes -f %m. With neither, ages are unknown and the age rule never fires.
# The namespace's stat above, where it answered, proved the first.
if [ "$h_stat" != gnu ]; then
	if h_t=$(stat -c %Y / 2>/dev/null) && [ -n "$h_t" ] && [ "$h_t" = "${h_t%%[!0-9]*}" ]; then
		h_stat=gnu
	elif h_t=$(stat -f %m / 2>/dev/null) && [ -n "$h_t" ] && [ "$h_t" = "${h_t%%[!0-9]*}" ]; then
		h_stat=bsd
	fi
fi
# Poll interval: 100 ms where sleep takes fractions, else whole seconds. Each
# poll of a held lock costs one fork (the sleep), so the interval is the
# longest the rule "poll at 100 ms or less" allows.
h_nap=1
# The test sleeps a millisecond: every new connection's first command waits
# for it.
if sleep 0.001 2>/dev/null; then h_nap=0.1; fi
# The login's uid (effective, as id -u prints it): the store's directories
# must be its own or root's. Linux's /proc says it without a process.
h_uid=
if [ -r /proc/self/status ]; then
	while IFS= read -r h_x; do
		case $h_x in
		Uid:*)
			# shellcheck disable=SC2086 # "Uid:" real effective saved fs, split on purpose
			set -- $h_x
			h_uid=$3
			break
			;;
		esac
	done </proc/self/status
fi
[ -n "$h_uid" ] || h_uid=$(id -u 2>/dev/null)
case $h_uid in '' | *[!0-9]*) h_uid=- ;; esac
h_home=$HOME
h_say FACTS "$h_mach" "$h_bootid" "$h_pidns" "$h_init" "$h_stat" "$h_nap" "$h_uid" "${h_home:--}"
