# The guard serializes every change to an existing lock: steal, release and
# break all happen under it, and only creation of an absent lock does not. So
# under the guard an existing lock cannot change, and what a stealer re-samples
# under it is what it moves.
#
# h_guard_take [MOOT]: the guard is ours once our entry is its only entry; a
# process whose mkdir raced with a breaker finds a second entry and backs off.
# Waiting costs one builtin test and a sleep per poll; abandoned guards are
# looked for once a second. MOOT, when given, is a function that says the
# wait is no longer worth it (the lock a stealer queued for has changed).
# Waits up to h_gtries polls. Returns 1 when the guard stayed busy or MOOT.
h_guard_take() {
	h_gi=0
	while :; do
		if [ ! -d "$h_guard" ] && mkdir "$h_guard" 2>/dev/null; then
			if printf '%s\n' "$h_boot" >"$h_guard/$h_gid" 2>/dev/null &&
				[ "$(ls -A "$h_guard" 2>/dev/null)" = "$h_gid" ]; then
				return 0
			fi
			rm -f "$h_guard/$h_gid"
			rmdir "$h_guard" 2>/dev/null
		elif [ -n "$1" ] && "$1"; then
			return 1
		elif [ $((h_gi % h_every)) -eq 0 ]; then
			h_guard_break
		fi
		h_gi=$((h_gi + 1))
		[ "$h_gi" -lt "$h_gtries" ] || return 1
		sleep "$h_nap"
	done
}

h_guard_drop() {
	rm -f "$h_guard/$h_gid"
	rmdir "$h_guard" 2>/dev/null
}

# h_guard_break: a guard is held for milliseconds, so an entry untouched for
# h_gstale seconds, or recorded on a previous boot, belongs to a process that
# died. Each entry is judged on its own evidence (its own age, its own boot)
# and removed by name, so a guard that was replaced meanwhile keeps its live
# holder's entry, and the rmdir that follows fails instead of removing it.
# An empty guard (its creator died between mkdir and its entry) goes once it
# is old; a creator caught in that gap fails its own check and backs off.
h_guard_break() {
	h_ge=$(ls -A "$h_guard" 2>/dev/null) || return 0
	if [ -z "$h_ge" ]; then
		if h_age "$h_guard" && [ "$h_a" -ge "$h_gstale" ]; then rmdir "$h_guard" 2>/dev/null; fi
		return 0
	fi
	h_ifs=$IFS
	IFS='
'
	for h_e in $h_ge; do
		h_gb=
		{ IFS= read -r h_gb <"$h_guard/$h_e"; } 2>/dev/null
		if h_prevboot "$h_gb" || { h_age "$h_guard/$h_e" && [ "$h_a" -ge "$h_gstale" ]; }; then
			rm -rf "$h_guard/$h_e"
		fi
	done
	IFS=$h_ifs
	rmdir "$h_guard" 2>/dev/null
	return 0
}
