# Records (docs/rollout.md, "Layout"): runtimes/.rollouts/<id>/, made whole
# before current changes; its vote, decision, outcome and done are links
# written once (h_once: the first writer wins). The local rule (h_settle)
# finishes what a record left unfinished says, by the record alone.

# h_unfinished DIR: the record DIR has its plan and no done.
h_unfinished() {
	[ -f "$1/plan" ] && [ ! -e "$1/done" ] && [ ! -L "$1/done" ]
}

# h_anyunfin: some record here is unfinished (builtins only), so a switch
# to what current names already still takes the lock to settle it.
h_anyunfin() {
	set +f
	for h_jd in "$h_store"/.rollouts/*/plan; do
		set -f
		! h_unfinished "${h_jd%/plan}" || return 0
	done
	set -f
	return 1
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
# h_record makes a record (mkdir -m 700): only such a record's restart runs
# as this login; another login's (a team store's) is left to that login.
h_ownrecord() {
	[ -n "$(find "$1" -prune -type d -user "$h_uid" ! -perm -020 ! -perm -002 2>/dev/null)" ]
}

# h_recread DIR: the plan of record DIR: h_jid, h_jmode, h_jf (from), h_jt
# (to), h_jdl (the deadline, ms), and for an --atomic one h_jidx (this
# host's place in h_jhosts) and h_jdec (the decider's); a batch one's plan
# of its rollout: h_jhosts and h_jopts (its options). h_jint, h_jtmo,
# h_jstb (ms) and h_jnd (dialled probes) are the checks' timing, which a
# record of an older hoist does not keep (h_jnew empty).
h_recread() {
	h_jid=${1##*/} h_jf= h_jt= h_jdl=30000 h_jmode=single h_jidx= h_jdec= h_jhosts= h_jopts=
	h_jint=1000 h_jtmo=5000 h_jstb=0 h_jnd=0 h_jnew=
	h_pl=$(cat "$1/plan" 2>/dev/null)
	for h_w in $h_pl; do
		case $h_w in
		from=*) h_jf=${h_w#from=} ;;
		to=*) h_jt=${h_w#to=} ;;
		mode=*) h_jmode=${h_w#mode=} ;;
		index=*) h_jidx=${h_w#index=} ;;
		decider=*) h_jdec=${h_w#decider=} ;;
		hosts=*) h_jhosts=${h_w#hosts=} ;;
		opts=*) h_jopts=${h_w#opts=} ;;
		deadline=[0-9]*) h_jdl=${h_w#deadline=} ;;
		interval=[0-9]*) h_jint=${h_w#interval=} h_jnew=1 ;;
		timeout=[0-9]*) h_jtmo=${h_w#timeout=} ;;
		stable=[0-9]*) h_jstb=${h_w#stable=} ;;
		dialled=[0-9]*) h_jnd=${h_w#dialled=} ;;
		esac
	done
}

# h_recval DIR NAME: h_jv is what NAME of record DIR says ("" when not
# written). A NAME that is not a link with one of its values is not
# hoist's: ERROR journal, and it fails.
h_recval() {
	h_jv=
	[ -e "$1/$2" ] || [ -L "$1/$2" ] || return 0
	h_jv=$(readlink "$1/$2" 2>/dev/null)
	case $2:$h_jv in
	vote:ready | vote:aborted | decision:commit | decision:abort | outcome:commit | outcome:abort | done:to | done:from | done:overridden) return 0 ;;
	recheck:healthy | recheck:unhealthy | recheck:unchecked | recheck:old) return 0 ;;
	esac
	h_say ERROR journal "$(h_oneline "$hp_storedir/.rollouts/${1##*/}/$2")"
	return 1
}

# h_once DIR NAME VALUE: NAME of record DIR is written once, fenced, with
# ln -s (which fails when NAME is there): the first writer wins, and h_jv
# is what is there afterwards.
h_once() {
	h_fence || return 1
	ln -s "$3" "$1/$2" 2>/dev/null
	h_recval "$1" "$2"
}

