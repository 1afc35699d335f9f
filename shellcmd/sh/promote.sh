# Promotion: after the upload, the archive is verified and unpacked in the
# stage, outside the lock; then, under the lock and fenced, the runtime is
# marked and renamed into runtimes/<id> (h_op_promote, h_promote). Also the
# checks a push makes before it uploads: that runtimes/<id> is not taken by
# something else (h_collides) and that the disk has room (h_room).

# h_op_promote: after the upload. Outside the lock: verify the archive's
# digest while unpacking it with its own modes (umask 0, owners not restored,
# then the directory modes from the archive's "modes" list, see h_modes), drop
# the archive. Then wait for the lock and, fenced, promote in the same
# command (h_promote) and with --activate switch current. The host releases
# the lock itself, and the stage is removed in every outcome but an unknown
# one, and one where another push took the stage over (it is that push's).
# h_op_stream (stream.sh) is the same promotion, begun with the upload.
h_op_promote() {
	h_stage=$h_store/.stage-$hp_stok
	h_pclaim || return
	# The claimed mark stays until the archive goes (h_pdone): no push
	# takes a stage over by it, and one rm removes both.
	h_step promote.marked
	h_pready || return
	h_ppass || return
	h_pdone
}

# h_pclaim: enters this push's stage (h_instage: everything after works
# inside it, by relative paths) and claims it: this push's stage, not one
# another push of this runtime took over to resume it (h_resume). The mark
# goes first, before anything else touches the stage (h_claim), and only
# one can take it. Says why not, and fails, when it cannot.
h_pclaim() {
	if ! h_instage; then
		if [ -e "$h_stage" ] || [ -L "$h_stage" ]; then
			h_say ERROR stage "$(h_oneline "$hp_storedir/.stage-$hp_stok") is not the stage this push made: another push of $hp_id took it over to resume it, or it was replaced (by a member of the store's group?); nothing was written through it"
		else
			h_say ERROR stage "the upload is missing from the stage"
		fi
		return 1
	fi
	h_claim && return 0
	if [ -f artifact.tar ]; then
		h_say ERROR stage "another push of $hp_id took this upload over to resume it"
	else
		h_say ERROR stage "the upload is missing from the stage"
	fi
	return 1
}

# h_pready: the claimed stage holds the archive, the host has a SHA-256
# tool and room for the tree, and the directory it is unpacked into is made
# (h_pud); else it says why, removes the stage and fails.
h_pready() {
	if [ ! -f artifact.tar ] || [ -L artifact.tar ]; then
		h_say ERROR stage "the upload is missing from the stage"
		h_unstage
		return 1
	fi
	if ! h_shaany; then
		h_nosha
		h_unstage
		return 1
	fi
	# Where the first command goes on as the promotion (h_inside), it
	# found room for the archive and the tree a moment ago.
	if [ -z "$h_inside" ] && ! h_room . 1 4096; then
		h_unstage
		return 1
	fi
	h_pud
}

# h_pud: the archive is unpacked into a directory made here and now, empty
# (h_ud), and everything the promotion writes goes there: whatever else a
# stage holds (one kept for a resume may hold anything the login put there)
# never becomes part of the runtime, and no link in it is written through.
# The pool of reused files the archive links to (h_reuse) moves in first; a
# pool that is a link stays out, and the links to it fail.
h_pud() {
	h_ud=unpack-$hp_stok
	if ! mkdir "$h_ud" 2>/dev/null ||
		{ [ -d pool ] && [ ! -L pool ] && ! mv pool "$h_ud/pool"; }; then
		h_say ERROR unpack "cannot make a directory to unpack into in the stage (disk full?)"
		h_unstage
		return 1
	fi
}

