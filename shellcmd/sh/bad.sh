# Bad marks (docs/rollout.md, "Bad marks"): runtimes/.bad/<id> says that a
# runtime failed its checks on this host: when, in which sequence, why. A
# marked runtime is activated only with hp_force, passed over by a rollback
# without an id, and never removed for being bad; a forced one that passes
# loses its mark (h_health).

# h_isbad ID: ID is marked bad on this host: h_bwhen, h_bwhy, h_brid.
h_isbad() {
	h_bwhen= h_bwhy= h_brid=
	[ -f "$h_store/.bad/$1" ] && [ ! -L "$h_store/.bad/$1" ] || return 1
	while IFS='=' read -r h_k h_v; do
		case $h_k in
		when) h_bwhen=$h_v ;;
		why) h_bwhy=$h_v ;;
		rollout) h_brid=$h_v ;;
		esac
	done <"$h_store/.bad/$1"
}

# h_markbad ID WHY: the mark, written whole (a reader sees all of it).
h_markbad() {
	h_mkshared "$h_store/.bad" || return 0
	# set -C: the temporary file is made, never opened through what a
	# member of a team store planted at its name (a link to a file of ours).
	(
		set -C
		printf 'when=%s\nrollout=%s\nwhy=%s\n' "$(date +%s)" "$hp_hid" "$(h_oneline "$2")" >"$h_store/.bad/.$1.$hp_hid.t"
	) 2>/dev/null &&
		mv -f "$h_store/.bad/.$1.$hp_hid.t" "$h_store/.bad/$1"
}

# h_badok ID: a runtime marked bad is tried only with hp_force; else
# ERROR bad ID WHEN WHY.
h_badok() {
	h_isbad "$1" || return 0
	[ -n "$hp_force" ] && return 0
	h_say ERROR bad "$1" "${h_bwhen:--}" "$(h_oneline "${h_bwhy:--}")"
	return 1
}

# h_rbtarget: where a rollback without an id goes: previous unless it is
# marked bad, else the newest runtime the history names that is present,
# not current and not bad; nothing when there is none.
h_rbtarget() {
	h_to=$(h_pointer previous) h_cur=$(h_pointer current)
	if [ -n "$h_to" ] && h_present "$h_to" && ! h_isbad "$h_to"; then return 0; fi
	h_to=
	[ -f "$h_root/history" ] && [ ! -L "$h_root/history" ] || return 0
	h_hl=$(awk '{ a[NR] = $4 " " $3 } END { for (i = NR; i > 0; i--) print a[i] }' "$h_root/history" 2>/dev/null)
	for h_c in $h_hl; do
		if [ "$h_c" != "$h_cur" ] && h_isid "$h_c" && h_present "$h_c" && ! h_isbad "$h_c"; then
			h_to=$h_c
			return 0
		fi
	done
}

