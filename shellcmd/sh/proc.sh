# Processes on the host: the holder a lock's record names, and the process
# group a run's command gets. Linux /proc, and only where it is this PID
# namespace's (h_procown); anything that cannot be read is doubt, and doubt
# means alive.

# h_procown: sets h_proc when /proc is this PID namespace's, so that a pid
# of this shell's is the same process there: /proc/self, read by this shell
# itself (a builtin's redirection starts no process), is $$, and, where
# Linux says (NSpid), this shell has that one pid in /proc's namespace.
# Under unshare -p --fork without --mount-proc, /proc is the parent
# namespace's: $$ names another process there, or none. Without h_proc no
# pid is looked up in /proc: a command is followed by wait and kill -0,
# which look in this namespace, and the lease decides the rest. Call it in
# the command's own shell: in a subshell $$ is not /proc/self. The same
# reads give, where they prove /proc, this shell's own start time (h_myst,
# as h_pstat would read it) and its umask (h_umask, Linux 4.7 on), which
# the command then needs no process to learn.
h_procown() {
	h_proc= h_myst= h_umask=
	{ IFS= read -r h_pl </proc/self/stat; } 2>/dev/null && [ "${h_pl%% *}" = "$$" ] || return 1
	h_pfields "$h_pl" || h_pst=
	h_ifs=$IFS
	IFS=' 	'
	while read -r h_pk h_pl h_px; do
		case $h_pk in
		Umask:) h_umask=$h_pl ;;
		NSpid:)
			IFS=$h_ifs
			if [ "$h_pl" != "$$" ] || [ -n "$h_px" ]; then
				h_umask=
				return 1
			fi
			break
			;;
		esac
	done 2>/dev/null </proc/self/status
	IFS=$h_ifs
	case $h_umask in [0-7][0-7][0-7] | [0-7][0-7][0-7][0-7]) ;; *) h_umask= ;; esac
	h_proc=1 h_myst=$h_pst
}

# h_pstat PID: reads /proc/PID/stat with builtins: h_pstate (R, S, Z, ...)
# and h_pst, its start time in clock ticks after boot. Fails when the file
# cannot be read (no such process, or no /proc) or /proc is not this
# namespace's (h_proc).
h_pstat() {
	h_pstate= h_pst=
	[ -n "$h_proc" ] || return 1
	{ IFS= read -r h_pl <"/proc/$1/stat"; } 2>/dev/null || return 1
	h_pfields "$h_pl"
}

# h_pfields LINE: h_pstate and h_pst of a /proc/PID/stat line. The command
# name, in parentheses, may hold anything: the fields start after its last
# ") ". The fields hold no ")", so a name is passed one ") " at a time
# until none is left, each a short match (the longest match, ##, costs the
# square of the line's length in some shells).
h_pfields() {
	h_pstate= h_pst=
	case $1 in *") "*) ;; *) return 1 ;; esac
	h_pl=${1#*) }
	while :; do
		case $h_pl in
		*")"*)
			h_px=${h_pl#*) }
			[ "$h_px" != "$h_pl" ] || return 1
			h_pl=$h_px
			;;
		*) break ;;
		esac
	done
	h_ifs=$IFS
	IFS=' '
	# shellcheck disable=SC2086 # the fields of /proc/PID/stat, split on purpose
	set -- $h_pl
	IFS=$h_ifs
	[ $# -ge 20 ] || return 1
	h_pstate=$1
	shift 19
	h_pst=$1
	case $h_pst in '' | *[!0-9]*) h_pst= && return 1 ;; esac
}

# h_gone PID START: the process PID that started at START has exited: /proc
# (this namespace's) answers and has no such process, or it is a zombie, or
# PID is another process now (another start time). Fails when that cannot
# be told.
h_gone() {
	[ -n "$h_proc" ] || return 1
	if ! h_pstat "$1"; then
		[ ! -e "/proc/$1" ]
		return
	fi
	[ "$h_pstate" = Z ] || [ "$h_pstate" = X ] || [ "$h_pst" != "$2" ]
}

