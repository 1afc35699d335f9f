# Run records: runs/<id>/ of every hoist run (h_run): info (one line:
# hoist-run/1 id= start= pid= pstart= boot= token= lease= who= cmd=), out and
# err (cut to their last 64 KiB by gc an hour after the run ended, h_trim;
# "cut" has their whole sizes), pgid, guard (the guardian's pid and start),
# and status ("<exit status> <end>", "-" for a status nobody saw; empty for
# the instant it is being written) once it ended. Private to the login; gc removes them after hp_keepruns.

# h_op_runs: one RUN line per run record, oldest first: id, start, end (or
# -), status (or - while running, ? when unknown), and the info line's who
# and cmd fields as they are. Read-only.
h_op_runs() {
	if [ ! -d "$h_runs" ]; then
		h_say LISTED
		return
	fi
	set +f
	for h_d in "$h_runs"/*; do
		h_i=${h_d##*/}
		# Only the login's own records: in a runs/ a team shares, another
		# member's directory could pose as one of ours.
		{ h_isuuid "$h_i" && [ -d "$h_d" ] && [ ! -L "$h_d" ] && [ -O "$h_d" ] && [ -f "$h_d/info" ]; } || continue
		h_runinfo "$h_d" || continue
		printf '%s %s %s %s %s %s\n' "$h_ist" "$h_i" "$h_iend" "$h_ista" "$h_iwho" "$h_icmd"
	done | sort -n | tail -n 200 | while IFS=' ' read -r h_ist h_i h_iend h_ista h_iwho h_icmd; do
		h_say RUN "$h_i" "$h_ist" "$h_iend" "$h_ista" "$h_iwho" "$h_icmd"
	done
	set -f
	h_say LISTED
}

# h_runinfo DIR: the run record in DIR: h_ist (start), h_iwho, h_icmd (as
# encoded), h_iend and h_ista (- while it runs, ? for a status nobody saw).
h_runinfo() {
	h_ist= h_iwho=- h_icmd=- h_iend=- h_ista=- h_ipid= h_ipst= h_iboot=
	{ IFS= read -r h_il <"$1/info"; } 2>/dev/null || return 1
	case $h_il in "hoist-run/1 "*) ;; *) return 1 ;; esac
	h_ifs=$IFS
	IFS=' '
	for h_f in $h_il; do
		case $h_f in
		start=*) h_ist=${h_f#*=} ;;
		pid=*) h_ipid=${h_f#*=} ;;
		pstart=*) h_ipst=${h_f#*=} ;;
		boot=*) h_iboot=${h_f#*=} ;;
		who=*) h_iwho=${h_f#*=} ;;
		cmd=*) h_icmd=${h_f#*=} ;;
		esac
	done
	IFS=$h_ifs
	case $h_ist in '' | *[!0-9]*) return 1 ;; esac
	case $h_ipid in *[!0-9]*) h_ipid= ;; esac
	case $h_ipst in *[!0-9]*) h_ipst= ;; esac
	case $h_iboot in *[!0-9a-f-]*) h_iboot= ;; esac
	case $h_iwho$h_icmd in *[!0-9A-Za-z%._~/:@+,-]*) h_iwho=- h_icmd=- ;; esac
	# A status is written in one write (h_status): an empty one is being
	# written, and the run still counts as running.
	if [ -s "$1/status" ]; then
		# A line cut short still sets what it read: checked either way.
		{ IFS=' ' read -r h_ista h_iend <"$1/status"; } 2>/dev/null
		case $h_ista in '' | *[!0-9]*) h_ista='?' ;; esac
		case $h_iend in '' | *[!0-9]*) h_iend=- ;; esac
	fi
	return 0
}

# h_op_logs: a run's output from the offsets the client has (hp_oo, hp_eo),
# then, with hp_follow, what it writes until it ends, and RUNSTATE: the
# record's start, end, status, who and cmd. A "stop" line on stdin asks the
# run's guardian to stop it, as the run's own client would. Offsets before
# what a finished run kept are reported as CUT stream bytes.
h_op_logs() {
	h_scr=$h_runs/$hp_rid
	if ! h_isuuid "$hp_rid" || [ -L "$h_scr" ] || [ ! -O "$h_scr" ] || { [ ! -f "$h_scr/info" ] && [ -z "$hp_follow" ]; }; then
		h_say NORUN "$hp_rid"
		return
	fi
	# The client's input goes to the reader through descriptor 5: an
	# asynchronous list's own stdin is /dev/null in a shell without job
	# control.
	exec 5<&0
	{
		while IFS= read -r h_l; do
			case $h_l in stop) true >"$h_scr/stop" ;; esac
		done
	} <&5 >/dev/null 2>&1 &
	h_lp=$!
	exec 5<&- </dev/null
	# Followed, a run still waiting for the lock (its scratch directory,
	# no record yet) is waited for: it may still start, its client having
	# only lost contact (which the waiter sees once sshd closes its
	# input). It ends as NORUN when it gives up (its directory goes) or
	# was killed (a waiter touches its directory every minute: quiet for
	# five, it is gone; a host whose find cannot tell says NORUN at once,
	# as it would never know), and quietly when this command's own client
	# leaves (the stdin reader ended). A record is read once it has its
	# line (-s).
	h_wi=0
	while [ ! -s "$h_scr/info" ]; do
		h_wi=$((h_wi + 1))
		if [ ! -d "$h_scr" ]; then
			h_say NORUN "$hp_rid"
			return
		fi
		kill -0 "$h_lp" 2>/dev/null || return 0
		if [ $((h_wi % 100)) -eq 1 ]; then
			if ! h_f=$(find "$h_scr" -mmin -5 2>/dev/null) || [ -z "$h_f" ]; then
				h_say NORUN "$hp_rid"
				return
			fi
		fi
		sleep "$h_nap"
	done
	exec 3<"$h_scr/out" 4<"$h_scr/err"
	h_skip 3 out "$hp_oo" 0
	h_skip 4 err "$hp_eo" 1
	h_runinfo "$h_scr"
	h_ri=0 h_rnap=$h_nap
	while :; do
		h_last=
		if [ -s "$h_scr/status" ] || [ -z "$hp_follow" ] || [ ! -d "$h_scr" ]; then h_last=1; fi
		# Every few seconds: a run whose host command and guardian were
		# both killed never gets a status; nothing will write any more.
		if [ -z "$h_last" ] && [ $((h_ri % 20)) -eq 19 ] && h_runkilled; then h_last=1; fi
		cat <&3
		cat <&4 >&2
		[ -z "$h_last" ] || break
		h_ri=$((h_ri + 1))
		if [ "$h_ri" -eq 20 ] && [ "$h_nap" != 1 ]; then h_rnap=0.25; fi
		sleep "$h_rnap"
	done
	h_runinfo "$h_scr"
	h_say RUNSTATE "$h_ist" "$h_iend" "$h_ista" "$h_iwho" "$h_icmd"
}

