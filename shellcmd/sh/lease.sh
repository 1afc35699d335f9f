# The lease: how long a lock stays its holder's without a heartbeat, and the
# fence every store mutation passes first. A lock's record carries its lease
# (lease=, written by h_create; read back by h_parse, sample.sh); a waiter
# may take the lock once the record has not been touched for longer than
# that (the stale rule, h_stealable in rules.sh, beside this file). The
# holder keeps it by touching the record (h_renew: the guardian's heartbeat,
# h_guard in wrap.sh, or hoist lock refresh), and acts only while its own
# lease has not run out (h_fence). The client gives the lease a lock takes
# (hp_lease) and the one a record that names none is judged by (hp_stale);
# their defaults are the client's.

# h_owned: fencing. Every store mutation happens only while the lock is
# still ours, that is while <lock>/<me>/rec exists and its lease has not run
# out (h_fresh), checked in the same command that acts; a holder whose lock
# was taken over, or whose lease lapsed, stops with LOST instead of writing
# over its successor's work. The age comes first: the age of a record that
# is gone is unknown (h_fresh passes it), and a record never comes back, so
# the look that follows sees the one whose age was read. The other way
# round, a record stolen between the two looks (its lease having run out)
# would pass as one of unknown age.
h_owned() { h_fresh && [ -f "$h_lock/$hp_me/rec" ]; }

# h_fresh: our record was touched (created or renewed) no more than our
# lease ago (the stale rule's own bound, h_stealable), or its age cannot be
# known.
h_fresh() {
	h_age "$h_lock/$hp_me/rec" || return 0
	[ "$h_a" -le "$h_mylease" ]
}

# h_fence: the check every store mutation makes first, in the command
# that mutates: the lock is still ours (h_owned), or LOST names the lock
# as it is now and nothing is done (docs/protocol.md, "Fencing").
h_fence() {
	if h_owned; then
		h_step fence.checked
		return 0
	fi
	h_sample
	h_say_holder LOST
	return 1
}

# h_renew: one heartbeat: touches our record (touch -c never creates it, so
# a record moved out by a steal or a break stays gone) and checks, by this
# host's clock, that the touch came before the lease ran out: a renewal
# after it (the holder stalled past its lease) is disowned, since a waiter
# may have judged the lock stale meanwhile. Fails when the lock is no longer
# ours to keep.
h_renew() {
	h_rp=$h_lock/$hp_me/rec
	[ -f "$h_rp" ] || return 1
	if h_age "$h_rp"; then
		[ "$h_a" -le "$h_mylease" ] || return 1
	fi
	h_step renew.looked
	touch -c "$h_rp" 2>/dev/null && [ -f "$h_rp" ] || return 1
	[ -n "$h_t" ] || return 0
	[ $(($(date +%s) - h_t)) -le "$h_mylease" ]
}

# h_ownlease: the lease of the lock <lock>/<me>/rec, for a command that
# works under a manual hold: the hold's record says it.
h_ownlease() {
	h_line=
	{ IFS= read -r h_line <"$h_lock/$hp_me/rec"; } 2>/dev/null
	h_parse_clear
	h_parse
	h_mylease=${h_r_lease:-$hp_stale}
}

# h_held: under a manual hold (hp_hold), the hold is still this store's lock
# (h_fence, which says LOST otherwise); without one, nothing to check.
h_held() {
	[ -n "$hp_hold" ] || return 0
	h_ownlease
	h_fence
}
