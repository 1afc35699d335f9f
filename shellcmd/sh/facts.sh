# Host facts, probed once per connection and printed for the client to cache.
# The boot identity is "<machine>:<boot_id>/<PID 1 start time>": the kernel's
# boot_id and PID 1's start time (field 22 of /proc/1/stat), so a container
# restart counts as a reboot, qualified by the machine (/etc/machine-id, else
# the host name), because a store on shared storage is seen from several
# machines at once, and another machine's boot says nothing about a holder.
# Anything that cannot be read leaves "-": an unknown boot never makes a lock
# stealable.
h_boot=-
if { IFS= read -r h_b </proc/sys/kernel/random/boot_id && IFS= read -r h_s </proc/1/stat; } 2>/dev/null; then
	h_s=${h_s##*) }
	set -- $h_s
	if [ $# -ge 20 ]; then
		shift 19
		h_mach=
		{ IFS= read -r h_mach </etc/machine-id || IFS= read -r h_mach </var/lib/dbus/machine-id; } 2>/dev/null
		[ -n "$h_mach" ] || h_mach=$(uname -n 2>/dev/null)
		case $h_mach in '' | *[!0-9A-Za-z.-]*) h_mach= ;; esac
		if [ -n "$h_mach" ]; then h_boot=$h_mach:$h_b/$1; fi
	fi
fi
case $h_boot in *[!0-9A-Za-z.:/-]*) h_boot=- ;; esac
# Which stat prints a modification time in seconds: GNU and busybox take -c %Y,
# BSD takes -f %m. With neither, ages are unknown and the age rule never fires.
h_stat=none
if h_t=$(stat -c %Y / 2>/dev/null) && [ -n "$h_t" ] && [ "$h_t" = "${h_t%%[!0-9]*}" ]; then
	h_stat=gnu
elif h_t=$(stat -f %m / 2>/dev/null) && [ -n "$h_t" ] && [ "$h_t" = "${h_t%%[!0-9]*}" ]; then
	h_stat=bsd
fi
# Poll interval: 100 ms where sleep takes fractions, else whole seconds. Each
# poll of a held lock costs one fork (the sleep), so the interval is the
# longest the rule "poll at 100 ms or less" allows.
h_nap=1
if sleep 0.01 2>/dev/null; then h_nap=0.1; fi
h_home=$HOME
h_say FACTS "$h_boot" "$h_stat" "$h_nap" "${h_home:--}"
