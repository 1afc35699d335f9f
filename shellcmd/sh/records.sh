# A rollout's records on a host (runtimes/.rollouts/<id>, docs/rollout.md):
# hoist rollout status reads them, read-only and without the lock, each part
# as it is, never through a link: a record directory that is not a
# directory, or a part that is not what hoist makes there (a file where a
# file belongs, a symlink with one of its values where a link does), is
# said as JOURNAL and not read further. gc sweeps the finished ones.

# h_isrid NAME: NAME is shaped like a rollout's id (<UTC time>-<6 hex>).
h_isrid() {
	case $1 in
	[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]T[0-9][0-9][0-9][0-9][0-9][0-9]Z-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]) return 0 ;;
	esac
	return 1
}

# h_isrec DIR: DIR is a real directory (not a link) with a plan that is a
# regular file (not a link): a record as hoist makes it.
h_isrec() {
	[ -d "$1" ] && [ ! -L "$1" ] && [ -f "$1/plan" ] && [ ! -L "$1/plan" ]
}

# h_revertof DIR ID: the record DIR is a revert of rollout ID.
h_revertof() {
	h_isrec "$1" || return 1
	case " $(head -n 1 "$1/plan" 2>/dev/null) " in *" revert-of=$2 "*) return 0 ;; esac
	return 1
}

# h_rlatest: the latest rollout recorded here (ids begin with a UTC time:
# lexical order), a revert's record not counted; nothing when none is.
h_rlatest() {
	set +f
	for h_d in "$h_store"/.rollouts/*; do
		if ! h_isrid "${h_d##*/}" || ! h_isrec "$h_d"; then continue; fi
		case " $(head -n 1 "$h_d/plan" 2>/dev/null) " in *" revert-of="*) continue ;; esac
		printf '%s\n' "${h_d##*/}"
	done | LC_ALL=C sort | tail -n 1
	set -f
}

# h_rrecord DIR: says the record DIR: RECORD with its plan, then RPART for
# each part there (a file: "file"; a link: its value), the known parts in
# their order, then any other (a name and a link's value of [a-z0-9._-]
# only), or JOURNAL for the first thing that is not what hoist makes.
h_rrecord() {
	h_n=${1##*/}
	if ! h_isrec "$1"; then
		h_say JOURNAL "$h_n" "$(h_oneline "$hp_storedir/.rollouts/$h_n")"
		return
	fi
	h_say RECORD "$h_n" "$(h_oneline "$(head -n 1 "$1/plan")")"
	h_parts=
	for h_p in restart checks switched vote decision outcome recheck 'done' log closed; do
		{ [ -e "$1/$h_p" ] || [ -L "$1/$h_p" ]; } && h_parts="$h_parts $h_p"
	done
	set +f
	for h_f in "$1"/* "$1"/.[!.]* "$1"/..?*; do
		{ [ -e "$h_f" ] || [ -L "$h_f" ]; } || continue
		case " plan$h_parts " in *" ${h_f##*/} "*) ;; *) h_parts="$h_parts ${h_f##*/}" ;; esac
	done
	set -f
	for h_p in $h_parts; do
		h_f=$1/$h_p h_v=file
		[ ! -L "$h_f" ] || h_v=$(readlink "$h_f" 2>/dev/null)
		case $h_p:$h_v in
		vote:ready | vote:aborted | decision:commit | decision:abort | outcome:commit | outcome:abort) ;;
		done:to | done:from | done:overridden) ;;
		recheck:healthy | recheck:unhealthy | recheck:unchecked | recheck:old) ;;
		restart:file | checks:file | switched:file | log:file | closed:file) [ -f "$h_f" ] ;;
		vote:* | decision:* | outcome:* | recheck:* | done:* | restart:* | checks:* | switched:* | log:* | closed:*) false ;;
		*[!a-z0-9._:-]* | :* | *:) false ;;
		*:file) [ -f "$h_f" ] ;;
		esac || {
			h_say JOURNAL "$h_n" "$(h_oneline "$hp_storedir/.rollouts/$h_n/$h_p")"
			return
		}
		h_say RPART "$h_n" "$h_p" "$h_v"
	done
}

