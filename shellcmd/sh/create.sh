# h_create: mkdir is the atomic test-and-set. The owner record is published in
# the same host command, under a temporary name renamed into place, so a reader
# sees either no record (a lock being born: fresh, so never stealable) or a
# whole one. Returns 0 when the lock is ours, 1 when mkdir failed (h_lasterr
# says why), 2 when the record could not be written (the empty lock is removed).
h_create() {
	h_lasterr=$(mkdir "$h_lock" 2>&1) || return 1
	if printf 'hoist-lock/1 token=%s boot=%s since=%s %s\n' "$h_me" "$h_boot" "$(date +%s)" "$h_rec" >"$h_lock/.owner-$h_me" 2>/dev/null &&
		mv -f "$h_lock/.owner-$h_me" "$h_lock/owner" 2>/dev/null; then
		return 0
	fi
	h_lasterr="cannot write $h_lock/owner"
	rm -rf "$h_lock"
	return 2
}

# h_sample: reads the lock as it is now. h_line is the record's first line
# (empty when missing); h_tok and h_lboot come from a record that parses and
# are empty otherwise: an unreadable record is evidence of nothing. Returns 1
# when there is no lock.
h_sample() {
	h_line= h_tok= h_lboot=
	[ -d "$h_lock" ] || return 1
	{ IFS= read -r h_line <"$h_lock/owner"; } 2>/dev/null
	case $h_line in
	"hoist-lock/1 token="?*" boot="?*" since="*)
		set -- $h_line
		h_tok=${2#token=} h_lboot=${3#boot=}
		case $h_tok in *[!0-9a-f-]*) h_tok= h_lboot= ;; esac
		case $h_lboot in *[!0-9A-Za-z.:/-]*) h_tok= h_lboot= ;; esac
		;;
	esac
	return 0
}

# h_stealable: after h_sample, whether a rule lets anyone take this lock: its
# recorded boot is known and is not this boot (its holder cannot be running),
# or it has not changed for h_stale seconds by this host's clock (the
# directory is the lock, so this holds for a missing or unreadable record too).
# Sets h_why to boot or stale, and h_a to the lock's age when known.
h_stealable() {
	h_why=
	h_age "$h_lock"
	if h_prevboot "$h_lboot"; then
		h_why=boot
	elif [ -n "$h_a" ] && [ "$h_a" -ge "$h_stale" ]; then
		h_why=stale
	fi
	[ -n "$h_why" ]
}
