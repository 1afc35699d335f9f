# A health-checked activation (docs/rollout.md, "One host"): switch, restart,
# probe, and on failure revert current to the runtime it replaced, restart
# and probe that one, all under the one hold h_take took, in this one host
# command. The host shell ignores HUP and PIPE (the prelude) and the guardian
# renews the lease while it lives, so a client that is killed or cut off
# leaves the sequence to finish here: it reverts unless the new runtime was
# found healthy (a dialled probe's silence is a failure). The record,
# runtimes/.rollouts/<id>/, is in place before current changes, and gc keeps
# what an unfinished one names (h_journaled).

# h_clock: h_now, the milliseconds since h_t0 (the sequence's start, in
# seconds) by the host's clock; whole seconds where date has no %N. Small
# numbers: a shell that counts in 32 bits (mksh) adds them right.
h_clock() {
	h_cx=$(date +%s.%N 2>/dev/null)
	case $h_cx in
	[0-9]*.[0-9][0-9][0-9]*) h_cxs=${h_cx%%.*} h_cxf=${h_cx#*.} ;;
	*) h_cxs=$(date +%s) h_cxf=000 ;;
	esac
	h_cxf=${h_cxf%"${h_cxf#???}"}
	h_now=$(((h_cxs - h_t0) * 1000 + 1$h_cxf - 1000))
}

# h_spawn CMD NAME: runs /bin/sh -c CMD in the directory of h_sub (the
# runtime it is about) in a session of its own, with the HOIST_ variables,
# its output in the scratch directory (never the channel) and its status
# in NAME.st when it exits. h_cmdalive and h_cmdsig find its group.
h_spawn() {
	rm -f "$h_scr/$2.st"
	(
		trap - HUP PIPE
		if ! cd "$h_store/$h_sub"; then
			echo 1 >"$h_scr/$2.st"
			exit 1
		fi
		HOIST_RUNTIME=$h_sub HOIST_PREVIOUS=$h_oth HOIST_DIR=$h_store/$h_sub
		export HOIST_RUNTIME HOIST_PREVIOUS HOIST_DIR
		# shellcheck disable=SC2016 # the inner shell expands them
		exec $h_setsid /bin/sh -c '/bin/sh -c "$1"; echo $? >"$2"' hoist "$1" "$h_scr/$2.st"
	) </dev/null >"$h_scr/$2.out" 2>&1 &
	h_spid=$!
	echo "g $h_spid" >"$h_scr/pgid"
}

# h_reap NAME LIMIT: waits until the spawned command ends or LIMIT (h_clock)
# passes; then it is stopped, its group with it (TERM, then KILL after the
# grace period). h_rst is its status, or "timeout". Its pgid goes with it:
# the guardian of a shell that dies stops only a spawn still under way,
# never what an ended restart left running (the service), nor a pid reused.
h_reap() {
	while [ ! -f "$h_scr/$1.st" ]; do
		h_clock
		if [ "$h_now" -ge "$2" ]; then
			h_cmdsig TERM
			h_kill=$(($(date +%s) + hp_grace))
			while h_cmdalive && [ "$(date +%s)" -le "$h_kill" ]; do sleep "$h_nap"; done
			h_cmdsig KILL
			wait "$h_spid" 2>/dev/null
			rm -f "$h_scr/pgid"
			h_rst=timeout
			return 1
		fi
		sleep "$h_nap"
	done
	wait "$h_spid" 2>/dev/null
	rm -f "$h_scr/pgid"
	h_rst=
	read -r h_rst <"$h_scr/$1.st"
	[ "$h_rst" = 0 ]
}

# h_restart: runs hp_restart (nothing to run: it passes) for h_sub; it must
# exit 0 within the check deadline. Says RESTARTED status ms.
h_restart() {
	h_clock
	h_rbeg=$h_now h_rst=0
	if [ -n "$hp_restart" ]; then
		h_spawn "$hp_restart" restart
		h_reap restart $((h_now + hp_cdeadline))
	fi
	h_clock
	h_say RESTARTED "$h_rst" $((h_now - h_rbeg))
	[ "$h_rst" = 0 ]
}

