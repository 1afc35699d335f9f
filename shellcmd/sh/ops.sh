# Status is read-only: it samples and evaluates, and changes nothing. It
# also names what an earlier version may have left at the guard path, which
# nothing uses any more, and the rollout records left unfinished here
# (h_sayunfin).
h_op_status() {
	if [ ! -d "$h_store" ]; then
		h_say NOSTORE
		return
	fi
	if [ -e "$h_lock.guard" ] || [ -L "$h_lock.guard" ]; then
		h_say DEBRIS "$(h_oneline "$h_lock.guard")"
	fi
	h_sayunfin
	h_settled
	case $h_kind in
	bad) h_say ERROR lockpath "$h_oddwhy" "$(h_oneline "$h_odd")" ;;
	free | dead) h_say FREE ;;
	*)
		h_stealable
		h_say_holder LOCK
		;;
	esac
}

# h_op_root: where the store's root is on this host, for the client to
# tell two targets of one command that reach one store, which it then
# works on once: ROOT MNTNS DIR REST. DIR is the device and inode of the
# root's parent directory (of the nearest directory above it that exists,
# when that is not there yet), REST the way from it to the root, "./NAME"
# (h_pct), and MNTNS the mount namespace this shell resolves paths in (the
# device and inode of /proc/self/ns/mnt), read only where /proc is proven
# this namespace's (h_proc). A path alone proves nothing: one that does
# not exist yet names different places in two mount namespaces, a tmpfs of
# each at the same path, say. The parent, not the root: a root that the
# first target makes meanwhile, in the usual case where its parent exists,
# keeps its answer. What cannot be read is "-", and then the client works
# on each target. One stat; read-only.
h_op_root() {
	h_rmnt=- h_rdir=- h_rrest= h_rp=$h_root
	while :; do
		h_rrest=/${h_rp##*/}$h_rrest h_rp=${h_rp%/*}
		[ -n "$h_rp" ] || h_rp=/
		if [ -e "$h_rp" ] || [ -L "$h_rp" ] || [ "$h_rp" = / ]; then break; fi
	done
	if [ -n "$h_proc" ] && [ "$h_stat" = gnu ] && [ -d "$h_rp" ]; then
		h_x=$(stat -L -c %d:%i -- "$h_rp" /proc/self/ns/mnt 2>/dev/null)
		case $h_x in
		[0-9]*:[0-9]*"$h_nl"[0-9]*:[0-9]*)
			h_rdir=${h_x%%"$h_nl"*} h_rmnt=${h_x#*"$h_nl"}
			case $h_rdir:$h_rmnt in *[!0-9:]*) h_rdir=- h_rmnt=- ;; esac
			;;
		esac
	fi
	h_say ROOT "$h_rmnt" "$h_rdir" "$(h_pct ".$h_rrest")"
}

# A manual hold outlives this command, so the client must confirm it received
# the token (ack); without that nobody could release it, and it is released
# here at once.
h_op_acquire() {
	h_manual=1
	if [ -n "$hp_try" ]; then
		if [ ! -d "$h_store" ]; then
			h_say NOSTORE
			return
		fi
	else
		h_mkstore || return
	fi
	h_take || return
	h_i=0
	while [ ! -f "$h_scr/ack" ]; do
		if h_left || [ "$h_i" -ge "$h_acktries" ]; then
			h_release
			h_say ABANDONED
			rm -rf "$h_scr"
			return
		fi
		h_i=$((h_i + 1))
		sleep "$h_nap"
	done
	rm -rf "$h_scr"
	h_say HOLDING "$hp_me"
}

# Acquire, run and release in one exec; the rollout records left
# unfinished here are named (h_sayunfin), never settled.
h_op_run() {
	h_mkstore || return
	h_isrun=1
	h_take || return
	h_sayunfin
	h_run
	exit "$h_st"
}

# h_take: the waiting acquire that manual holds, runs and store commands
# share: a scratch directory, the stdin watcher, the wait, and ACQUIRED; then
# the guardian's heartbeats (h_guardrun) for a store command (a run starts
# its own, with the relay; a manual hold outlives this command). Under a
# manual hold (hp_hold) nothing is acquired: the hold must still be ours, in
# this same command (h_fence), and its lease is the one renewed.
h_take() {
	h_scratch || return 1
	h_watch
	if [ -n "$hp_hold" ]; then
		if ! h_held; then
			rm -rf "$h_scr"
			return 1
		fi
	elif ! h_acquire "$hp_wait"; then
		rm -rf "$h_scr"
		return 1
	fi
	h_say ACQUIRED "$hp_me"
	[ -n "$h_manual" ] || [ -n "$h_isrun" ] || h_guardrun ''
}

# h_op_refresh: renews a manual hold's lease (h_renew): REFRESHED LEASE, or
# LOST with the lock as it is now (its own record when the lease ran out
# before the renewal), or NOTHELD.
h_op_refresh() {
	if [ ! -d "$h_store" ]; then
		h_say NOSTORE
		return
	fi
	h_ownlease
	if h_renew; then
		h_say REFRESHED "$h_mylease"
		return
	fi
	h_sample
	case $h_kind in
	free | dead) h_say NOTHELD ;;
	*) h_say_holder LOST ;;
	esac
}

h_op_release() {
	if [ -d "$h_store" ]; then
		h_release_end
	else
		h_say NOTHELD
	fi
}

# Break takes a lock without creating one: without force only when a rule
# makes it stealable, with force only when its token is the one given ("-"
# names a lock whose record is missing or unreadable). The move is the same
# compare-and-swap as a steal's: a lock that changed after it was judged is
# left alone.
h_op_break() {
	if [ ! -d "$h_store" ]; then
		h_say NOSTORE
		return
	fi
	h_settled
	case $h_kind in
	bad)
		h_say ERROR lockpath "$h_oddwhy" "$(h_oneline "$h_odd")"
		return
		;;
	free | dead)
		h_say FREE
		return
		;;
	esac
	h_stealable
	if [ -n "$hp_force" ]; then
		# "-" names a lock whose record is missing or unreadable.
		if [ "${h_r_tok:--}" != "$hp_me" ] && { [ -z "$h_tok" ] || [ "$h_tok" != "$hp_me" ]; }; then
			h_say_holder NOTOWNER
			return
		fi
		h_why=forced
	elif [ -z "$h_why" ]; then
		h_say_holder NOTSTALE
		return
	fi
	h_step break.judged
	h_moved=$h_lock.broken-$hp_me
	h_cas "$h_moved"
	case $? in
	1)
		h_say ERROR changed
		return
		;;
	2)
		h_say ERROR permission "$(h_oneline "$h_lasterr")"
		return
		;;
	esac
	rm -f "$h_moved"
	h_clear
	h_say_holder BROKEN
}
