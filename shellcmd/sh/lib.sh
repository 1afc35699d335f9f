# Every protocol line starts on a line of its own with this exec's marker, so
# it can never be confused with a command's output or a login script's noise.
# It is written with one printf, and does not depend on IFS.
h_say() {
	h_sayl=$h_marker
	for h_sayw in "$@"; do h_sayl="$h_sayl $h_sayw"; done
	printf '\n%s\n' "$h_sayl"
}

# h_oneline TEXT: TEXT on one line, for a verdict.
h_oneline() { printf '%s' "$1" | tr '\n\r\t' '   '; }

# h_age PATH: sets h_a to the seconds since PATH last changed, by this host's
# clock. Fails, leaving h_a empty, when that cannot be known.
h_age() {
	h_a=
	case $h_stat in
	gnu) h_t=$(stat -c %Y "$1" 2>/dev/null) ;;
	bsd) h_t=$(stat -f %m "$1" 2>/dev/null) ;;
	*) return 1 ;;
	esac || return 1
	h_n=$(date +%s)
	case $h_t:$h_n in *[!0-9:]* | :* | *:) return 1 ;; esac
	h_a=$((h_n - h_t))
}

# h_prevboot BOOT: BOOT is known, of this machine, and not its current boot.
h_prevboot() {
	case $1:$h_boot in *:*:*:*) ;; *) return 1 ;; esac
	[ "${1%%:*}" = "${h_boot%%:*}" ] && [ "$1" != "$h_boot" ]
}

# h_badpath: the lock path exists but is not a plain directory. A file or a
# symlink there is refused and left untouched, whatever it points to.
h_badpath() {
	[ -L "$h_lock" ] || [ -L "$h_guard" ] || { [ -e "$h_lock" ] && [ ! -d "$h_lock" ]; }
}