# h_try SEQ END: one try of every probe, by END (h_clock) at the latest. The
# dialled probes are the client's: PROBE SEQ asks, and its watcher puts the
# answers ("probe SEQ name ok|fail ms detail") in the scratch directory.
# h_tdet is the first failure; h_noans is set when an answer did not come.
h_try() {
	h_tdet= h_noans=
	[ "$h_ndial" -eq 0 ] || h_say PROBE "$1"
	h_ci=0
	h_ifs=$IFS
	IFS=$h_nl
	for h_c in $h_pchecks; do
		IFS=$h_ifs
		h_ci=$((h_ci + 1))
		h_clock
		h_cbeg=$h_now h_cv=ok h_x=-
		h_spawn "$h_c" check
		if ! h_reap check "$2"; then
			h_x=$(tail -n 1 "$h_scr/check.out" 2>/dev/null | cut -c 1-200)
			h_x="exit $h_rst${h_x:+: $h_x}" h_cv=fail
			h_tdet=${h_tdet:-"check$h_ci: $h_x"}
		fi
		h_clock
		[ -n "$h_sq" ] || h_say PROBED "$1" "check$h_ci" "$h_cv" $((h_now - h_cbeg)) "$(h_pct "$(h_oneline "$h_x")")"
	done
	IFS=$h_ifs
	[ "$h_ndial" -eq 0 ] && return
	while :; do
		h_n=0
		if [ -f "$h_scr/answers" ]; then
			while IFS=' ' read -r h_w h_s h_nm h_ok h_x; do
				[ "$h_w:$h_s" = "probe:$1" ] || continue
				h_n=$((h_n + 1))
				[ "$h_ok" = ok ] || h_tdet=${h_tdet:-"$h_nm: ${h_x#* }"}
			done <"$h_scr/answers"
		fi
		[ "$h_n" -lt "$h_ndial" ] || return
		h_clock
		if [ "$h_now" -ge "$2" ] || h_left; then break; fi
		sleep "$h_nap"
	done
	# Missing answers are the client's fault only when nothing failed
	# on the host.
	[ -n "$h_tdet" ] || h_noans=1
	if h_left; then h_tdet=${h_tdet:-"the client is gone"}; else h_tdet=${h_tdet:-"no answer from the client"}; fi
}

# h_probe: the probe loop on h_sub, after its restart (docs/rollout.md,
# "Probes"), with the probes and timing h_pset gave (h_sq: quietly, for
# the local rule, h_recheck): a try every interval, each by its timeout;
# healthy once a try passed and every try passed for the stable window
# after it; failed when none
# passed by the deadline, when one fails inside the stable window, and at
# once when the client is gone while dialled probes are given (h_ndial),
# or asked to stop (h_left: the operator wants it back). h_why is why it
# failed; h_client is set when the client was the cause.
h_probe() {
	h_clock
	h_pbeg=$h_now h_first= h_tries=0 h_why= h_client=
	h_end=$((h_now + h_pdl))
	[ -n "$h_pchecks" ] || [ "$h_ndial" -gt 0 ] || return 0
	while :; do
		[ -n "$h_sq" ] || h_step host.check
		h_clock
		h_tbeg=$h_now h_tries=$((h_tries + 1))
		h_try "$h_tries" $((h_now + h_ptmo))
		h_clock
		h_tv=ok
		[ -z "$h_tdet" ] || h_tv=fail
		[ -n "$h_sq" ] || h_say TRY "$h_tries" "$h_tv" $((h_now - h_tbeg)) "$(h_pct "$(h_oneline "${h_tdet:--}")")"
		if h_quit; then
			h_why="client: ${h_tdet:-the client is gone}" h_client=1
			if [ -f "$h_scr/stop" ]; then h_why="client: asked to stop"; fi
			return 1
		fi
		if [ "$h_tv" = ok ]; then
			h_first=${h_first:-$h_tbeg}
			[ $((h_tbeg - h_first)) -lt "$h_pstb" ] || return 0
		elif [ -n "$h_first" ]; then
			h_why="stable: $h_tdet"
			[ -z "$h_noans" ] || h_client=1
			return 1
		elif [ $((h_tbeg + h_pint)) -ge "$h_end" ]; then
			h_why="deadline: $h_tdet"
			[ -z "$h_noans" ] || h_client=1
			return 1
		fi
		while h_clock && [ "$h_now" -lt $((h_tbeg + h_pint)) ]; do
			if h_quit; then break; fi
			sleep "$h_nap"
		done
	done
}

# h_quit: the probe loop ends at once: asked to stop (not on a revert's
# probes: h_ndial is 0 then, and h_stay set), or the client is gone while
# it dials probes.
h_quit() {
	{ [ -z "$h_stay" ] && [ -f "$h_scr/stop" ]; } || { [ "$h_ndial" -gt 0 ] && [ -f "$h_scr/gone" ]; }
}

# h_pset: the probe loop's probes and timing are the client's (hp_*).
h_pset() {
	h_pchecks=$hp_checks h_pint=$hp_cint h_ptmo=$hp_ctimeout h_pdl=$hp_cdeadline h_pstb=$hp_stable h_sq=
}

# h_seqinit: a sequence's clock starts (h_t0) and its spawned commands get
# a session of their own where setsid is there.
h_seqinit() {
	h_t0=$(date +%s) h_setsid=
	if command -v setsid >/dev/null 2>&1; then h_setsid=setsid; fi
}

