# h_op_pushcheck: the first command of a push. A runtime already promoted
# with this digest costs this one command (and, with --activate, the switch
# under the lock in the same command). Otherwise it checks that the host has
# room for the upload and its unpacked tree, and makes the stage the upload
# goes into, outside the lock; the stage is private to the login. Under a
# manual hold (--token) the hold is checked first (h_held), so a token that
# is not this store's lock is told before anything is made or uploaded.
h_op_pushcheck() {
	h_held || return
	h_mkstore || return
	h_collides && return
	if h_present "$hp_id" "$hp_digest"; then
		if [ -z "$hp_activate" ]; then
			h_say PRESENT "$hp_id"
			return
		fi
		if [ "$(h_pointer current)" = "$hp_id" ] && ! h_anyunfin; then
			h_say ACTIVATED "$hp_id" "$hp_id"
			h_say PRESENT "$hp_id"
			return
		fi
		h_take || return
		h_took=1
		# Checked again under the lock: a gc may have taken it meanwhile,
		# and then it is uploaded again like any missing runtime. The
		# switch settles what an earlier sequence left first (h_settle).
		if h_present "$hp_id" "$hp_digest"; then
			! h_settle || h_activate "$hp_id" push
			h_release_end
			rm -rf "$h_scr"
			h_say PRESENT "$hp_id"
			return
		fi
		h_release_end
		rm -rf "$h_scr"
	fi
	# A host that could not verify the upload is told before it is sent.
	if ! h_shaany; then
		h_nosha
		return
	fi
	# The archive and the tree unpacked from it, side by side.
	h_room "$h_store" 2 4608 || return
	h_stage=$h_store/.stage-$hp_stok
	h_resume
	case $? in
	1) h_mkstage || return ;;
	2)
		h_say ERROR stage "the stage taken over to resume $hp_id was not the one claimed when it was entered: someone renames entries in $hp_storedir (its group may write it); nothing was written or removed: push again, and find out who if it happens again"
		return
		;;
	esac
	# From here on the stage is this command's working directory
	# (h_enter). The file the upload writes, made here where only the
	# login can reach; the files the host has; and, last, the mark by which
	# a later push of this runtime resumes the stage if this upload is cut
	# short (the promotion removes it first).
	if ! { [ -f artifact.tar ] || (umask 077 && : >artifact.tar); }; then
		h_unstage
		h_say ERROR mkdir "cannot write in the stage (disk full?)"
		return
	fi
	# Where others may rename the stage (a store a team shares), the
	# upload opens the archive by a name that may lead elsewhere by then:
	# it checks that the file it opened bears this date, which nobody else
	# can give a file of the login's, before it writes.
	h_share=private
	if [ -n "$h_swap" ]; then
		if ! TZ=UTC0 touch -m -t "$hp_stamp" artifact.tar 2>/dev/null; then
			h_unstage
			h_say ERROR stage "cannot date the stage's archive with touch -t, which a store its group may write needs: install coreutils there"
			return
		fi
		h_share=shared
	fi
	h_reuse
	if ! printf '%s %s %s\n' "$hp_id" "$hp_digest" "$hp_window" >resume.t ||
		! mv -f resume.t resume; then
		h_unstage
		h_say ERROR mkdir "cannot write in the stage (disk full?)"
		return
	fi
	h_say STAGE "$hp_id" "$h_share"
	h_staged=1
}

# h_op_pushstream: a push in one host command (docs/protocol.md, "A push
# in one command"): h_op_pushcheck, and where it made the stage (or took
# one over) without taking the lock, the promotion begun with the upload
# (h_op_stream) in the same command, which goes on to claim the stage at
# once; the client reads STAGE, starts the upload and feeds W and E lines
# on this command's input. A command that took the lock on the way (a
# runtime gc took while --activate waited) ends at STAGE: the lock's
# token names one hold, so the client promotes in a command of its own.
h_op_pushstream() {
	h_staged= h_took=
	h_op_pushcheck
	[ -n "$h_staged" ] && [ -z "$h_took" ] || return 0
	h_inside=1
	h_op_stream
}
