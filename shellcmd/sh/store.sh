# The runtime store: runtimes/<id> are promoted trees, runtimes/.meta/<id>
# marks one verified (written only after the tree is in place),
# runtimes/.pins/<id> keeps one alive, <root>/current and <root>/previous
# are symlinks to runtimes/<id>.

# h_meta ID: reads runtimes/.meta/ID, hoist's mark that ID was verified and
# promoted: h_mname, h_msize, h_mwhen, h_mdigest (empty for a mark of an
# earlier version, which recorded no digest), and h_mord, its place in the
# order of promotions (h_order). Fails when there is no mark.
h_meta() {
	h_mname= h_msize= h_mwhen= h_mdigest= h_mord=
	[ -f "$h_store/.meta/$1" ] && [ ! -L "$h_store/.meta/$1" ] || return 1
	while IFS='=' read -r h_k h_v; do
		case $h_k in
		name) h_mname=$h_v ;;
		size) h_msize=$h_v ;;
		promoted) h_mwhen=$h_v ;;
		digest) h_mdigest=$h_v ;;
		order) h_mord=$h_v ;;
		esac
	done <"$h_store/.meta/$1"
	case $h_mord in '' | *[!0-9]* | ????????????????*) h_mord= ;; esac
	if [ -z "$h_mord" ]; then
		case $h_mwhen in
		'' | *[!0-9]* | ?????????????*) h_mord=0 ;;
		*) h_mord=${h_mwhen}000 ;;
		esac
	fi
}

# h_byorder: h_all, the runtimes with hoist's mark, newest first: an
# "order id" line each (h_meta). Marks whose orders tie (those of an
# earlier version, promoted in one second: h_order gives no two the same)
# go by id, byte by byte, the smaller first. list and gc both take this
# order, so the newest runtime of a name, which a name as a reference
# means, is the one gc keeps as the newest. A mark whose runtime is missing
# is listed too (gc sweeps it; list passes over it).
h_byorder() {
	set +f
	h_all=$(for h_mf in "$h_store"/.meta/*; do
		h_i=${h_mf##*/}
		{ [ -f "$h_mf" ] && h_isid "$h_i"; } || continue
		[ -e "$h_store/$h_i" ] || [ -L "$h_store/$h_i" ] || continue
		h_meta "$h_i"
		printf '%s %s\n' "${h_mord:-0}" "$h_i"
	done | LC_ALL=C sort -k1,1nr -k2,2)
	set -f
}

# h_order: under the lock, the place of the promotion being made in the
# order of the store's promotions, which list and gc go by (newest
# highest): the time the lock was taken in milliseconds, or one more than
# the highest place any mark has, whichever is larger. So promotions in
# one second, or after the clock was set back, still come in the order
# they were made; a mark of an earlier version, which has no place,
# counts as its promotion time. A place has at most 15 digits, here as in
# h_meta: a longer one is not read, and none is given. A mark already at
# the widest place (999999999999999, far beyond any clock: forged, or
# broken) leaves no place after it, and the promotion is refused, naming
# it (h_lasterr), rather than given a place h_meta would read as its
# promotion time, which would keep that mark the newest for good.
h_order() {
	set +f
	set --
	for h_mf in "$h_store"/.meta/*; do
		[ -f "$h_mf" ] && [ ! -L "$h_mf" ] && set -- "$@" "$h_mf"
	done
	set -f
	h_ord=$(awk -F= -v now="${h_since:-$(date +%s)}" '
		function fin() { v = (o != "") ? o : w; if (v + 0 > m) { m = v + 0; mf = f } }
		FNR == 1 { if (NR > 1) fin(); o = ""; w = 0; f = FILENAME }
		$1 == "order" && $2 ~ /^[0-9]+$/ && length($2) <= 15 { o = $2 }
		$1 == "promoted" && $2 ~ /^[0-9]+$/ && length($2) <= 12 { w = $2 * 1000 }
		END {
			if (NR > 0) fin()
			n = now * 1000; if (m + 1 > n) n = m + 1
			if (n > 999999999999999) { printf "full %s\n", mf; exit }
			printf "%.0f\n", n
		}' "$@" </dev/null 2>/dev/null)
	case $h_ord in
	"full "*)
		h_mf=${h_ord#full } h_ord=
		h_lasterr="$hp_storedir/.meta/${h_mf##*/} records order=999999999999999, the last place a promotion can have (15 digits): no promotion can come after it; remove that line from the mark (or the mark, if hoist did not write it) and push again"
		return 1
		;;
	# The lock's time in milliseconds, by concatenation: times a thousand
	# it passes 32 bits, which is all some shells count in (mksh).
	'' | *[!0-9]*) h_ord=${h_since:-$(date +%s)}000 ;;
	esac
}

# h_present ID [DIGEST]: ID is promoted: a real directory with its mark. With
# DIGEST, the mark must record that full digest too: two trees whose ids
# share the first 12 digits are not the same runtime. A mark of an earlier
# version has no digest and is matched by id alone.
h_present() {
	[ -d "$h_store/$1" ] && [ ! -L "$h_store/$1" ] && h_meta "$1" || return 1
	[ -z "$2" ] || [ -z "$h_mdigest" ] || [ "$h_mdigest" = "$2" ]
}

