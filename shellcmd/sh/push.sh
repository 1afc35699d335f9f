# h_op_pushcheck: the first command of a push. A runtime already promoted and
# verified costs this one command (and, with --activate, the switch under
# the lock in the same command). Otherwise it makes the stage the upload goes
# into, outside the lock.
h_op_pushcheck() {
	h_mkstore || return
	if h_present "$h_id"; then
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
		if h_present "$h_id"; then
			h_activate "$h_id"
			h_release_say
			rm -rf "$h_scr"
			h_say PRESENT "$h_id"
			return
		fi
		h_release_say
		rm -rf "$h_scr"
	fi
	h_stage=$h_store/.stage-$h_me
	if h_e=$(mkdir "$h_stage" 2>&1); then
		h_say STAGE "$h_id"
	else
		h_say ERROR mkdir "$(h_oneline "$h_e")"
	fi
}

# h_op_promote: after the upload. Outside the lock: verify the archive's
# digest while unpacking it with its own modes (umask 0, then the directory
# modes from the archive's "modes" list, see h_modes), drop the archive. Then wait
# for the lock and, fenced, promote in the same command: if another client
# promoted the same id meanwhile just drop the stage; else rename the tree
# into runtimes/<id> (the id is checked to be absent first: mv would move
# into an existing directory), mark it verified, and with --activate switch
# current. The host releases the lock itself, and the stage is removed in
# every outcome but an unknown one.
h_op_promote() {
	h_stage=$h_store/.stage-$h_me
	if [ ! -f "$h_stage/artifact.tar" ]; then
		h_say ERROR stage "the upload is missing from the stage"
		h_rmtree "$h_stage"
		return
	fi
	# Digest and unpack side by side: both read the archive, and nothing
	# leaves the stage before the digest matches.
	h_sha256 "$h_stage/artifact.tar" >"$h_stage/sum" &
	h_sp=$!
	h_e=$(cd "$h_stage" && umask 0 && tar -xf artifact.tar 2>&1 && h_modes 2>&1)
	h_ux=$?
	wait "$h_sp"
	h_got=
	{ IFS= read -r h_got <"$h_stage/sum"; } 2>/dev/null
	if [ -z "$h_got" ]; then
		h_say ERROR nosha256 "no sha256sum, shasum or sha256 on the host"
		h_rmtree "$h_stage"
		return
	fi
	if [ "$h_got" != "$h_sum" ]; then
		h_say CORRUPT "$h_got"
		h_rmtree "$h_stage"
		return
	fi
	if [ "$h_ux" -ne 0 ]; then
		h_say ERROR unpack "$(h_oneline "$h_e")"
		h_rmtree "$h_stage"
		return
	fi
	rm -f "$h_stage/artifact.tar"
	if ! h_take; then
		h_rmtree "$h_stage"
		return
	fi
	h_promote && if [ -n "$h_activate" ]; then h_activate "$h_id"; fi
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

h_promote() {
	h_fence || return 1
	if h_present "$h_id"; then
		h_say PRESENT "$h_id"
		return 0
	fi
	mkdir -p "$h_store/.meta" || return 1
	# A tree without its mark is a promotion cut short: never verified, so
	# never activated; it goes.
	if [ -e "$h_store/$h_id" ] || [ -L "$h_store/$h_id" ]; then
		if ! mv "$h_store/$h_id" "$h_store/.trash-$h_me-$h_id"; then
			h_say ERROR promote "cannot move aside an unverified $h_storedir/$h_id"
			return 1
		fi
		h_rmtree "$h_store/.trash-$h_me-$h_id"
	fi
	if ! mv "$h_stage/tree" "$h_store/$h_id"; then
		h_say ERROR promote "cannot move the stage into $h_storedir/$h_id"
		return 1
	fi
	if printf 'name=%s\nsize=%s\npromoted=%s\n' "$h_name" "$h_size" "$(date +%s)" >"$h_store/.meta/.$h_id-$h_me" &&
		mv -f "$h_store/.meta/.$h_id-$h_me" "$h_store/.meta/$h_id"; then
		h_say PROMOTED "$h_id"
		return 0
	fi
	h_say ERROR promote "cannot mark $h_id verified (disk full?)"
	return 1
}

# h_op_dropstage: removes this push's stage after a failed upload. A stage
# whose upload ended in an unknown outcome is left for gc instead.
h_op_dropstage() {
	h_rmtree "$h_store/.stage-$h_me"
	h_say DROPPED
}
