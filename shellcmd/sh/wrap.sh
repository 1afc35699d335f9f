# h_run: runs the command under the lock in this same host command, and the host
# releases the lock itself when the command exits. The host shell ignores HUP
# and PIPE, so a client that hangs up or a channel that breaks cannot stop the
# release. The command runs in a session of its own (setsid, where the host
# has it), so that stopping it stops every process it started; it gets
# default signal dispositions and no terminal, and writes into files, never
# into the channel: a client that leaves never makes its writes fail or block.
# The guardian (h_guard) relays the files, renews the lease and stops the
# command when asked, when the lease is lost, or when this shell dies.
# After the command exits, what is left of its group is stopped too, and the
# lock is released (owner-checked) only when nothing of it is left; then
# RELEASED or LOST, and EXIT STATUS. The run's record (runs/<id>/: info,
# out, err, status) stays for hoist runs and hoist logs.
h_run() {
	# The run's record is private (0600 in its 0700 directory): this shell
	# makes it, and everything after it, with umask 077, and the command
	# gets the umask the host command began with (h_umask, which /proc
	# told h_procown; else the umask builtin's own).
	h_um=$h_umask
	[ -n "$h_um" ] || h_um=$(umask)
	[ -n "$h_since" ] || h_stamp
	umask 077
	true >"$h_scr/out" && true >"$h_scr/err" && echo - >"$h_scr/pgid" &&
		printf 'hoist-run/1 id=%s start=%s pid=%s pstart=%s boot=%s token=%s lease=%s %s\n' \
			"$hp_rid" "$h_since" $$ "${h_myst:--}" "$h_bootid" "$hp_me" "$h_mylease" "$hp_runinfo" >"$h_scr/info"
	# The messages of this shell's kill (h_ksig); the guardian has its own.
	h_kf=$h_scr/kill
	h_setsid=
	if command -v setsid >/dev/null 2>&1; then h_setsid=setsid; fi
	(
		[ -z "$h_um" ] || umask "$h_um"
		trap - HUP PIPE
		# The command's own pid, which setsid keeps (a background job of
		# a shell without job control is never a group leader, so setsid
		# does not fork): written before it starts, so the group is
		# known whatever happens to this shell. /proc/self names it only
		# where /proc is this namespace's.
		if [ -n "$h_proc" ] && { IFS= read -r h_x </proc/self/stat; } 2>/dev/null; then
			if [ -n "$h_setsid" ]; then echo "g ${h_x%% *}"; else echo "p ${h_x%% *}"; fi >"$h_scr/pgid"
		fi
		h_cmd
	) </dev/null >"$h_scr/out" 2>"$h_scr/err" &
	h_pid=$!
	# The wrapper and its guardian know the group without the file.
	if [ -n "$h_setsid" ]; then h_cmdg="g $h_pid"; else h_cmdg="p $h_pid"; fi
	echo "$h_cmdg" >"$h_scr/pgid"
	h_say STARTED
	h_guardrun 1
	wait "$h_pid"
	h_st=$?
	# What the command left running is stopped like the command itself
	# (TERM, then KILL after the grace period): work under the lock ends
	# before the lock is released.
	if h_cmdalive; then
		h_cmdsig TERM
		h_later
		h_kill=$((h_lnow + hp_grace))
		while h_cmdalive; do
			h_later
			if [ -n "$h_kill" ] && [ "$h_lnow" -gt "$h_kill" ]; then
				h_cmdsig KILL
				h_kill=
			fi
			sleep "$h_nap"
		done
	fi
	h_status "$h_st"
	h_release
	h_rr=$?
	# The run's record is kept: the stdin watcher must not write into it
	# after the run (it would say "gone" when the client closes).
	kill "$h_wpid" 2>/dev/null
	if [ -f "$h_scr/leaselost" ]; then h_say FENCED; fi
	h_say_release "$h_rr"
	h_say EXIT "$h_st"
}

# h_stamp: reads the host's clock once for this command (h_since: date,
# when the lock was taken or, under a manual hold, when the run began),
# and beside it the whole seconds the kernel has been up (h_up0, from
# /proc/uptime, read without a process where Linux has it). h_later counts
# later times from there.
h_stamp() {
	h_since=$(date +%s)
	h_uptime
	h_up0=$h_upt
}

