# Status is read-only: it samples and evaluates, and changes nothing.
h_op_status() {
	if [ ! -d "$h_store" ]; then
		h_say NOSTORE
	elif h_badpath; then
		h_say ERROR lockpath "$(h_oneline "$h_lock")"
	elif h_sample; then
		h_stealable
		h_say LOCK "${h_a:--}" "${h_why:--}" "${h_line:--}"
	else
		h_say FREE
	fi
}

# A manual hold outlives this command, so the client must confirm it received
# the token (ack); without that nobody could release it, and it is released
# here at once.
h_op_acquire() {
	if [ -n "$h_try" ]; then
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
	h_say HOLDING "$h_me"
}

# Acquire, run and release in one exec.
h_op_run() {
	h_mkstore || return
	h_take || return
	h_run
	exit "$h_st"
}

# h_take: the waiting acquire that manual holds and runs share: a scratch
# directory, the stdin watcher, the wait, and ACQUIRED.
h_take() {
	h_scratch || return 1
	h_watch
	if ! h_acquire "$h_wait"; then
		rm -rf "$h_scr"
		return 1
	fi
	h_say ACQUIRED "$h_me"
}

h_op_release() {
	if [ -d "$h_store" ]; then
		h_release
		h_say_release $?
	else
		h_say NOTHELD
	fi
}

# Break moves the lock aside under the guard: without force only when a rule
# makes it stealable, with force only when its token is the one given ("-"
# names a lock whose record is missing or unreadable).
h_op_break() {
	if [ ! -d "$h_store" ]; then
		h_say NOSTORE
		return
	fi
	if h_badpath; then
		h_say ERROR lockpath "$(h_oneline "$h_lock")"
		return
	fi
	if ! h_guard_take; then
		h_say ERROR guard busy
		return
	fi
	h_v=
	if ! h_sample; then
		h_v=FREE
	else
		h_stealable
		if [ -n "$h_force" ]; then
			if [ "${h_tok:--}" = "$h_me" ]; then h_why=forced; else h_v=NOTOWNER; fi
		elif [ -z "$h_why" ]; then
			h_v=NOTSTALE
		fi
		if [ -z "$h_v" ]; then
			if mv "$h_lock" "$h_lock.broken-$h_gid" 2>/dev/null; then h_v=BROKEN; else h_v=ERROR; fi
		fi
	fi
	h_guard_drop
	rm -rf "$h_lock.broken-$h_gid"
	case $h_v in
	FREE) h_say FREE ;;
	BROKEN) h_say BROKEN "$h_why" "${h_a:--}" "${h_line:--}" ;;
	ERROR) h_say ERROR mv ;;
	*) h_say "$h_v" "${h_a:--}" "${h_line:--}" ;;
	esac
}
