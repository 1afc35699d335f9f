# h_steal: called when a sample looked stealable. Under the guard the lock is
# sampled again and moved aside only if it is still stealable, so of any number
# of concurrent stealers exactly one moves it; the others find the winner's
# fresh lock. It is moved to a unique name (never rm -rf then mkdir, and never
# onto an existing directory, which mv would move it into), then created
# afresh. A plain acquirer may win the gap between the move and the mkdir: it
# then holds the lock and this steal reports failure. Returns 0 when the lock
# is ours; h_why, h_a and h_line then describe the lock that was taken.
# A stealer queued for the guard gives up as soon as the lock it sampled is
# replaced (h_moot): the winner's lock is fresh, so waiting on is pointless.
h_steal() {
	h_seen=$h_line
	h_guard_take h_moot || return 1
	h_won=1
	if h_sample && h_stealable && [ ! -e "$h_lock.stolen-$h_me" ] &&
		mv "$h_lock" "$h_lock.stolen-$h_me" 2>/dev/null; then
		h_create && h_won=0
	fi
	h_guard_drop
	rm -rf "$h_lock.stolen-$h_me"
	return $h_won
}

h_moot() {
	{ IFS= read -r h_x <"$h_lock/owner"; } 2>/dev/null || h_x=
	[ "x$h_x" != "x$h_seen" ]
}