# h_later: the time now (h_lnow) for this command's own timing (a run's
# end, its grace period): h_since plus the seconds of uptime since h_stamp,
# which costs no process and which no step of the clock moves; where
# /proc/uptime cannot be read, the clock (date). Whole seconds on both
# readings: within a second of date's. Never for a lease (h_age and h_renew
# read the clock).
h_later() {
	if [ -n "$h_up0" ] && [ -n "$h_since" ] && h_uptime; then
		h_lnow=$((h_since + h_upt - h_up0))
	else
		h_lnow=$(date +%s)
	fi
}

# h_uptime: h_upt, the whole seconds of /proc/uptime, or empty (and failing).
h_uptime() {
	h_upt=
	{ IFS=" " read -r h_upt h_upx </proc/uptime; } 2>/dev/null
	h_upt=${h_upt%%.*}
	case $h_upt in '' | *[!0-9]*) h_upt= && return 1 ;; esac
}

# h_guardrun RELAY: starts the guardian for this command's hold (h_guard, in
# the background); h_unguard stops it.
h_guardrun() {
	h_guard "$1" &
	h_gpid=$!
	h_pstat "$h_gpid"
	echo "$h_gpid ${h_pst:--}" >"$h_scr/guard"
}

# h_unguard: stops the guardian, after its last copy of the output. It says
# it traps USR1 by creating "ready"; before that it has not looked at "done"
# yet, and sees it when it does.
h_unguard() {
	[ -n "$h_gpid" ] || return 0
	true 2>/dev/null >"$h_scr/done"
	if [ -f "$h_scr/ready" ]; then kill -s USR1 "$h_gpid" 2>/dev/null; fi
	wait "$h_gpid"
	h_gpid=
}

