# The rules that let anyone take a held lock, in one place: previous boot,
# exited holder, stale lease (docs/protocol.md, "Evaluate"). All read what
# h_sample found. The lease itself, and the fence, are in lease.sh.

# h_stealable: whether a rule lets anyone take the lock h_sample saw: its
# record proves a previous boot (h_prevboot), or that its holder process has
# exited (h_exited), or the path whose age is the lock's (h_rp: the record,
# which its holder's heartbeats touch, or an earlier version's lock directory)
# has not changed for more than the holder's lease (the record's lease=, or
# hp_stale when it names none or cannot be read) by this host's clock. The age
# rule holds for an unreadable record too: the directory is the lock. Sets
# h_why to boot, exited or stale, h_a to the lock's age when known, h_lz to
# the lease that applies, and h_pwhy to what h_exited found.
h_stealable() {
	h_why=
	h_a=
	h_pwhy=-
	h_lz=${h_r_lease:-$hp_stale}
	[ -n "$h_rp" ] || return 1
	h_age "$h_rp"
	if h_prevboot; then
		h_why=boot
	elif h_exited; then
		h_why=exited
	elif [ -n "$h_a" ] && [ "$h_a" -gt "$h_lz" ]; then
		# Whole seconds on both sides: an age above the lease proves
		# more than a lease has passed, never less.
		h_why=stale
	fi
	[ -n "$h_why" ]
}

# h_say_holder VERB: says VERB with the lock h_sample saw, in the one order
# of every verdict that names a holder: its age, the rule that lets anyone
# take it, what the exited rule found of its holder process (h_stealable's
# h_a, h_why and h_pwhy), and its record, each "-" when unknown or none.
# LOST names the lock as sampled after our own was found gone, not judged:
# its record only.
h_say_holder() {
	case $1 in
	LOST) h_say "$1" - - - "${h_line:--}" ;;
	*) h_say "$1" "${h_a:--}" "${h_why:--}" "${h_pwhy:--}" "${h_line:--}" ;;
	esac
}

# h_exited: the host process that holds the lock (the record's hpid, started
# at hstart) has exited, and so has every process of its command's group
# (runs/<token>/pgid, when it started one). Only for a holder of this boot,
# this PID namespace and this login (another login's processes may be
# hidden from it), judged where /proc is this namespace's (h_proc), and
# recorded where it was too (the record's pidns and hstart known); a manual
# hold names no process. Sets h_pwhy: alive, exited, or why the rule does
# not apply (none: a manual hold; boot, pidns, uid: another one; unknown:
# /proc could not tell, here or where the record was written).
h_exited() {
	h_pwhy=none
	[ -n "$h_r_hpid" ] || return 1
	h_pwhy=boot
	[ "${h_bootid:--}" != - ] && [ "$h_r_boot" = "$h_bootid" ] || return 1
	h_pwhy=unknown
	[ -n "$h_proc" ] && [ "${h_pidns:--}" != - ] && [ -n "$h_r_ns" ] && [ -n "$h_r_hst" ] || return 1
	h_pwhy=pidns
	[ "$h_r_ns" = "$h_pidns" ] || return 1
	h_pwhy=uid
	[ "${h_uid:--}" != - ] && [ "$h_r_huid" = "$h_uid" ] || return 1
	h_pwhy=alive
	h_gone "$h_r_hpid" "$h_r_hst" || return 1
	h_pgf=$h_runs/$h_tok/pgid
	if [ -e "$h_pgf" ] || [ -L "$h_pgf" ]; then
		# The holder's command group, written before the command starts.
		(h_scr=$h_runs/$h_tok h_cmdg= && ! h_cmdalive) || return 1
	elif ! h_absent "$h_pgf"; then
		h_pwhy=unknown
		return 1
	fi
	h_pwhy=exited
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
