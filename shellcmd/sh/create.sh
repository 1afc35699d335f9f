# h_create: a lock appears with its record in one rename. The record is
# written into <lock>.new-<me>/<me>/rec, a directory of this command's own,
# which is then renamed to the lock path, and only while that path is absent.
# A rename onto a non-empty directory fails on every kernel, so a creation
# that stalls between any two steps can never replace a held lock. If a lock
# appeared just before the mv, mv moves the prepared directory into it; it
# stays there, counted as dead by h_sample, until the next h_clear removes
# it (moving it out again could leave the lock empty, which reads as an
# earlier version's ownerless lock). Returns 0 when the lock is ours, 1 when
# it is not (h_lasterr says why when the store cannot be written), 2 when
# the record could not be written, 3 when the attempt is spent: its
# directory is gone from both places, published and taken before the look,
# or landed in a lock that was cleared before it; the two look alike, so
# this token is never published again (h_nexttoken).
h_create() {
	h_new=$h_lock.new-$hp_me
	# In a store a team shares (writable by its group), the lock's
	# directories are too, so that any member can take a stale lock.
	# There, the second mkdir waits for the first: after a failed first,
	# it would make a directory through whatever a member put at its path
	# (a symlink). Where nobody else may write the store or its root
	# (h_swap), nothing but this login's own can be there, and one mkdir
	# makes both.
	if ! h_lasterr=$(if [ -n "$h_gw" ]; then umask 002; fi &&
		if [ -n "$h_swap" ]; then
			mkdir "$h_new" 2>&1 && mkdir "$h_new/$hp_me" 2>&1
		else
			mkdir "$h_new" "$h_new/$hp_me" 2>&1
		fi); then
		rm -rf "$h_new"
		return 1
	fi
	# The holder process: this host command, for as long as it works
	# under the lock (the exited rule: its pid and, where /proc is this
	# namespace's, its start time); a manual hold outlives it and names
	# none.
	h_hp=- h_hs=-
	if [ -z "$h_manual" ]; then
		h_hp=$$
		if [ -n "$h_myst" ]; then
			h_hs=$h_myst
		elif h_pstat $$; then
			h_hs=$h_pst
		fi
	fi
	# When the lock was taken: also a run's start, the guardian's first
	# reading of the clock and where a run's end is counted from (h_stamp).
	h_stamp
	if ! printf 'hoist-lock/2 token=%s since=%s mach=%s boot=%s pidns=%s init=%s lease=%s hpid=%s hstart=%s huid=%s %s\n' \
		"$hp_me" "$h_since" "$h_mach" "$h_bootid" "$h_pidns" "$h_init" "$hp_lease" "$h_hp" "$h_hs" "$h_uid" "$hp_rec" >"$h_new/$hp_me/rec" 2>/dev/null; then
		h_lasterr="cannot write the lock's record in $h_new (disk full?)"
		rm -rf "$h_new"
		return 2
	fi
	h_step create.prepared
	h_mvfail=
	if [ ! -e "$h_lock" ] && [ ! -L "$h_lock" ]; then
		h_step create.publish
		mv "$h_new" "$h_lock" 2>/dev/null || h_mvfail=1
		h_step create.renamed
		if [ -f "$h_lock/$hp_me/rec" ]; then
			return 0
		fi
		# Gone from both places: renamed into place and already taken,
		# or into a lock that appeared meanwhile and was cleared since.
		# Either way this token is spent: a lock of the same token again
		# would be open to a steal judged on the first.
		if [ ! -d "$h_new" ] && [ ! -d "$h_lock/${h_new##*/}" ]; then
			h_lasterr=
			return 3
		fi
		# Landed through a symlink that appeared at the lock path: out of
		# the store, where no clear looks; it is this command's own.
		if [ -L "$h_lock" ]; then rm -rf "$h_lock/${hp_lockname:?}.new-$hp_me"; fi
	fi
	rm -rf "$h_new"
	h_lasterr=
	# A rename that failed with no lock there to fail on: the store
	# refuses it (h_acquire counts it as a store that cannot be written).
	if [ -n "$h_mvfail" ] && [ ! -e "$h_lock" ] && [ ! -L "$h_lock" ]; then
		h_lasterr="cannot rename $h_new to $h_lock"
	fi
	return 1
}
