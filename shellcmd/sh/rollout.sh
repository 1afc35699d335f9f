# An --atomic rollout on one host (docs/rollout.md, "All or nothing"): the
# participant (h_op_rollout) holds the lock with the rollout's hold lease
# from its record to its end and obeys its coordinator's control lines on
# standard input (h_watch leaves each as c-<word>): switch, go, commit,
# abort, settle, and beat when there is nothing else to say. EOF, or no
# line for one hold lease, is the coordinator gone: before its vote the
# host aborts (the decider decides abort) and goes back; after voting
# ready it is in doubt, changes nothing and ends. The resume
# (h_op_resume) settles one rollout's record on its client's word.

# h_rwait WORD...: waits for the coordinator's word: h_got is the first of
# WORD..., abort and settle that came, or eof when it is gone or silent
# for a lease (h_mylease).
h_rwait() {
	h_wi=0
	while :; do
		for h_got in "$@" abort settle; do
			[ ! -f "$h_scr/c-$h_got" ] || return 0
		done
		h_got=eof
		[ ! -f "$h_scr/gone" ] || return 0
		h_wi=$((h_wi + 1))
		if [ $((h_wi % 10)) -eq 0 ] && h_age "$h_scr/heard" && [ "$h_a" -gt "$h_mylease" ]; then return 0; fi
		sleep "$h_nap"
	done
}

# h_op_rollout: the participant, to hp_id, for rollout hp_hid: this host is
# hp_rindex of the rollout's hosts (hp_rhosts), the decider hp_rdecider.
h_op_rollout() {
	h_nostore && return
	if ! h_present "$hp_id"; then
		h_say NOTFOUND "$hp_id"
		return
	fi
	h_take || return
	h_mark heard
	if ! h_present "$hp_id"; then
		h_say NOTFOUND "$hp_id"
	elif h_settle && h_badok "$hp_id"; then
		h_part "$hp_id"
	fi
	h_release_end
	rm -rf "$h_scr"
}

# h_part TO: the participant's steps, from its record to its finish.
h_part() {
	h_seqinit
	h_from=$(h_pointer current) h_why=
	h_record atomic "$1" " index=$hp_rindex hosts=$hp_rhosts decider=$hp_rdecider" || return 1
	h_rk=vote h_rno=aborted
	[ "$hp_rindex" != "$hp_rdecider" ] || h_rk=decision h_rno=abort
	h_step host.prepared
	h_rwait switch
	if [ "$h_got" != switch ]; then
		h_once "$h_rec" "$h_rk" "$h_rno" && h_pfinish "$1" abort
		return
	fi
	h_forward "$1" activate
	case $? in
	1)
		h_once "$h_rec" "$h_rk" "$h_rno" && h_pfinish "$1" abort
		return
		;;
	2) return 1 ;;
	esac
	h_step host.healthy
	if [ "$h_rk" = decision ]; then
		h_rwait commit
		h_w=abort
		if [ "$h_got" = commit ]; then
			h_step host.decide
			h_w=commit
		fi
		h_once "$h_rec" decision "$h_w" || return 1
		h_say DECIDED "$h_jv"
		h_pfinish "$1" "$h_jv"
		return
	fi
	h_rwait go
	if [ "$h_got" != go ]; then
		h_once "$h_rec" vote aborted && h_pfinish "$1" abort
		return
	fi
	h_step host.vote
	h_once "$h_rec" vote ready || return 1
	h_say VOTED "$h_jv"
	if [ "$h_jv" != ready ]; then
		h_pfinish "$1" abort
		return
	fi
	h_step host.ready
	h_rwait commit abort
	case $h_got in
	commit | abort)
		h_step host.learn
		h_once "$h_rec" outcome "$h_got" && h_pfinish "$1" "$h_jv"
		;;
	*) h_say INDOUBT "$hp_hid" ;;
	esac
}