# h_op_rstatus: the records of rollout hp_hid (its own, then its reverts'),
# or of the latest one recorded here when hp_hid is empty, and then RODD
# for each other id's entry that is not a record and RWITNESS with the
# latest witness (h_wlatest); RSTATUS last, with the id read and what
# current names now. Read-only.
h_op_rstatus() {
	if [ ! -d "$h_store" ]; then
		h_say NOSTORE
		return
	fi
	h_rid=$hp_hid
	[ -n "$h_rid" ] || h_rid=$(h_rlatest)
	if [ -n "$h_rid" ]; then
		if [ -e "$h_store/.rollouts/$h_rid" ] || [ -L "$h_store/.rollouts/$h_rid" ]; then
			h_rrecord "$h_store/.rollouts/$h_rid"
		fi
		set +f
		for h_d in "$h_store"/.rollouts/*; do
			set -f
			if [ "${h_d##*/}" = "$h_rid" ] || ! h_isrid "${h_d##*/}" || ! h_revertof "$h_d" "$h_rid"; then continue; fi
			h_rrecord "$h_d"
		done
		set -f
	fi
	# Without ID the client takes the greatest of every host's latest: a
	# host whose own is older may keep something of that id that is not a
	# record (and so not its latest), said as for an ID given (JOURNAL).
	if [ -z "$hp_hid" ]; then
		set +f
		for h_d in "$h_store"/.rollouts/*; do
			set -f
			if [ "${h_d##*/}" = "$h_rid" ] || ! h_isrid "${h_d##*/}" || h_isrec "$h_d"; then continue; fi
			h_say RODD "${h_d##*/}" "$(h_oneline "$hp_storedir/.rollouts/${h_d##*/}")"
		done
		set -f
		h_wlatest
	fi
	h_cur=$(h_pointer current)
	h_say RSTATUS "${h_rid:--}" "${h_cur:--}"
}

# h_ishoistrec DIR: DIR is a finished record as hoist makes it, this login's
# (h_ownrecord): a real directory holding nothing but a record's parts,
# each of its kind (files, and links with one of their values), with a done
# link. Anything else in it, and a record someone else owns, is not gc's.
h_ishoistrec() {
	h_isrec "$1" && h_ownrecord "$1" && [ -L "$1/done" ] || return 1
	h_ok=0
	set +f
	for h_sf in "$1"/* "$1"/.[!.]* "$1"/..?*; do
		[ -e "$h_sf" ] || [ -L "$h_sf" ] || continue
		h_p=${h_sf##*/}
		if [ -L "$h_sf" ]; then
			case $h_p:$(readlink "$h_sf" 2>/dev/null) in
			vote:ready | vote:aborted | decision:commit | decision:abort | outcome:commit | outcome:abort | done:to | done:from | done:overridden) ;;
			recheck:healthy | recheck:unhealthy | recheck:unchecked | recheck:old) ;;
			*) h_ok=1 ;;
			esac
		else
			case $h_p in
			plan | restart | checks | switched | log | closed) [ -f "$h_sf" ] || h_ok=1 ;;
			*) h_ok=1 ;;
			esac
		fi
	done
	set -f
	return "$h_ok"
}