# h_pointer NAME: the runtime id <root>/NAME points to, or nothing.
h_pointer() {
	h_p=$(readlink "$h_root/$1" 2>/dev/null) || return 0
	case $h_p in "$hp_storedir"/*) printf '%s' "${h_p#"$hp_storedir"/}" ;; esac
}

# h_repoint NAME ID [SEEN]: points <root>/NAME at runtimes/ID by renaming a new
# symlink over the old one: there is never a moment without NAME, and never
# delete-then-create. Plain mv would move the new link INTO the directory the
# old one points to, so only a rename that refuses to follow it is used: GNU
# and busybox mv -T, BSD mv -h. Only hoist's own pointer is replaced (absent,
# or a symlink into the store): a file, a directory or another symlink at
# NAME is not hoist's, and is left alone. Fails saying why in h_lasterr.
# SEEN, when given, is the id this command just read NAME to point at
# (h_pointer, under the same hold): NAME is hoist's pointer without a
# second readlink (the rename replaces what is there then, as after one).
h_repoint() {
	h_lnk=$h_root/.$1-$hp_me
	if [ -z "$3" ] && { [ -e "$h_root/$1" ] || [ -L "$h_root/$1" ]; }; then
		case $(readlink "$h_root/$1" 2>/dev/null) in
		"$hp_storedir"/*) ;;
		*)
			h_lasterr="$h_root/$1 is not a pointer hoist made (a symlink into $hp_storedir/); it is left alone: move it away"
			return 1
			;;
		esac
	fi
	# A link of this command's token is left only by this command.
	if [ -e "$h_lnk" ] || [ -L "$h_lnk" ]; then rm -f "$h_lnk"; fi
	ln -s "$hp_storedir/$2" "$h_lnk" || return 1
	if mv -T "$h_lnk" "$h_root/$1" 2>/dev/null || mv -h "$h_lnk" "$h_root/$1" 2>/dev/null; then
		return 0
	fi
	rm -f "$h_lnk"
	h_lasterr="cannot rename a symlink over $h_root/$1 atomically on this host (no mv -T or mv -h)"
	return 1
}

# h_activate ID ACTION: under the lock, makes ID current and the old current
# previous, and appends the switch to <root>/history (what ACTION did it,
# from what, to what, by whom). Says ACTIVATED ID OLD. Fenced (h_fence),
# but for the switch a promotion makes right after its own fence, in the
# same command and under the same hold (h_fenced, which the switch uses
# up): one fence, then its mutations, as in h_promote.
h_activate() {
	if ! h_present "$1"; then
		h_say NOTFOUND "$1"
		return 1
	fi
	h_old=$(h_pointer current)
	if [ "$h_old" = "$1" ]; then
		h_say ACTIVATED "$1" "${h_old:--}"
		return 0
	fi
	if [ -n "$h_fenced" ]; then
		h_fenced=
	else
		h_fence || return 1
	fi
	if ! h_repoint current "$1" "$h_old"; then
		h_say ERROR switch "$(h_oneline "$h_lasterr")"
		return 1
	fi
	if [ -n "$h_old" ] && [ -d "$h_store/$h_old" ] && ! h_repoint previous "$h_old"; then
		h_say ERROR switch "$(h_oneline "current moved to $1, but previous could not be recorded: $h_lasterr")"
		return 1
	fi
	h_history "$2" "${h_old:--}" "$1"
	# Switched, whether or not the client is still there to hear it.
	h_say ACTIVATED "$1" "${h_old:--}"
	return 0
}

# h_history ACTION FROM TO: appends one line to <root>/history, under the
# lock, so lines never interleave: when (the lock was taken, h_since, just
# before), ACTION, FROM, TO, and who (the client's part of the lock record,
# its spaces made commas). The log only grows; a path there that is not a
# plain file is left alone.
h_history() {
	h_hf=$h_root/history
	if [ -L "$h_hf" ] || { [ -e "$h_hf" ] && [ ! -f "$h_hf" ]; }; then return 0; fi
	h_w=$hp_rec h_who=
	while :; do
		case $h_w in
		*' '*) h_who=$h_who${h_w%% *}, h_w=${h_w#* } ;;
		*) break ;;
		esac
	done
	printf '%s %s %s %s %s\n' "${h_since:-$(date +%s)}" "$1" "$2" "$3" "$h_who$h_w" >>"$h_hf" 2>/dev/null
	return 0
}

# h_rmtree PATH: removes something hoist made in the store: a runtime moved
# aside, a stage. A symlink is removed itself, never followed. Directories
# that the artifact made read-only are made writable first (found with find,
# which does not follow symlinks), since rm -rf alone cannot empty them.
h_rmtree() {
	if [ -L "$1" ]; then
		rm -f "$1"
		return
	fi
	[ -e "$1" ] || return 0
	if [ -d "$1" ]; then
		find "$1" -type d ! -perm -700 -exec chmod u+rwx {} \; 2>/dev/null
	fi
	rm -rf "$1"
}

# h_isid NAME: NAME can be a runtime id, so a mark of that name is hoist's.
h_isid() {
	case $1 in
	'' | .* | *[!A-Za-z0-9._+-]*) return 1 ;;
	esac
}

# h_isuuid NAME: NAME is a token, as hoist makes them.
h_isuuid() {
	case $1 in
	*[!0-9a-f-]* | *-*-*-*-*-*) return 1 ;;
	????????-????-????-????-????????????) return 0 ;;
	esac
	return 1
}
