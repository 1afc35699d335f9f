# The two rules that let anyone take a held lock, in one place
# (docs/protocol.md, "Evaluate"). Both read what h_sample found.

# h_stealable: whether a rule lets anyone take the lock h_sample saw: its
# record proves a previous boot (h_prevboot), or the path whose age is the
# lock's (h_rp: the record, or an earlier version's lock directory) has not
# changed for h_stale seconds by this host's clock. The age rule holds for an
# unreadable record too: the directory is the lock. Sets h_why to boot or
# stale, and h_a to the lock's age when known.
h_stealable() {
	h_why=
	h_a=
	[ -n "$h_rp" ] || return 1
	h_age "$h_rp"
	if h_prevboot; then
		h_why=boot
	elif [ -n "$h_a" ] && [ "$h_a" -ge "$h_stale" ]; then
		h_why=stale
	fi
	[ -n "$h_why" ]
}

# h_prevboot: the record's boot evidence (h_r_*) proves that its holder cannot
# be running: another boot_id of this same machine (its kernel has gone), or
# this boot_id and this PID namespace with another PID 1 (a live namespace
# keeps its PID 1, so the recorded one has ended). Every field must be known
# on both sides. Containers sharing a kernel have one boot_id and their own
# PID namespaces, so neither fires between them.
h_prevboot() {
	[ -n "$h_r_boot" ] && [ "${h_bootid:--}" != - ] || return 1
	if [ "$h_r_boot" != "$h_bootid" ]; then
		[ "${h_mach:--}" != - ] && [ "$h_r_mach" = "$h_mach" ]
		return
	fi
	[ -n "$h_r_ns" ] && [ -n "$h_r_init" ] && [ "${h_pidns:--}" != - ] && [ "${h_init:--}" != - ] &&
		[ "$h_r_ns" = "$h_pidns" ] && [ "$h_r_init" != "$h_init" ]
}