# h_record MODE TO [FIELDS]: the record of hp_hid, from current (h_from) to
# TO, made in .rollouts/.new-<id> and renamed into place whole, fenced; a
# record of that id already there (a resume's tombstone) is never entered
# (ERROR journal). Its plan keeps the timing and how many dialled probes
# there were, and its checks file the exec probes, for the local rule's
# checks (h_recheck). FIELDS are the plan's fields of an --atomic record;
# hp_hplan, last, a batch rollout's plan of itself (hosts= opts=).
h_record() {
	h_rec=$h_store/.rollouts/$hp_hid h_new=$h_store/.rollouts/.new-$hp_hid
	h_fence || return 1
	if [ -e "$h_rec" ] || [ -L "$h_rec" ]; then
		h_say ERROR journal "$(h_oneline "$hp_storedir/.rollouts/$hp_hid") exists"
		return 1
	fi
	if ! { h_mkshared "$h_store/.rollouts" && mkdir -m 700 "$h_new" &&
		printf 'hoist-rollout/1 id=%s mode=%s from=%s to=%s%s token=%s lease=%s since=%s deadline=%s interval=%s timeout=%s stable=%s dialled=%s%s%s\n' \
			"$hp_hid" "$1" "${h_from:--}" "$2" "$3" "$hp_me" "$h_mylease" "$h_t0" "$hp_cdeadline" "$hp_cint" "$hp_ctimeout" "$hp_stable" "$hp_ndial" "${hp_hof:+ revert-of=$hp_hof}" "$hp_hplan" >"$h_new/plan" &&
		{ [ -z "$hp_restart" ] || printf '%s\n' "$hp_restart" >"$h_new/restart"; } &&
		{ [ -z "$hp_checks" ] || printf '%s\n' "$hp_checks" >"$h_new/checks"; } &&
		mv "$h_new" "$h_rec"; } 2>/dev/null; then
		h_say ERROR switch "cannot write the record $(h_oneline "$hp_storedir/.rollouts/$hp_hid"): check free space and permissions on the store"
		return 1
	fi
	# A tombstone made since the look: the record went inside it.
	if [ -d "$h_rec/.new-$hp_hid" ]; then
		rm -rf "$h_rec/.new-$hp_hid"
		h_say ERROR journal "$(h_oneline "$hp_storedir/.rollouts/$hp_hid") exists"
		return 1
	fi
	h_say PREPARED "$hp_hid" "${h_from:--}" "$2"
}

# h_forward TO ACTION: the switch to TO (h_activate, ACTION in the history),
# its restart and checks: 0 HEALTHY, 1 UNHEALTHY (TO marked bad unless
# the client was the cause; h_why says why), 2 the switch failed.
h_forward() {
	h_activate "$1" "$2" || return 2
	: >"$h_rec/switched"
	h_step host.switch
	h_sub=$1 h_oth=$h_from h_ndial=$hp_ndial h_stay=
	h_pset
	if h_restart && h_probe; then
		h_fok=0
		[ -z "$h_first" ] || h_fok=$((h_first - h_pbeg))
		h_say HEALTHY "$hp_hid" "$h_fok" $((h_now - ${h_first:-$h_now})) "$h_tries"
		rm -f "$h_store/.bad/$1"
		return 0
	fi
	[ -n "$h_why" ] || h_why="restart: exit $h_rst"
	h_say UNHEALTHY "$hp_hid" "$(h_pct "$(h_oneline "$h_why")")"
	[ -n "$h_client" ] || h_markbad "$1" "$h_why"
	return 1
}

# h_back TO: current goes back from TO to h_from (revert:<why> in the
# history), which is restarted and checked: h_rvd is its verdict (none:
# nothing to go back to). Fails when the revert could not be made.
h_back() {
	h_step host.revert
	h_rvd=none
	[ -n "$h_from" ] || return 0
	h_activate "$h_from" "revert:${h_why%%:*}" || return 1
	h_step host.restore
	# A client that left cannot dial: the revert is checked by the exec
	# probes alone, and is unchecked when there are none.
	h_sub=$h_from h_oth=$1 h_rvd=unhealthy h_stay=1
	h_pset
	if h_left; then h_ndial=0; fi
	if h_restart && h_probe; then
		h_rvd=healthy
		if [ -z "$hp_checks" ] && [ "$h_ndial" -lt "$hp_ndial" ]; then h_rvd=unchecked; fi
	fi
}

# h_health TO ACTION: the sequence, under the lock, from current to TO.
# ACTION (activate, rollback) names the switch in the history.
h_health() {
	h_seqinit
	h_from=$(h_pointer current)
	h_record "${hp_hmode:-single}" "$1" || return 1
	h_step host.prepare
	h_forward "$1" "$2"
	case $? in
	0)
		ln -s to "$h_rec/done"
		return 0
		;;
	2) return 1 ;;
	esac
	h_back "$1" || return 1
	[ -z "$h_from" ] || ln -s from "$h_rec/done"
	h_say REVERTED "$hp_hid" "$1" "${h_from:--}" "$h_rvd"
}
