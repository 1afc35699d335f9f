# h_watch: the client keeps its end of stdin open for the whole command, so EOF
# means it went away (killed, disconnected or detached). A line "stop" asks to
# stop the command (the guardian does, h_guard); "ack" confirms that a manual hold reached the client. The
# reader runs in the background and only leaves marker files in h_scr
# (h_mark); its output goes nowhere, so it never holds the channel open.
# Every line renews "heard"; a rollout's control words leave c-<word>
# (sh/rollout.sh).
h_watch() {
	exec 5<&0
	{
		while IFS= read -r h_l; do
			h_mark heard
			case $h_l in
			stop | ack) h_mark "$h_l" ;;
			switch | go | commit | abort | settle | decide | leave) h_mark "c-$h_l" ;;
			# A dialled probe's answer (sh/health.sh, h_try).
			"probe "*) printf '%s\n' "$h_l" >>"$h_scr/answers" ;;
			esac
		done
		h_mark gone
	} <&5 >/dev/null 2>&1 &
	h_wpid=$!
	exec 5<&- </dev/null
}

# h_mark NAME: the watcher's marker NAME in the scratch directory, which
# h_nexttoken may have renamed meanwhile after each spare token in turn:
# the file goes under the first of the names that takes it, since one
# rename moves the directory from a name to the next and never back.
h_mark() {
	true 2>/dev/null >"$h_scr/$1" && return 0
	[ "$hp_rid" = "$hp_me" ] || return 1
	for h_mt in $hp_spares; do
		true 2>/dev/null >"$h_runs/$h_mt/$1" && return 0
	done
	return 1
}

# h_left: the client went away or asked to stop.
h_left() { [ -n "$h_scr" ] && { [ -f "$h_scr/gone" ] || [ -f "$h_scr/stop" ]; }; }

# h_acquire WAIT: takes the lock, waiting on the host up to WAIT seconds by the
# host clock. A free lock is seen within one poll (h_nap) of its release, with
# no client round trip. Each new holder is reported once (HELD) and evaluated
# for a steal at once, and every lock is re-evaluated every h_every polls.
# Ends with 0 (held; a steal was reported as STOLEN) or after saying BUSY (1),
# ERROR (2) or ABANDONED (3); HELD, STOLEN and BUSY name the holder
# (h_say_holder). If the client left while this waited, a lock taken
# afterwards is released at once (cancel-safe waiting).
h_acquire() {
	# The wait's end is set at the first look at a held lock (h_judge): a
	# free one costs no reading of the clock.
	h_end= h_for=$1
	h_shown= h_i=0 h_nocreate=0 h_ol=
	while :; do
		h_sample
		h_r=1
		case $h_kind in
		bad)
			h_say ERROR lockpath "$h_oddwhy" "$(h_oneline "$h_odd")"
			return 2
			;;
		free | dead)
			h_ol=
			if [ "$h_kind" = dead ]; then h_clear; fi
			h_create
			case $? in
			0) break ;;
			2)
				h_say ERROR record "$(h_oneline "$h_lasterr")"
				return 2
				;;
			3)
				if ! h_nexttoken; then
					h_spent
					return 1
				fi
				;;
			esac
			# Could not be created (h_create said why) and not there,
			# three polls running: the store is missing or cannot be
			# written. A creation that only lost to another client's lock
			# says nothing, even if that lock is gone again by now.
			if [ -n "$h_lasterr" ] && [ ! -e "$h_lock" ]; then
				h_nocreate=$((h_nocreate + 1))
			else
				h_nocreate=0
			fi
			if [ "$h_nocreate" -ge 3 ]; then
				h_say ERROR mkdir "$(h_oneline "$h_lasterr")"
				return 2
			fi
			;;
		ownerless)
			# A release or a steal leaves the lock empty for an instant
			# between its two removals: only a lock that stays without a
			# record for a whole poll is reported and judged.
			h_nocreate=0
			if [ -n "$h_ol" ]; then
				h_judge
				h_r=$?
			fi
			h_ol=1
			;;
		*)
			h_nocreate=0 h_ol=
			h_judge
			h_r=$?
			;;
		esac
		case $h_r in
		0) break ;;
		2) return 2 ;;
		3) return 1 ;;
		esac
		if h_left; then
			h_say ABANDONED
			return 3
		fi
		h_i=$((h_i + 1))
		# A minute-by-minute sign of life for a long wait: gc leaves a
		# scratch directory, and the stage of a promotion waiting for the
		# lock (which writes nothing to it), alone while they are fresh.
		# A promotion works from inside its stage (h_enter).
		if [ $((h_i % (60 * h_every))) -eq 0 ]; then
			if [ -n "$h_scr" ]; then touch "$h_scr"; fi
			if [ -n "$h_stage" ]; then touch .; fi
		fi
		sleep "$h_nap"
	done
	if h_left; then
		h_release
		h_say ABANDONED
		return 3
	fi
	return 0
}