# h_ppass: digest and unpack side by side: both read the archive, which
# only this push writes (h_resume gives a stage it takes over a new one),
# and nothing leaves the stage before the digest matches hp_sum. Says why
# not (CORRUPT, ERROR), removes the stage and fails when it does not.
h_ppass() {
	h_sha256 artifact.tar >"$h_ud/sum" 2>/dev/null &
	h_sp=$!
	h_e=$(cd -P "$h_ud" && umask 0 && tar -xof ../artifact.tar 2>&1 && h_modes 2>&1)
	h_ux=$?
	wait "$h_sp"
	h_shst=$?
	h_got=
	{ IFS= read -r h_got <"$h_ud/sum"; } 2>/dev/null
	if [ "$h_shst" -eq 3 ]; then
		h_nosha "none of those there works"
	elif [ -z "$h_got" ]; then
		# The tool is there, so the digest could not be written: the
		# stage's disk is full, which tar says too.
		h_say ERROR unpack "$(h_oneline "${h_e:-cannot write the digest in the stage (disk full?)}")"
	elif [ "$h_got" != "$hp_sum" ]; then
		h_say CORRUPT "$h_got"
	elif [ "$h_ux" -ne 0 ]; then
		h_say ERROR unpack "$(h_oneline "$h_e")"
	else
		return 0
	fi
	h_unstage
	return 1
}

# h_pdone: the verified tree is unpacked: the archive and what only the
# unpacking needed go, and the promotion goes on under the lock, fenced,
# with the switch of --activate; the host releases the lock and removes the
# stage.
h_pdone() {
	rm -rf artifact.tar "$h_ud/pool" "$h_ud/sum" "claimed-$hp_stok"
	if ! h_take; then
		h_unstage
		return
	fi
	# A switch settles what an earlier sequence left first (h_settle,
	# which fences again after a record it settles).
	if h_promote && [ -n "$hp_activate" ]; then
		h_fenced=1
		! h_settle || h_activate "$hp_id" push
	fi
	h_release_end
	h_unstage "$h_scr"
}

# h_modes: where the archive was unpacked, gives directories their real
# modes. They were unpacked writable, because some tar implementations
# cannot fill a directory they created read-only. One "<octal
# mode><tab><path>" per line.
h_modes() {
	[ -f modes ] || return 0
	while IFS='	' read -r h_fm h_fp; do
		[ -n "$h_fp" ] || continue
		chmod "$h_fm" "tree/$h_fp" || return 1
	done <modes
}

# h_promote: under the lock, fenced. If another client promoted this runtime
# meanwhile, the stage is just dropped. The mark is written first and the
# tree renamed into place after it: a promotion cut short between the two
# leaves a mark without a tree, which counts as nothing and which gc
# removes, never a tree hoist could not prove it made. A path at
# runtimes/<id> that is not this runtime is left alone (h_collides).
h_promote() {
	h_fence || return 1
	# Under the lock, the stage is still at its name: a promotion that
	# stalled past the stale period may be in what gc moved aside to sweep
	# (h_gc_sweep renames under the lock) and began to empty; one whose
	# stage someone renamed (a team store's group) promotes nothing either.
	# shellcheck disable=SC3013 # test -ef, as in h_enter
	if [ ! . -ef "../.stage-$hp_stok" ]; then
		h_say ERROR stage "$(h_oneline "$hp_storedir/.stage-$hp_stok") is not this push's stage any more: gc swept it while this push stalled (nothing was written to it for the stale period), or someone renamed it (its group may write $hp_storedir); nothing was promoted: push again"
		return 1
	fi
	if h_present "$hp_id" "$hp_digest"; then
		h_say PRESENT "$hp_id"
		return 0
	fi
	h_collides && return 1
	# The mark is written in the stage, where nobody else can put a link
	# to write through, and renamed into .meta (never into a directory at
	# its name, as the tree below).
	if ! h_order; then
		h_say ERROR promote "$(h_oneline "$h_lasterr")"
		return 1
	fi
	if ! h_e=$(h_mkshared "$h_store/.meta" 2>&1) ||
		! printf 'name=%s\nsize=%s\npromoted=%s\ndigest=%s\norder=%s\n' "$hp_name" "$hp_size" "${h_since:-$(date +%s)}" "$hp_digest" "$h_ord" >"$h_ud/mark" ||
		! h_movein "$h_ud/mark" "$h_store/.meta/$hp_id"; then
		h_say ERROR promote "cannot mark $hp_id verified (disk full?)"
		return 1
	fi
	# Never into a directory that appeared meanwhile (h_movein).
	if ! h_movein "$h_ud/tree" "$h_store/$hp_id"; then
		h_say ERROR promote "cannot move the stage into $hp_storedir/$hp_id"
		return 1
	fi
	# The list of the runtime's files, for later pushes to reuse them
	# (h_reuse). A promotion cut short before it only makes the runtime's
	# files travel again.
	if [ -f "$h_ud/files" ] && h_mkshared "$h_store/.files" 2>/dev/null; then
		h_movein "$h_ud/files" "$h_store/.files/$hp_id"
	fi
	h_say PROMOTED "$hp_id"
}