# h_runkilled: the run has no status, and neither its host command (info's
# pid and start) nor its guardian ("guard": pid and start) is there any more,
# or the host has booted since. A pid alone proves nothing: after a reboot
# the follower's own shell may have the run's old pid. Where /proc is not
# this namespace's (h_proc), no start time was recorded: the guardian is
# known by its sign of life instead, a touch of the run's directory every
# minute, and a run quiet for five minutes is over.
h_runkilled() {
	[ ! -f "$h_scr/status" ] || return 1
	if [ -n "$h_iboot" ] && [ "$h_iboot" != - ] && [ "${h_bootid:--}" != - ]; then
		[ "$h_iboot" = "$h_bootid" ] || return 0
	fi
	if [ -z "$h_proc" ]; then
		h_f=$(find "$h_scr" -mmin -5 2>/dev/null) && [ -z "$h_f" ]
		return
	fi
	[ -n "$h_ipid" ] && [ -n "$h_ipst" ] && h_gone "$h_ipid" "$h_ipst" || return 1
	{ read -r h_gp h_gs <"$h_scr/guard"; } 2>/dev/null || return 0
	case $h_gp:$h_gs in *[!0-9:]* | :* | *:) return 1 ;; esac
	h_gone "$h_gp" "$h_gs"
}

# h_skip FD NAME OFFSET FIELD: moves descriptor FD on the run's output NAME
# to OFFSET, as the whole output counts it; a finished run kept only its
# tail (its whole sizes are in "cut", field FIELD): an offset before the
# tail says CUT NAME BYTES and starts at the tail. A descriptor opened on
# the whole output just before the tail replaced it is read as the whole.
h_skip() {
	h_off=$3
	if { read -r h_c0 h_c1 <"$h_scr/cut"; } 2>/dev/null; then
		if [ "$4" = 0 ]; then h_whole=$h_c0; else h_whole=$h_c1; fi
		h_kept=$(wc -c <"$h_scr/$2")
		# The file sized must be the one read: a descriptor opened
		# before gc's trim replaced the output still holds all of it.
		# shellcheck disable=SC3013 # test -ef: in dash, bash, busybox, mksh, ksh and BSD sh
		if [ -e "/dev/fd/$1" ] && ! [ "$h_scr/$2" -ef "/dev/fd/$1" ]; then h_kept=$h_whole; fi
		case $h_whole:$h_kept in *[!0-9:\ ]*) h_whole=0 h_kept=0 ;; esac
		# In awk: outputs pass 2 GiB, beyond the 32 bits some shells
		# count in (mksh).
		h_off=$(awk -v o="$h_off" -v w="$h_whole" -v k="$h_kept" 'BEGIN { printf "%.0f\n", o - (w - k) }')
		case $h_off in
		-*)
			h_say CUT "$2" "${h_off#-}"
			h_off=0
			;;
		esac
	fi
	# Digits, compared as text (a number of them may pass 32 bits).
	case $h_off in '' | *[!0-9]* | 0) return 0 ;; esac
	eval "dd bs=1 skip=\$h_off count=0 <&$1 2>/dev/null"
}

# h_trim DIR: a run's record that ended keeps the last 64 KiB of each output.
# "cut" gets their whole sizes first, then each file is replaced by its
# tail: a reader (h_skip) that sees "cut" and a file not yet replaced finds
# the file's size equal to its whole size, and reads it right either way.
h_trim() {
	h_co=$(wc -c 2>/dev/null <"$1/out") h_ce=$(wc -c 2>/dev/null <"$1/err")
	h_co=${h_co##* } h_ce=${h_ce##* }
	case $h_co:$h_ce in *[!0-9:]* | :* | *:) return 0 ;; esac
	# More than five digits is more than 64 KiB: sizes that pass 32 bits
	# are never compared as numbers (mksh counts in 32 bits).
	[ "${#h_co}" -gt 5 ] || [ "$h_co" -gt 65536 ] || [ "${#h_ce}" -gt 5 ] || [ "$h_ce" -gt 65536 ] || return 0
	(umask 077 && echo "$h_co $h_ce" >"$1/cut.t" && mv "$1/cut.t" "$1/cut") || return 0
	for h_f in out err; do
		(umask 077 && tail -c 65536 "$1/$h_f" >"$1/$h_f.t" && mv "$1/$h_f.t" "$1/$h_f") 2>/dev/null
	done
}