# h_settle: the local rule on every unfinished record of this login
# (h_settle1), but the one of hp_hid when h_jskip is set (a resume settles
# that one on its client's word). A record in doubt stops a command that
# would switch current (ERROR indoubt ID DECIDER HOSTS), unless hp_force:
# then it is finished as overridden. A record settled on a runtime that
# failed its checks (finished, never settled again) stops it too, once the
# other records are settled (ERROR unhealthy ID RUNTIME WHY): nothing else
# is switched on a host found unhealthy, so it stays on what it went back
# to until someone looks.
h_settle() {
	h_jbad=
	set +f
	for h_jd in "$h_store"/.rollouts/*/plan; do
		set -f
		h_unfinished "${h_jd%/plan}" || continue
		h_ownrecord "${h_jd%/plan}" || continue
		[ -z "$h_jskip" ] || [ "${h_jd%/plan}" != "$h_store/.rollouts/$hp_hid" ] || continue
		# A settle takes its time: a switch after it fences again.
		h_fenced=
		h_settle1 "${h_jd%/plan}"
		case $? in
		1) return 1 ;;
		3) [ -n "$h_jbad" ] || h_jbad="$h_jid $h_jrt $(h_oneline "$h_jwhy")" ;;
		2)
			if [ -z "$hp_force" ]; then
				h_say ERROR indoubt "$h_jid" "${h_jdec:--}" "${h_jhosts:--}"
				return 1
			fi
			h_once "${h_jd%/plan}" "done" overridden || return 1
			;;
		esac
	done
	set -f
	[ -n "$h_jbad" ] || return 0
	h_say ERROR unhealthy "$h_jbad"
	return 1
}

# h_settle1 DIR [DECISION]: the local rule for record DIR (docs/rollout.md,
# "The local rule"). A single or batch record was never found healthy, so
# it goes back. An --atomic one goes by its decision: the decider with
# none writes abort; another host takes its outcome from DECISION (a
# resume's word) when it has voted or the word is abort, else with no
# vote it votes aborted; voted ready with no outcome it is in doubt
# (returns 2, nothing changed). Going back: current returns to from if it
# still names to, and the record's restart runs for from, also when the
# dead command had reverted already (its restart may have been cut short).
# Then the record's exec checks run on what it restarted, or on to after
# a commit (h_recheck, SETTLED), what they said is kept (recheck), and the
# record is finished whatever they say: it returns 3 when they failed (the
# host stays where it is).
h_settle1() {
	h_recread "$1"
	h_recval "$1" "done" || return 1
	[ -z "$h_jv" ] || return 0
	h_jside=from h_jran= h_jrst=
	if [ "$h_jmode" = atomic ]; then
		if [ "$h_jidx" = "$h_jdec" ]; then
			h_once "$1" decision abort || return 1
		else
			h_recval "$1" vote || return 1
			h_jvote=$h_jv
			if [ -n "$2" ] && { [ "$h_jvote" = ready ] || [ "$2" = abort ]; }; then
				h_once "$1" outcome "$2" || return 1
			else
				h_recval "$1" outcome || return 1
			fi
			if [ -z "$h_jv" ]; then
				[ -n "$h_jvote" ] || h_once "$1" vote aborted || return 1
				[ "$h_jvote" != ready ] || return 2
				h_jv=abort
			fi
		fi
		[ "$h_jv" != commit ] || h_jside=to h_jran=1
	fi
	if [ "$h_jside" = from ]; then
		h_jsw=
		[ ! -f "$1/switched" ] || h_jsw=1
		if [ -n "$h_jf" ] && [ "$h_jf" != - ] && [ "$(h_pointer current)" = "$h_jt" ]; then
			h_activate "$h_jf" revert:interrupted || return 1
			h_jsw=1
		elif [ "$(h_pointer current)" = "$h_jt" ]; then
			h_jside=to
		fi
		# A record that never switched current restarts nothing.
		if [ -n "$h_jsw" ] && [ "$h_jside" = from ] && [ "$(h_pointer current)" = "$h_jf" ]; then
			h_jran=1
			if [ -f "$1/restart" ]; then
				h_seqinit
				h_sub=$h_jf h_oth=$h_jt
				h_spawn "$(cat "$1/restart")" restart
				h_clock
				h_reap restart $((h_now + h_jdl)) || :
				h_jrst=$h_rst
			fi
		fi
	fi
	h_recheck "$1" || return 1
	# What the checks said is kept (before done, written once), so that
	# rollout status tells a runtime that failed them after the settle
	# (unhealthy) from one that went back and passed.
	[ "$h_jck" = - ] || h_once "$1" recheck "$h_jck" || return 1
	h_once "$1" "done" "$h_jside" || return 1
	[ "$h_jck" != unhealthy ] || return 3
}