# h_gsig SIG PGID: sends SIG to the process group PGID. Fails when the group
# has no process left (h_gerr says "No such process") or the signal could
# not be sent (h_gerr says why). dash and mksh want "--" before a negative
# pid, busybox refuses it, bash and zsh take both: which form this shell
# takes is found once, by a signal 0 to its own process group (h_kdd: 0,
# which is there in any subshell, even one whose parent shell has died), so
# that each sending is one command (h_ksig).
h_gsig() {
	if [ -z "$h_kdd" ]; then
		h_kdd=no
		if kill -s 0 -- 0 2>/dev/null; then h_kdd=yes; fi
	fi
	if [ "$h_kdd" = yes ]; then
		h_ksig -s "$1" -- "-$2"
	else
		h_ksig -s "$1" "-$2"
	fi
}

# h_ksig ARG...: kill ARG..., with its complaint in h_gerr when it fails.
# A run's shell and its guardian each have a file of their own in the run's
# scratch directory (h_kf) that takes the message, which the shell then
# reads: no process. Elsewhere, or when that file cannot be written or
# read (the message is empty: the signal may not have been sent), kill runs
# again in a command substitution, one process for its message.
h_ksig() {
	if [ -n "$h_kf" ]; then
		{ LC_ALL=C kill "$@" 2>"$h_kf"; } 2>/dev/null && return 0
		h_gerr=
		{ IFS= read -r h_gerr <"$h_kf"; } 2>/dev/null
		[ -z "$h_gerr" ] || return 1
	fi
	h_gerr=$(LC_ALL=C kill "$@" 2>&1)
}

# h_cmdread: the run's command group: h_cmdg where this shell started it,
# else the scratch directory's pgid file. Sets h_gk (g or p) and h_gp.
h_cmdread() {
	if [ -n "$h_cmdg" ]; then
		h_gk=${h_cmdg%% *} h_gp=${h_cmdg#* }
		return 0
	fi
	{ IFS=' ' read -r h_gk h_gp <"$h_scr/pgid"; } 2>/dev/null
}

# h_cmdalive: a process of the run's command (h_scr/pgid: "g PGID" for a
# group of its own, "p PID" where the host has no setsid) is still there.
# An unreadable or unfinished pgid file is doubt: alive. Without this
# namespace's /proc, kill -0 alone tells, and a zombie counts until it is
# reaped.
h_cmdalive() {
	h_cmdread || return 0
	case $h_gk:$h_gp in
	g:[0-9]*)
		if h_gsig 0 "$h_gp"; then
			h_grplive "$h_gp" && return 0
		else
			case $h_gerr in *"No such process"*) ;; *) return 0 ;; esac
		fi
		# The group forms when the command calls setsid, just after
		# the pgid file is written: until then, the process itself.
		if h_pstat "$h_gp"; then
			[ "$h_pstate" != Z ] && [ "$h_pstate" != X ]
			return
		fi
		[ -n "$h_proc" ] && return 1
		h_ksig -s 0 "$h_gp" && return 0
		;;
	p:[0-9]*) h_ksig -s 0 "$h_gp" && return 0 ;;
	*) return 0 ;;
	esac
	case $h_gerr in *"No such process"*) return 1 ;; esac
	return 0
}

# h_grplive PGID: the process group has a member that is not a zombie. A
# zombie has exited; it stays in its group until its parent (often PID 1,
# for a command whose host shell died) reaps it. Without this namespace's
# /proc (h_proc) every member counts.
h_grplive() {
	[ -n "$h_proc" ] || return 0
	h_gq=$1
	set +f
	for h_pf in /proc/[0-9]*/stat; do
		{ IFS= read -r h_pl <"$h_pf"; } 2>/dev/null || continue
		h_pl=${h_pl##*) }
		h_ifs=$IFS
		IFS=' '
		# shellcheck disable=SC2086 # the fields of the stat line, split on purpose
		set -- $h_pl
		IFS=$h_ifs
		# state ppid pgrp ...
		if [ "$3" = "$h_gq" ] && [ "$1" != Z ] && [ "$1" != X ]; then
			set -f
			return 0
		fi
	done
	set -f
	return 1
}

# h_cmdsig SIG: sends SIG to every process of the run's command: its group,
# or its one process where the host has no setsid.
h_cmdsig() {
	h_cmdread || return 0
	case $h_gk:$h_gp in
	g:[0-9]*)
		# Before the command called setsid there is no group yet: the
		# process itself.
		h_gsig "$1" "$h_gp" || kill -s "$1" "$h_gp" 2>/dev/null
		;;
	p:[0-9]*) kill -s "$1" "$h_gp" 2>/dev/null ;;
	esac
	return 0
}