# h_nexttoken: this attempt's token is spent (h_create returned 3): the
# wait goes on with the next spare token the client sent (hp_spares), which
# ACQUIRED will name. The command's scratch directory is renamed after it
# first, before any lock of the new token can exist: the exited rule finds
# a holder's command group at runs/<token>, and a run's id is its token.
# A client that lost contact follows the run by its tokens in order: the
# directory left one name for the next in one rename. Returns 1 when no
# spare is left or the rename cannot be made.
h_nexttoken() {
	h_tn=${hp_spares%% *}
	hp_spares=${hp_spares#"$h_tn"}
	hp_spares=${hp_spares# }
	h_isuuid "$h_tn" || return 1
	if [ -n "$h_scr" ] && [ "$hp_rid" = "$hp_me" ]; then
		h_ts=$h_runs/$h_tn
		if [ -e "$h_ts" ] || [ -L "$h_ts" ] || ! mv "$h_scr" "$h_ts" 2>/dev/null; then
			return 1
		fi
		h_scr=$h_ts hp_rid=$h_tn
	fi
	hp_me=$h_tn
}

# h_spent: this acquire's last token was spent too (h_nexttoken): it ends
# as if the wait had, naming the lock as it is now. The client tries again
# with new tokens.
h_spent() {
	h_sample
	h_stealable
	h_say_holder BUSY
}

# h_judge: the waiting loop's look at a held lock. A holder not seen before
# is judged at once and reported once (HELD), any holder every h_every polls;
# a stealable one is stolen. Returns 0 when the lock is ours now (STOLEN was
# said), 1 to wait on, 2 after ERROR, 3 after BUSY (the wait is over).
h_judge() {
	[ $((h_i % h_every)) -eq 0 ] || [ "x$h_line" != "$h_shown" ] || return 1
	# The clock the judgement read (h_age's h_an) also ends the wait.
	h_an=
	if h_stealable; then
		h_steal
		case $? in
		0)
			h_say_holder STOLEN
			return 0
			;;
		2)
			h_say ERROR record "$(h_oneline "$h_lasterr")"
			return 2
			;;
		3)
			h_nexttoken && return 1
			h_spent
			return 3
			;;
		4)
			h_say ERROR permission "$(h_oneline "$h_lasterr")"
			return 2
			;;
		esac
		# Someone else took it, or it was released: the next poll looks
		# again, and the rule no longer names the lock there.
		h_why=
	fi
	if [ "x$h_line" != "$h_shown" ]; then
		h_shown=x$h_line
		h_say_holder HELD
	fi
	h_jnow=${h_an:-$(date +%s)}
	[ -n "$h_end" ] || h_end=$((h_jnow + h_for))
	if [ "$h_jnow" -ge "$h_end" ]; then
		h_say_holder BUSY
		return 3
	fi
	return 1
}