# h_guard RELAY: the guardian of a command that works under the lock. Every
# poll it
#   - copies what the run's command wrote so far (RELAY), from where the
#     previous copy stopped (the descriptors keep their offsets); a failed
#     write means the client is gone: it is noted ("lost") and the copying
#     goes on, so the files stay complete;
#   - renews the lease every quarter lease (h_renew), also while it stops
#     the command after the shell died, until SIGKILL; a renewal that fails
#     means the lock is lost ("leaselost"): the heartbeats stop and the
#     command is stopped;
#   - stops the run's command when asked ("stop"), when the lease is lost,
#     or when this host command's shell died (killed; h_shellgone): SIGTERM
#     to its group, SIGKILL after the grace period; once nothing of it is
#     left after the shell died, it releases the lock (owner-checked)
#     itself and writes the run's status as unknown. A store command's
#     spawned restart or check (its group in pgid, h_spawn) is stopped the
#     same way, only once the shell died.
# It polls every h_nap for two seconds, then every quarter second, and
# reads the clock about once a second; USR1 cuts a nap short, or skips the
# next one when it comes between naps. It
# ends when "done" appears (h_unguard) or the scratch directory goes, with
# one last copy.
h_guard() {
	# A USR1 that comes while no nap runs (the guardian is copying or
	# renewing) is kept in h_wake, so that the next nap is not taken.
	h_sl= h_wake= h_kf=$h_scr/kill.guard
	trap 'h_wake=1; [ -z "$h_sl" ] || kill "$h_sl" 2>/dev/null' USR1
	true >"$h_scr/ready"
	# A failed exec redirection would end this shell, and the heartbeats
	# with it: the files are looked at first (they are gone only if
	# someone removed the scratch directory).
	h_relay=$1
	if [ -n "$h_relay" ]; then
		if [ -r "$h_scr/out" ] && [ -r "$h_scr/err" ]; then
			exec 3<"$h_scr/out" 4<"$h_scr/err"
		else
			h_relay=
		fi
	fi
	# The host command's shell ($$ here too) and its start time, which
	# its h_procown read.
	h_self=$h_myst
	if [ -z "$h_self" ] && h_pstat $$; then h_self=$h_pst; fi
	h_lost= h_ri=0 h_rnap=$h_nap h_stopat= h_killed= h_orphan= h_glost=
	h_beat=$((h_mylease / 4))
	[ "$h_beat" -ge 1 ] || h_beat=1
	# A heartbeat a second late matters only to a short lease.
	h_ck=4
	if [ "$h_nap" = 1 ] || [ "$h_beat" -lt 4 ]; then h_ck=1; fi
	h_next=$((${h_since:-$(date +%s)} + h_beat))
	while :; do
		h_last=
		if [ -f "$h_scr/done" ] || [ ! -d "$h_scr" ]; then h_last=1; fi
		if [ -n "$h_relay" ]; then
			# An empty file has nothing to copy yet.
			[ ! -s "$h_scr/out" ] || cat <&3 || h_lost=1
			[ ! -s "$h_scr/err" ] || cat <&4 >&2 || h_lost=1
		fi
		[ -z "$h_last" ] || break
		# The clock, for the heartbeats and the grace period: the first
		# poll comes just after the lock was taken (h_since); then it is
		# read every h_ck polls (0.4 s, then a second; every poll for a
		# lease under 16 s), and when a stop begins.
		if [ "$h_ri" -eq 0 ] && [ -n "$h_since" ]; then
			h_now=$h_since
		elif [ $((h_ri % h_ck)) -eq 0 ]; then
			h_now=$(date +%s)
		fi
		if [ -z "$h_orphan" ] && h_shellgone; then h_orphan=1; fi
		# The lease is kept while the command works, and while it stops
		# after the host shell died, up to SIGKILL: a command that takes
		# its grace period to stop holds the lock until it has. After
		# SIGKILL, what may be left (a zombie nobody reaps, a process in
		# uninterruptible sleep) holds it one lease at most.
		if [ -z "$h_glost" ] && { [ -z "$h_orphan" ] || [ -z "$h_killed" ]; } && [ "$h_now" -ge "$h_next" ]; then
			if h_renew; then
				h_next=$((h_now + h_beat))
			else
				h_glost=1
				true 2>/dev/null >"$h_scr/leaselost"
			fi
		fi
		# A store command's spawned restart or check (h_spawn: its group
		# in pgid) is stopped like a run's command once the shell that
		# would reap it died, and the lock kept until it has stopped.
		if [ -n "$1" ] || { [ -n "$h_orphan" ] && [ -f "$h_scr/pgid" ]; }; then
			if [ -z "$h_stopat" ]; then
				if [ -f "$h_scr/stop" ] || [ -n "$h_glost" ] || [ -n "$h_orphan" ]; then
					h_now=$(date +%s)
					h_stopat=$h_now
					h_cmdsig TERM
				fi
			elif [ -z "$h_killed" ] && [ "$h_now" -gt $((h_stopat + hp_grace)) ]; then
				h_killed=1
				h_cmdsig KILL
			fi
		fi
		if [ -n "$h_orphan" ] && { { [ -z "$1" ] && [ ! -f "$h_scr/pgid" ]; } || ! h_cmdalive; }; then
			# Nothing of the command is left, and the shell that would
			# release is gone: the guardian releases.
			[ -z "$1" ] || [ -f "$h_scr/status" ] || h_status -
			h_release
			break
		fi
		h_ri=$((h_ri + 1))
		if [ "$h_ri" -eq 20 ] && [ "$h_nap" != 1 ]; then h_rnap=0.25; fi
		# A sign of life for gc, which sweeps scratch directories nothing
		# wrote to for the stale period: a quiet command's too.
		if [ $((h_ri % 240)) -eq 0 ]; then touch "$h_scr" 2>/dev/null; fi
		if [ -z "$h_wake" ]; then
			sleep "$h_rnap" &
			h_sl=$!
			# A USR1 just before h_sl was set found no nap to cut.
			if [ -n "$h_wake" ]; then kill "$h_sl" 2>/dev/null; fi
			wait "$h_sl" 2>/dev/null
		fi
		h_sl= h_wake=
	done
	if [ -n "$h_lost" ]; then true 2>/dev/null >"$h_scr/lost"; fi
}

# h_shellgone: the guardian's look at this host command's shell ($$, whose
# child it is): gone by its start time (h_self) where /proc is this
# namespace's; elsewhere by kill -0, which looks in this namespace: no such
# process. A pid is reused only after the kernel has gone round all the
# others, not within a poll.
h_shellgone() {
	if [ -n "$h_proc" ]; then
		[ -n "$h_self" ] && h_gone $$ "$h_self"
		return
	fi
	h_ksig -s 0 $$ && return 1
	case $h_gerr in *"No such process"*) return 0 ;; esac
	return 1
}

# h_status STATUS: the run's end, "<status> <end>", in one write of this
# shell's (echo, no process): a reader that finds the file empty looks
# again (h_runinfo), and a file that could not be written (a full disk) is
# removed, as if the end had not been seen. The end is counted from the
# run's start (h_later). It is private: a run's shell and its guardian work
# with umask 077 (h_run).
h_status() {
	h_later
	echo "$1 $h_lnow" 2>/dev/null >"$h_scr/status" || rm -f "$h_scr/status"
}
