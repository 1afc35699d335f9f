# Host facts, probed once per connection and printed for the client to cache.
# The boot identity is the kernel's boot_id plus PID 1's start time (field 22
# of /proc/1/stat), so a container restart counts as a reboot. Anything that
# cannot be read leaves "-": an unknown boot never makes a lock stealable.
h_boot=-
if { IFS= read -r h_b </proc/sys/kernel/random/boot_id && IFS= read -r h_s </proc/1/stat; } 2>/dev/null; then
	h_s=${h_s##*) }
	set -- $h_s
	if [ $# -ge 20 ]; then
		shift 19
		h_boot=$h_b/$1
	fi
fi
case $h_boot in *[!0-9a-f/-]*) h_boot=- ;; esac
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
h_say FACTS "$h_boot" "$h_stat" "$h_nap" "$h_home"
