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
# grace period). h_rst is its status, or "timeout".
h_reap() {
	while [ ! -f "$h_scr/$1.st" ]; do
		h_clock
		if [ "$h_now" -ge "$2" ]; then
			h_cmdsig TERM
			h_kill=$(($(date +%s) + hp_grace))
			while h_cmdalive && [ "$(date +%s)" -le "$h_kill" ]; do sleep "$h_nap"; done
			h_cmdsig KILL
			wait "$h_spid" 2>/dev/null
			h_rst=timeout
			return 1
		fi
		sleep "$h_nap"
	done
	wait "$h_spid" 2>/dev/null
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
	for h_c in $hp_checks; do
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
		h_say PROBED "$1" "check$h_ci" "$h_cv" $((h_now - h_cbeg)) "$(h_pct "$(h_oneline "$h_x")")"
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
# "Probes"): a try every interval, each by its timeout; healthy once a try
# passed and every try passed for hp_stable after it; failed when none
# passed by the deadline, when one fails inside the stable window, and at
# once when the client is gone while dialled probes are given (h_ndial),
# or asked to stop (h_left: the operator wants it back). h_why is why it
# failed; h_client is set when the client was the cause.
h_probe() {
	h_clock
	h_pbeg=$h_now h_first= h_tries=0 h_why= h_client=
	h_end=$((h_now + hp_cdeadline))
	[ -n "$hp_checks" ] || [ "$h_ndial" -gt 0 ] || return 0
	while :; do
		h_step host.check
		h_clock
		h_tbeg=$h_now h_tries=$((h_tries + 1))
		h_try "$h_tries" $((h_now + hp_ctimeout))
		h_clock
		h_tv=ok
		[ -z "$h_tdet" ] || h_tv=fail
		h_say TRY "$h_tries" "$h_tv" $((h_now - h_tbeg)) "$(h_pct "$(h_oneline "${h_tdet:--}")")"
		if h_quit; then
			h_why="client: ${h_tdet:-the client is gone}" h_client=1
			if [ -f "$h_scr/stop" ]; then h_why="client: asked to stop"; fi
			return 1
		fi
		if [ "$h_tv" = ok ]; then
			h_first=${h_first:-$h_tbeg}
			[ $((h_tbeg - h_first)) -lt "$hp_stable" ] || return 0
		elif [ -n "$h_first" ]; then
			h_why="stable: $h_tdet"
			[ -z "$h_noans" ] || h_client=1
			return 1
		elif [ $((h_tbeg + hp_cint)) -ge "$h_end" ]; then
			h_why="deadline: $h_tdet"
			[ -z "$h_noans" ] || h_client=1
			return 1
		fi
		while h_clock && [ "$h_now" -lt $((h_tbeg + hp_cint)) ]; do
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

# h_unfinished DIR: the record DIR has its plan and no done.
h_unfinished() {
	[ -f "$1/plan" ] && [ ! -e "$1/done" ] && [ ! -L "$1/done" ]
}

# h_journaled ID: an unfinished record (no done) names ID as from or to:
# gc keeps it, whatever else it keeps.
h_journaled() {
	set +f
	for h_jd in "$h_store"/.rollouts/*/plan; do
		h_unfinished "${h_jd%/plan}" || continue
		case " $(cat "$h_jd" 2>/dev/null) " in *" from=$1 "* | *" to=$1 "*)
			set -f
			return 0
			;;
		esac
	done
	set -f
	return 1
}

# h_ownrecord DIR: DIR is this login's and only it may write there, as
# h_health makes a record (mkdir -m 700): only such a record's restart runs
# as this login; another login's (a team store's) is left to that login.
h_ownrecord() {
	[ -n "$(find "$1" -prune -type d -user "$h_uid" ! -perm -020 ! -perm -002 2>/dev/null)" ]
}

# h_settle: the local rule for one host (docs/rollout.md): a record left
# unfinished (its host command died) was never found healthy, so current
# goes back to its from if it still names its to, and the record's restart
# runs for the from side, also when the dead command had reverted already
# (its restart may have been cut short); then the record is finished.
h_settle() {
	set +f
	for h_jd in "$h_store"/.rollouts/*/plan; do
		set -f
		h_unfinished "${h_jd%/plan}" || continue
		h_ownrecord "${h_jd%/plan}" || continue
		h_jf= h_jt= h_jdl=30000 h_pl=$(cat "$h_jd" 2>/dev/null)
		for h_w in $h_pl; do
			case $h_w in
			from=*) h_jf=${h_w#from=} ;;
			to=*) h_jt=${h_w#to=} ;;
			deadline=[0-9]*) h_jdl=${h_w#deadline=} ;;
			esac
		done
		h_jside=from h_jsw=
		[ ! -f "${h_jd%/plan}/switched" ] || h_jsw=1
		if [ -n "$h_jf" ] && [ "$h_jf" != - ] && [ "$(h_pointer current)" = "$h_jt" ]; then
			h_activate "$h_jf" revert:interrupted || return 1
			h_jsw=1
		elif [ "$(h_pointer current)" = "$h_jt" ]; then
			h_jside=to
		fi
		# A record that never switched current restarts nothing.
		if [ -n "$h_jsw" ] && [ "$h_jside" = from ] && [ "$(h_pointer current)" = "$h_jf" ] && [ -f "${h_jd%/plan}/restart" ]; then
			h_t0=$(date +%s) h_sub=$h_jf h_oth=$h_jt
			h_setsid=
			if command -v setsid >/dev/null 2>&1; then h_setsid=setsid; fi
			h_spawn "$(cat "${h_jd%/plan}/restart")" restart
			h_clock
			h_reap restart $((h_now + h_jdl)) || :
		fi
		h_fence && ln -s "$h_jside" "${h_jd%/plan}/done" 2>/dev/null
	done
	set -f
	return 0
}

# h_health TO: the sequence, under the lock, from current to TO. ACTION
# (activate, rollback) names the switch in the history.
h_health() {
	h_t0=$(date +%s) h_from=$(h_pointer current)
	h_setsid=
	if command -v setsid >/dev/null 2>&1; then h_setsid=setsid; fi
	h_rec=$h_store/.rollouts/$hp_hid
	h_fence || return 1
	if ! { h_mkshared "$h_store/.rollouts" && mkdir -m 700 "$h_store/.rollouts/.new-$hp_hid" &&
		printf 'hoist-rollout/1 id=%s mode=%s from=%s to=%s token=%s lease=%s since=%s deadline=%s%s\n' \
			"$hp_hid" "${hp_hmode:-single}" "${h_from:--}" "$1" "$hp_me" "$h_mylease" "$h_t0" "$hp_cdeadline" "${hp_hof:+ revert-of=$hp_hof}" >"$h_store/.rollouts/.new-$hp_hid/plan" &&
		{ [ -z "$hp_restart" ] || printf '%s\n' "$hp_restart" >"$h_store/.rollouts/.new-$hp_hid/restart"; } &&
		mv "$h_store/.rollouts/.new-$hp_hid" "$h_rec"; } 2>/dev/null; then
		h_say ERROR switch "cannot write the record $(h_oneline "$hp_storedir/.rollouts/$hp_hid"): check free space and permissions on the store"
		return 1
	fi
	h_say PREPARED "$hp_hid" "${h_from:--}" "$1"
	h_step host.prepare
	h_activate "$1" "$2" || return 1
	: >"$h_rec/switched"
	h_step host.switch
	h_sub=$1 h_oth=$h_from h_ndial=$hp_ndial h_stay=
	if h_restart && h_probe; then
		h_fok=0
		[ -z "$h_first" ] || h_fok=$((h_first - h_pbeg))
		h_say HEALTHY "$hp_hid" "$h_fok" $((h_now - ${h_first:-$h_now})) "$h_tries"
		rm -f "$h_store/.bad/$1"
		ln -s to "$h_rec/done"
		return 0
	fi
	[ -n "$h_why" ] || h_why="restart: exit $h_rst"
	h_say UNHEALTHY "$hp_hid" "$(h_pct "$(h_oneline "$h_why")")"
	[ -n "$h_client" ] || h_markbad "$1" "$h_why"
	h_step host.revert
	if [ -z "$h_from" ]; then
		h_say REVERTED "$hp_hid" "$1" - none
		return 0
	fi
	h_activate "$h_from" "revert:${h_why%%:*}" || return 1
	h_step host.restore
	# A client that left cannot dial: the revert is checked by the exec
	# probes alone, and is unchecked when there are none.
	h_sub=$h_from h_oth=$1 h_rv=unhealthy h_stay=1
	if h_left; then h_ndial=0; fi
	if h_restart && h_probe; then
		h_rv=healthy
		if [ -z "$hp_checks" ] && [ "$h_ndial" -lt "$hp_ndial" ]; then h_rv=unchecked; fi
	fi
	ln -s from "$h_rec/done"
	h_say REVERTED "$hp_hid" "$1" "$h_from" "$h_rv"
}
