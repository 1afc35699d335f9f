# hoist rollout status (docs/rollout.md, "As built for a fleet"): the
# records of one rollout on this host, read-only and without the lock, each
# part as it is, never through a link: a record directory that is not a
# directory, or a part that is not what hoist makes there (a file where a
# file belongs, a symlink with one of its values where a link does), is
# said as JOURNAL and not read further.

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
# each part there (a file: "file"; a link: its value), or JOURNAL for the
# first thing that is not what hoist makes.
h_rrecord() {
	h_n=${1##*/}
	if ! h_isrec "$1"; then
		h_say JOURNAL "$h_n" "$(h_oneline "$hp_storedir/.rollouts/$h_n")"
		return
	fi
	h_say RECORD "$h_n" "$(h_oneline "$(head -n 1 "$1/plan")")"
	for h_p in restart switched vote decision outcome 'done' log closed; do
		h_f=$1/$h_p
		if [ -L "$h_f" ]; then
			h_v=$(readlink "$h_f" 2>/dev/null)
			case $h_p:$h_v in
			vote:ready | vote:aborted | decision:commit | decision:abort | outcome:commit | outcome:abort | done:to | done:from | done:overridden) ;;
			*)
				h_say JOURNAL "$h_n" "$(h_oneline "$hp_storedir/.rollouts/$h_n/$h_p")"
				return
				;;
			esac
			h_say RPART "$h_n" "$h_p" "$h_v"
		elif [ -e "$h_f" ]; then
			case $h_p in
			restart | switched | log | closed) [ -f "$h_f" ] ;;
			*) false ;;
			esac || {
				h_say JOURNAL "$h_n" "$(h_oneline "$hp_storedir/.rollouts/$h_n/$h_p")"
				return
			}
			h_say RPART "$h_n" "$h_p" file
		fi
	done
}

# h_op_rstatus: the records of rollout hp_hid (its own, then its reverts'),
# or of the latest one recorded here when hp_hid is empty; RSTATUS last,
# with the id read and what current names now. Read-only.
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
	h_cur=$(h_pointer current)
	h_say RSTATUS "${h_rid:--}" "${h_cur:--}"
}
