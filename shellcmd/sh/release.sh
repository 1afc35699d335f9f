# h_release: the lock is ours exactly while <lock>/<me>/rec exists, so moving
# that record out is the owner check and the release in one step: it fails
# when the lock was taken over or broken, and then nothing is touched. The
# dead lock is cleared after. A lock an earlier version made with this token
# is released by its record's name. Returns 0 when released, 1 when the lock
# is someone else's (h_line says whose), 2 when there is none, 3 when it is
# ours but the record could not be moved (h_lasterr).
h_release() {
	h_unguard
	# Under a manual hold (hp_hold) the lock stays the hold's: 4 while it
	# still is, 1 when it was lost.
	if [ -n "$hp_hold" ]; then
		[ -f "$h_lock/$hp_me/rec" ] && return 4
		h_sample
		return 1
	fi
	h_step release.cas
	h_moved=$h_lock.released-$hp_me
	if h_lasterr=$(mv "$h_lock/$hp_me/rec" "$h_moved" 2>&1); then
		h_step release.moved
		h_clear
		rm -f "$h_moved"
		return 0
	fi
	h_sample
	case $h_kind in
	free | dead) return 2 ;;
	esac
	[ "$h_tok" = "$hp_me" ] || return 1
	# An earlier version's lock with this token: its record is "owner".
	if [ "$h_kind" = legacy ] && h_cas "$h_moved"; then
		h_clear
		rm -f "$h_moved"
		return 0
	fi
	return 3
}

# h_say_release CODE: says the verdict for h_release's result CODE.
h_say_release() {
	case $1 in
	0) h_say RELEASED ;;
	1) h_say_holder LOST ;;
	2) h_say NOTHELD ;;
	4) h_say KEPT "$hp_me" ;;
	*) h_say ERROR release "$(h_oneline "$h_lasterr")" ;;
	esac
}

# h_release_end: releases (h_release) and says how (h_say_release): the end
# of every command that holds the lock.
h_release_end() {
	h_release
	h_say_release $?
}