# h_movein FILE PATH: renames FILE (a file, or the tree) to PATH,
# replacing a file or a link there, never moving into a directory (or a
# link to one) at PATH: mv -T (GNU, busybox), elsewhere only when PATH is
# absent.
h_movein() {
	mv -fT "$1" "$2" 2>/dev/null ||
		{ [ ! -e "$2" ] && [ ! -L "$2" ] && mv -f "$1" "$2" 2>/dev/null; }
}

# h_collides: runtimes/<id> is taken by something that is not this runtime:
# a mark with another digest (two trees whose ids share 12 digits), or a path
# without hoist's mark, which hoist did not make and never replaces. Says the
# error.
h_collides() {
	[ -e "$h_store/$hp_id" ] || [ -L "$h_store/$hp_id" ] || return 1
	if ! h_meta "$hp_id"; then
		# Outside the lock, gc may have deleted the runtime between the
		# two looks (its tree moved aside, then its mark removed): a path
		# that is gone now is no collision, and one still there must
		# still have no mark (a promotion writes the mark first).
		{ [ -e "$h_store/$hp_id" ] || [ -L "$h_store/$hp_id" ]; } || return 1
		if ! h_meta "$hp_id"; then
			h_say ERROR foreign "$(h_oneline "$hp_storedir/$hp_id")"
			return 0
		fi
	fi
	if [ -n "$h_mdigest" ] && [ "$h_mdigest" != "$hp_digest" ]; then
		h_say ERROR collision "$hp_id" "$h_mdigest"
		return 0
	fi
	return 1
}

# h_room DIR TIMES PER: DIR's filesystem has room (df, in KiB) for TIMES
# times the runtime's size (hp_size), PER bytes for each of its entries
# (hp_entries) and 1 MiB more, or the host cannot tell (then the write
# itself reports a full disk). Says ERROR space NEED FREE, in KiB, when it
# has not. A runtime of less than 100 MB in less than 100000 entries is
# summed by the shell (TIMES is 1 or 2, PER at most 4608: below 2^31, all
# some shells count in, mksh), and a free space of ten digits or more is
# more than it needs; other sizes go to awk, where they pass 2 GiB, and
# free space 2 TiB, without turning negative and passing every check.
h_room() {
	h_need= h_df=$(df -Pk "$1" 2>/dev/null)
	case $hp_size:$hp_entries in
	*[!0-9:]* | :* | *: | ?????????*:* | *:??????*)
		h_need=$(printf '%s\n' "$h_df" | awk -v s="$hp_size" -v n="$hp_entries" -v x="$2" -v e="$3" '
			NR == 2 { f = $4 }
			END {
				need = int((x * s + n * e + 1023) / 1024) + 1024
				if (f ~ /^[0-9]+$/ && f + 0 < need) printf "%.0f %s\n", need, f
			}')
		;;
	*)
		# df's second line, fourth field (as awk splits it).
		case $h_df in *"$h_nl"*) ;; *) return 0 ;; esac
		h_df=${h_df#*"$h_nl"}
		h_x=$(($2 * hp_size + hp_entries * $3))
		# shellcheck disable=SC2086 # df's fields, split on purpose
		set -- ${h_df%%"$h_nl"*}
		case $4 in '' | *[!0-9]* | ??????????*) return 0 ;; esac
		h_x=$(((h_x + 1023) / 1024 + 1024))
		if [ "$4" -lt "$h_x" ]; then h_need="$h_x $4"; fi
		;;
	esac
	case $h_need in *[0-9]" "[0-9]*) ;; *) return 0 ;; esac
	h_say ERROR space "${h_need% *}" "${h_need#* }"
	return 1
}
