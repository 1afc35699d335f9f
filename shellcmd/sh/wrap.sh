# h_run: runs the command under the lock in this same host command, and the host
# releases the lock itself when the command exits. The host shell ignores HUP
# and PIPE, so a client that hangs up or a channel that breaks cannot stop the
# release. The command gets default signal dispositions and no terminal; it
# writes into files, never into the channel, and a relay copies those out:
# a client that leaves never makes the command's writes fail or block.
# After the command exits the lock is released (owner-checked) first, then the
# relay finishes, then RELEASED or LOST and EXIT STATUS are reported.
# Output is kept in h_scr (out, err, status) when the relay could not deliver
# it all.
h_run() {
	(umask 077 && true >"$h_scr/out" && true >"$h_scr/err")
	(
		trap - HUP PIPE
		h_cmd
	) </dev/null >"$h_scr/out" 2>"$h_scr/err" &
	h_pid=$!
	echo "$h_pid" >"$h_scr/pid"
	if [ -f "$h_scr/stop" ]; then kill -TERM "$h_pid" 2>/dev/null; fi
	h_say STARTED
	h_relay &
	h_rpid=$!
	wait "$h_pid"
	h_st=$?
	h_release
	h_rr=$?
	# A scratch directory that vanished cannot take "done": the relay then
	# sees the directory gone.
	true 2>/dev/null >"$h_scr/done"
	# Wake the relay from its nap for the last copy. Only once it says it
	# traps USR1: before that it has not looked at "done" yet.
	if [ -f "$h_scr/ready" ]; then kill -s USR1 "$h_rpid" 2>/dev/null; fi
	wait "$h_rpid"
	h_say_release "$h_rr"
	h_say EXIT "$h_st"
	if [ -f "$h_scr/lost" ]; then
		(umask 077 && echo "$h_st" >"$h_scr/status")
	else
		rm -rf "$h_scr"
	fi
}

# h_relay: copies what the command wrote so far, from where the previous copy
# stopped (the descriptors keep their offsets); one last copy after the
# command is done. It copies every h_nap for two seconds, then every quarter
# second, so a long command costs little; USR1 cuts a nap short, so the end
# of a run is not delayed by it. A failed write means the client is gone: it
# is noted and the relay carries on, so the files stay complete. Every
# minute or so it touches the scratch directory. It ends
# with its run, whatever happened to its files: when the run's host shell
# ($$, also in this subshell) is gone, or the scratch directory is.
h_relay() {
	h_sl=
	trap '[ -z "$h_sl" ] || kill "$h_sl" 2>/dev/null' USR1
	true >"$h_scr/ready"
	exec 3<"$h_scr/out" 4<"$h_scr/err"
	h_lost= h_ri=0 h_rnap=$h_nap
	while :; do
		h_last=
		if [ -f "$h_scr/done" ] || [ ! -d "$h_scr" ] || ! kill -0 $$ 2>/dev/null; then h_last=1; fi
		cat <&3 || h_lost=1
		cat <&4 >&2 || h_lost=1
		[ -z "$h_last" ] || break
		h_ri=$((h_ri + 1))
		if [ "$h_ri" -eq 20 ] && [ "$h_nap" != 1 ]; then h_rnap=0.25; fi
		# A sign of life for gc, which sweeps scratch directories nothing
		# wrote to for the stale period: a quiet command's too.
		if [ $((h_ri % 240)) -eq 0 ]; then touch "$h_scr" 2>/dev/null; fi
		sleep "$h_rnap" &
		h_sl=$!
		wait "$h_sl"
		h_sl=
	done
	if [ -n "$h_lost" ]; then true 2>/dev/null >"$h_scr/lost"; fi
}