# h_pfinish TO commit|abort: the participant finishes: on commit, done ->
# to; on abort it goes back first when it had switched (h_back, REVERTED),
# then done -> from, or -> to when there was nothing to go back to. DONE
# id side.
h_pfinish() {
	if [ "$2" = commit ]; then
		h_jside=to
	else
		h_jside=from
		if [ "$(h_pointer current)" = "$1" ] && [ "$h_from" != "$1" ]; then
			h_why=${h_why:-abort}
			h_back "$1" || return 1
			h_say REVERTED "$hp_hid" "$1" "${h_from:--}" "$h_rvd"
			[ "$h_rvd" != none ] || h_jside=to
		fi
	fi
	h_step host.finish
	h_once "$h_rec" "done" "$h_jside" || return 1
	h_say DONE "$hp_hid" "$h_jv"
}

# h_op_resume: settles the record of rollout hp_hid here, under the lock
# (waiting), after every other unfinished record. It says what the record
# is (PLAN id from to index decider hosts opts, or NORECORD id; WITNESS
# before it when a witness of the plan is here: h_rwitness), then waits
# for its client's word: leave (it changes nothing of the record); decide
# (on the decider: abort unless decided; with no record, a tombstone, the
# record's directory with decision -> abort alone, so that the rollout can
# never be prepared here); commit or abort
# (the decider's decision, for another host); settle (the decider is out
# of reach: the local rule, and a host that voted ready is INDOUBT). A
# resume never writes commit.
h_op_resume() {
	h_nostore && return
	h_take || return
	h_mark heard
	h_jskip=1
	h_settle && h_rresume
	h_release_end
	rm -rf "$h_scr"
}

# h_rsay DIR: PLAN for the record DIR (a tombstone has no plan: "-").
h_rsay() {
	h_jidx= h_jdec= h_jhosts= h_jf= h_jt= h_jopts=
	[ ! -f "$1/plan" ] || h_recread "$1"
	h_say PLAN "${1##*/}" "${h_jf:--}" "${h_jt:--}" "${h_jidx:--}" "${h_jdec:--}" "${h_jhosts:--}" "${h_jopts:--}"
}

# h_rresume: the resume of the record of hp_hid, under the lock. Only a
# record of this login's, which only it may write (h_ownrecord), is read
# and settled, as h_settle settles only those: its restart and checks run
# as this login. Anything else at the record's name (a link, a file,
# another login's record in a team store) stops it with ERROR journal,
# before a word is read.
h_rresume() {
	h_rec=$h_store/.rollouts/$hp_hid
	if [ -L "$h_rec" ] || { [ -e "$h_rec" ] && ! { [ -d "$h_rec" ] && h_ownrecord "$h_rec"; }; }; then
		h_say ERROR journal "$(h_oneline "$hp_storedir/.rollouts/$hp_hid") notown"
		return 1
	fi
	h_rwitness
	if [ -d "$h_rec" ]; then h_rsay "$h_rec"; else h_say NORECORD "$hp_hid"; fi
	h_step host.held
	h_rwait decide commit leave
	[ "$h_got" != leave ] || return 0
	if [ "$h_got" = decide ] && [ ! -e "$h_rec" ] && [ ! -L "$h_rec" ]; then
		h_new=$h_store/.rollouts/.new-$hp_hid
		h_fence || return 1
		if ! { h_mkshared "$h_store/.rollouts" && mkdir -m 700 "$h_new" && ln -s abort "$h_new/decision" && mv "$h_new" "$h_rec"; } 2>/dev/null; then
			h_say ERROR switch "cannot write the record $(h_oneline "$hp_storedir/.rollouts/$hp_hid"): check free space and permissions on the store"
			return 1
		fi
	fi
	[ -f "$h_rec/plan" ] || {
		[ "$h_got" != decide ] || { h_recval "$h_rec" decision && h_say DECIDED "${h_jv:-abort}"; }
		return 0
	}
	h_w=
	case $h_got in commit | abort) h_w=$h_got ;; esac
	h_seqinit
	h_settle1 "$h_rec" "$h_w"
	case $? in
	1) return 1 ;;
	2)
		h_say INDOUBT "$hp_hid"
		return 0
		;;
	esac
	if [ "$h_got" = decide ]; then
		h_recval "$h_rec" decision && h_say DECIDED "$h_jv"
	fi
	h_recval "$h_rec" "done" && h_say DONE "$hp_hid" "$h_jv"
}