# h_gc_records: sweeps finished records (done) nothing has written to for
# hp_keepruns, as run records are, then the links of a record that is gone
# (<root>/.rollout-<id>.next, .next.fenced, .back: symlinks, this login's)
# and a record being prepared (.rollouts/.new-<id>) after the stale period;
# a witness (.rollouts/.plan-<id>, sh/witness.sh) nothing wrote to for
# hp_keepruns, as a finished record, and one being written after the stale
# period. An unfinished record is never swept; nothing is followed: only
# what h_ishoistrec and h_ownrecord show hoist made, as this login, is
# removed (a witness: a regular file of this login's).
h_gc_records() {
	[ -d "$h_store/.rollouts" ] && [ ! -L "$h_store/.rollouts" ] || return 0
	h_kmin=$(((hp_keepruns + 59) / 60)) h_smin=$(((hp_stale + 59) / 60))
	set +f
	for h_d in "$h_store"/.rollouts/* "$h_store"/.rollouts/.new-* "$h_store"/.rollouts/.plan-* "$h_root"/.rollout-*; do
		set -f
		h_n=${h_d##*/}
		case $h_n in
		.new-*)
			h_isrid "${h_n#.new-}" && [ -d "$h_d" ] && [ ! -L "$h_d" ] && h_ownrecord "$h_d" && h_idle "$h_d" "$h_smin"
			;;
		.plan-*.t)
			h_i=${h_n#.plan-}
			h_isrid "${h_i%%.*}" && [ ! -L "$h_d" ] && [ -n "$(find "$h_d" -prune -type f -user "$h_uid" -mmin "+$h_smin" 2>/dev/null)" ]
			;;
		.plan-*)
			h_isrid "${h_n#.plan-}" && [ ! -L "$h_d" ] && [ -n "$(find "$h_d" -prune -type f -user "$h_uid" -mmin "+$h_kmin" 2>/dev/null)" ]
			;;
		.rollout-*)
			h_i=${h_n#.rollout-}
			h_i=${h_i%.next.fenced}
			h_i=${h_i%.next}
			h_i=${h_i%.back}
			h_isrid "$h_i" && [ -L "$h_d" ] && [ ! -e "$h_store/.rollouts/$h_i" ] && [ ! -L "$h_store/.rollouts/$h_i" ] &&
				[ -n "$(find "$h_d" -prune -user "$h_uid" -mmin "+$h_smin" 2>/dev/null)" ]
			;;
		*) h_isrid "$h_n" && h_ishoistrec "$h_d" && h_idle "$h_d" "$h_kmin" ;;
		esac || continue
		h_rel=${h_d#"$h_root"/}
		if [ -n "$hp_dry" ]; then
			h_say SWEEP "$h_rel" plan
		elif h_owned; then
			h_rmtree "$h_d" && h_say SWEEP "$h_rel" 'done'
		fi
	done
	set -f
}

# h_sayunfin: UNFINISHED for each record here with a plan and no done, for
# the commands that only read or run (list, lock status, run): they settle
# nothing, and the operator learns that the host is mid-rollout (a rollout
# whose host command died, or one under way). Builtins only (a glob, test,
# read): no process, whatever the store holds. A link's value takes a
# readlink, so the state is what the parts there say: decided (a decision
# or outcome), voted (an --atomic vote: in doubt when it is ready, which
# rollout status tells), switched, or prepared. The hold is "held" when the
# plan's token (the hold its host command works under) owns the lock now,
# its record there (h_sample's "held"): the rollout is under way, or its
# holder died and nobody released or took the lock since, which only the
# lock's age tells (lock status); else "-", and it was interrupted. Only a
# store member can make a lock directory, so only one can make a dead
# rollout look held, as it can hold the lock itself.
h_sayunfin() {
	set +f
	for h_uf in "$h_store"/.rollouts/*/plan; do
		set -f
		h_urd=${h_uf%/plan}
		if ! h_isrid "${h_urd##*/}" || ! h_isrec "$h_urd" || [ -e "$h_urd/done" ] || [ -L "$h_urd/done" ]; then continue; fi
		h_ul=
		read -r h_ul 2>/dev/null <"$h_uf"
		h_um=- h_ufr=- h_uto=- h_utk=
		for h_w in $h_ul; do
			case $h_w in
			mode=?*) h_um=${h_w#mode=} ;;
			from=?*) h_ufr=${h_w#from=} ;;
			to=?*) h_uto=${h_w#to=} ;;
			token=?*) h_utk=${h_w#token=} ;;
			esac
		done
		# A token as h_sample takes one: a name in the lock, never a path.
		h_uh=-
		case $h_utk in
		'' | *[!0-9a-f-]*) ;;
		*)
			h_ut=$h_lock/$h_utk
			if [ -d "$h_lock" ] && [ ! -L "$h_lock" ] && [ -d "$h_ut" ] && [ ! -L "$h_ut" ] && [ -f "$h_ut/rec" ] && [ ! -L "$h_ut/rec" ]; then h_uh=held; fi
			;;
		esac
		h_us=prepared
		[ ! -f "$h_urd/switched" ] || h_us=switched
		[ ! -L "$h_urd/vote" ] || h_us=voted
		if [ -L "$h_urd/decision" ] || [ -L "$h_urd/outcome" ]; then h_us=decided; fi
		h_say UNFINISHED "${h_urd##*/}" "$h_um" "$h_ufr" "$h_uto" "$h_us" "$h_uh"
	done
	set -f
}
