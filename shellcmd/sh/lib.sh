# Every protocol line starts on a line of its own with this exec's marker, so
# it can never be confused with a command's output or a login script's noise.
# It is written with one printf, and does not depend on IFS.
h_say() {
	h_sayl=$h_marker
	for h_sayw in "$@"; do h_sayl="$h_sayl $h_sayw"; done
	printf '\n%s\n' "$h_sayl"
}

# h_pct TEXT: prints TEXT as the last field of a verdict, which takes the
# rest of the line: spaces stay, and "%" and the line breaks are
# percent-encoded (%25, %0A, %0D), which the client decodes
# (shellcmd.Unpct) before it escapes what it prints. A name of the usual
# characters costs no process.
h_pct() {
	case $1 in
	*[!A-Za-z0-9._+:@,~/\ -]*) ;;
	*)
		printf '%s' "$1"
		return
		;;
	esac
	printf '%s\n' "$1" | awk 'BEGIN { ORS = "" } { gsub(/%/, "%25"); gsub(/\r/, "%0D"); if (NR > 1) print "%0A"; print }'
}

# h_oneline TEXT: TEXT on one line, for a verdict, and at most 2000
# characters: a tool's complaints (tar's, one per file) can be endless.
h_oneline() { printf '%s' "$1" | tr '\n\r\t' '   ' | cut -c 1-2000; }

# h_age PATH: sets h_a to the seconds since PATH last changed, by this host's
# clock, and h_t to its modification time. Fails, leaving h_a empty, when
# that cannot be known. The clock is read before the file: an age that
# reaches a lease then proves that no heartbeat touched the file between its
# time and the look at the clock (a touch after the look shows in the file),
# which is what a heartbeat's own check (h_renew) relies on. A time more
# than about 2^31 seconds ahead of the clock has no age either (and h_t is
# left empty, as when there is no time): a shell
# that counts in 32 bits (mksh) subtracts right only within that, and
# beyond it could find such a file ages old. Its digits tell, without
# arithmetic.
h_age() {
	h_a= h_t=
	h_an=$(date +%s)
	case $h_stat in
	gnu) h_t=$(stat -c %Y "$1" 2>/dev/null) ;;
	bsd) h_t=$(stat -f %m "$1" 2>/dev/null) ;;
	*) return 1 ;;
	esac || return 1
	case $h_t:$h_an in *[!0-9:]* | :* | *:) return 1 ;; esac
	if [ "${#h_t}" -gt "${#h_an}" ] ||
		{ [ "${#h_t}" = "${#h_an}" ] && [ "${h_t%"${h_t#?}"}" -gt $((${h_an%"${h_an#?}"} + 1)) ]; }; then
		h_t=
		return 1
	fi
	h_a=$((h_an - h_t))
}

# h_step NAME: a point where the step tests stop this command, between two
# filesystem steps of the protocol (docs/protocol.md names them). A no-op
# unless a test set hp_pause (a directory) and listed NAME in hp_pauseat: then
# it says where it is and waits for the test to let it go.
h_step() {
	[ -n "$hp_pause" ] || return 0
	case " $hp_pauseat " in *" $1 "*) ;; *) return 0 ;; esac
	true >"$hp_pause/$1.at"
	while [ ! -e "$hp_pause/$1.go" ]; do sleep "$h_nap"; done
}
