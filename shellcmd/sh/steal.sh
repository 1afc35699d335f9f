# h_cas TO: the compare-and-swap of steal and break. It moves the record of
# the lock h_sample saw to TO, and succeeds only while that same lock is
# there: a lock of this protocol by its token's path, which no other lock
# ever has; an earlier version's by its record; an ownerless one by rmdir,
# which fails once anything was added to it. A step that stalled for any time
# after judging can therefore act on nothing but the lock it judged.
h_cas() {
	case $h_kind in
	held) mv "$h_lock/$h_tok/rec" "$1" 2>/dev/null ;;
	legacy) mv "$h_lock/owner" "$1" 2>/dev/null ;;
	ownerless)
		h_clear
		[ ! -e "$h_lock" ]
		;;
	*) false ;;
	esac
}

# h_steal: called when a sample looked stealable (h_stealable set h_why and
# h_a). Of any number of concurrent stealers exactly one moves the record;
# the others fail and sample again. The winner clears the dead lock and
# creates afresh; a plain acquirer may win that gap, and then the stealer
# waits on like anyone. Returns like h_create, and 1 when the move failed;
# on success h_line is the record that was taken.
h_steal() {
	h_step steal.judged
	h_moved=$h_lock.stolen-$h_me
	h_cas "$h_moved" || return 1
	h_step steal.moved
	if [ -f "$h_moved" ]; then
		{ IFS= read -r h_line <"$h_moved"; } 2>/dev/null
		rm -f "$h_moved"
	fi
	h_clear
	h_create
}
