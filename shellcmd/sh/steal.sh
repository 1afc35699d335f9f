# h_cas TO: the compare-and-swap of steal and break. It moves the record of
# the lock h_sample saw to TO, and succeeds only while that same lock is
# there: a lock of this protocol by its token's path, which no other lock
# ever has; an earlier version's by its record; an ownerless one by rmdir,
# which fails once anything was added to it. A step that stalled for any time
# after judging can therefore act on nothing but the lock it judged. Returns
# 0 when moved, 1 when the lock is no longer the one judged, 2 when the
# record is there but could not be moved (h_lasterr).
h_cas() {
	h_src=
	case $h_kind in
	held) h_src=$h_lock/$h_tok/rec ;;
	legacy) h_src=$h_lock/owner ;;
	ownerless)
		h_clear
		[ ! -e "$h_lock" ]
		return
		;;
	*) return 1 ;;
	esac
	h_lasterr=$(mv "$h_src" "$1" 2>&1) && return 0
	# A record still there that could not be moved is not a lock that
	# changed: the login may not write the directory (another member of a
	# team's store made it without group write).
	if [ -f "$h_src" ]; then return 2; fi
	h_lasterr=
	return 1
}

# h_steal: called when a sample looked stealable (h_stealable set h_why and
# h_a). Of any number of concurrent stealers exactly one moves the record;
# the others fail and sample again. The winner clears the dead lock and
# creates afresh; a plain acquirer may win that gap, and then the stealer
# waits on like anyone. Returns like h_create, 1 when the lock changed
# before the move, and 4 when the move failed though it had not (h_lasterr
# says why); on success h_line is the record that was taken.
h_steal() {
	h_step steal.judged
	h_moved=$h_lock.stolen-$hp_me
	h_cas "$h_moved"
	case $? in
	1) return 1 ;;
	2) return 4 ;;
	esac
	h_step steal.moved
	if [ -f "$h_moved" ]; then
		{ IFS= read -r h_line <"$h_moved"; } 2>/dev/null
		rm -f "$h_moved"
	fi
	h_clear
	h_create
}
