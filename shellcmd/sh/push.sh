# h_op_pushcheck: the first command of a push. A runtime already promoted
# with this digest costs this one command (and, with --activate, the switch
# under the lock in the same command). Otherwise it checks that the host has
# room for the upload and its unpacked tree, and makes the stage the upload
# goes into, outside the lock; the stage is private to the login.
h_op_pushcheck() {
	h_mkstore || return
	h_collides && return
	if h_present "$h_id" "$h_digest"; then
		if [ -z "$h_activate" ]; then
			h_say PRESENT "$h_id"
			return
		fi
		if [ "$(h_pointer current)" = "$h_id" ]; then
			h_say ACTIVATED "$h_id" "$h_id"
			h_say PRESENT "$h_id"
			return
		fi
		h_take || return
		# Checked again under the lock: a gc may have taken it meanwhile,
		# and then it is uploaded again like any missing runtime.
		if h_present "$h_id" "$h_digest"; then
			h_activate "$h_id" push
			h_release_say
			rm -rf "$h_scr"
			h_say PRESENT "$h_id"
			return
		fi
		h_release_say
		rm -rf "$h_scr"
	fi
	# The archive and the tree unpacked from it, side by side.
	h_room "$h_store" $((2 * h_size + h_entries * 4608)) || return
	h_stage=$h_store/.stage-$h_stok
	if h_e=$(umask 077 && mkdir "$h_stage" 2>&1); then
		h_say STAGE "$h_id"
	else
		h_say ERROR mkdir "$(h_oneline "$h_e")"
	fi
}

# h_collides: runtimes/<id> is taken by something that is not this runtime:
# a mark with another digest (two trees whose ids share 12 digits), or a path
# without hoist's mark, which hoist did not make and never replaces. Says the
# error.
h_collides() {
	[ -e "$h_store/$h_id" ] || [ -L "$h_store/$h_id" ] || return 1
	if ! h_meta "$h_id"; then
		h_say ERROR foreign "$(h_oneline "$h_storedir/$h_id")"
		return 0
	fi
	if [ -n "$h_mdigest" ] && [ "$h_mdigest" != "$h_digest" ]; then
		h_say ERROR collision "$h_id" "$h_mdigest"
		return 0
	fi
	return 1
}

# h_room DIR BYTES: DIR's filesystem has BYTES free (df, in KiB), or the host
# cannot tell (then the write itself reports a full disk). Says ERROR space
# NEED FREE, in KiB, when it has not.
h_room() {
	h_need=$((($2 + 1023) / 1024 + 1024))
	h_free=$(df -Pk "$1" 2>/dev/null | {
		read -r _
		read -r _ _ _ h_av _
		printf '%s' "$h_av"
	})
	case $h_free in '' | *[!0-9]*) return 0 ;; esac
	[ "$h_free" -lt "$h_need" ] || return 0
	h_say ERROR space "$h_need" "$h_free"
	return 1
}

# h_op_promote: after the upload. Outside the lock: verify the archive's
# digest while unpacking it with its own modes (umask 0, owners not restored,
# then the directory modes from the archive's "modes" list, see h_modes), drop
# the archive. Then wait for the lock and, fenced, promote in the same
# command (h_promote) and with --activate switch current. The host releases
# the lock itself, and the stage is removed in every outcome but an unknown
# one.
h_op_promote() {
	h_stage=$h_store/.stage-$h_stok
	if [ ! -f "$h_stage/artifact.tar" ] || [ -L "$h_stage/artifact.tar" ]; then
		h_say ERROR stage "the upload is missing from the stage"
		h_rmtree "$h_stage"
		return
	fi
	if ! h_shatool; then
		h_say ERROR nosha256 "no openssl, sha256sum, shasum or sha256 on the host"
		h_rmtree "$h_stage"
		return
	fi
	if ! h_room "$h_stage" $((h_size + h_entries * 4096)); then
		h_rmtree "$h_stage"
		return
	fi
	# Digest and unpack side by side: both read the archive, and nothing
	# leaves the stage before the digest matches.
	h_sha256 "$h_stage/artifact.tar" >"$h_stage/sum" 2>/dev/null &
	h_sp=$!
	h_e=$(cd "$h_stage" && umask 0 && tar -xof artifact.tar 2>&1 && h_modes 2>&1)
	h_ux=$?
	wait "$h_sp"
	h_got=
	{ IFS= read -r h_got <"$h_stage/sum"; } 2>/dev/null
	if [ -z "$h_got" ]; then
		# The tool is there, so the digest could not be written: the
		# stage's disk is full, which tar says too.
		h_say ERROR unpack "$(h_oneline "${h_e:-cannot write the digest in the stage (disk full?)}")"
	elif [ "$h_got" != "$h_sum" ]; then
		h_say CORRUPT "$h_got"
	elif [ "$h_ux" -ne 0 ]; then
		h_say ERROR unpack "$(h_oneline "$h_e")"
	else
		h_got=ok
	fi
	if [ "$h_got" != ok ]; then
		h_rmtree "$h_stage"
		return
	fi
	rm -f "$h_stage/artifact.tar"
	if ! h_take; then
		h_rmtree "$h_stage"
		return
	fi
	h_promote && if [ -n "$h_activate" ]; then h_activate "$h_id" push; fi
	h_release_say
	h_rmtree "$h_stage"
	rm -rf "$h_scr"
}

# h_modes: in the stage, gives directories their real modes. They were
# unpacked writable, because some tar implementations cannot fill a
# directory they created read-only. One "<octal mode><tab><path>" per line.
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
	if h_present "$h_id" "$h_digest"; then
		h_say PRESENT "$h_id"
		return 0
	fi
	h_collides && return 1
	if ! h_e=$(h_mkshared "$h_store/.meta" 2>&1) ||
		! printf 'name=%s\nsize=%s\npromoted=%s\ndigest=%s\n' "$h_name" "$h_size" "$(date +%s)" "$h_digest" >"$h_store/.meta/.$h_id-$h_me" ||
		! mv -f "$h_store/.meta/.$h_id-$h_me" "$h_store/.meta/$h_id"; then
		rm -f "$h_store/.meta/.$h_id-$h_me"
		h_say ERROR promote "cannot mark $h_id verified (disk full?)"
		return 1
	fi
	# mv -T (GNU, busybox) never moves into a directory that appeared
	# meanwhile; elsewhere the path was just found absent.
	if ! mv -T "$h_stage/tree" "$h_store/$h_id" 2>/dev/null &&
		! { [ ! -e "$h_store/$h_id" ] && mv "$h_stage/tree" "$h_store/$h_id"; }; then
		h_say ERROR promote "cannot move the stage into $h_storedir/$h_id"
		return 1
	fi
	h_say PROMOTED "$h_id"
}

# h_op_dropstage: removes this push's stage after a failed upload. A stage
# whose upload ended in an unknown outcome is left for gc instead.
h_op_dropstage() {
	h_rmtree "$h_store/.stage-$h_stok"
	h_say DROPPED
}
