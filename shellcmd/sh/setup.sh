# h_setup: the paths and poll counts every operation uses, then the checks of
# h_paths; an operation starts only on a store that passes them. A
# home-relative root resolves on the host, against the HOME that sshd gave
# the login.
h_setup() {
	if [ -n "$hp_rooth" ]; then
		if [ -z "$HOME" ]; then
			h_say ERROR nohome
			exit 0
		fi
		h_root=$HOME${hp_rootp:+/$hp_rootp}
	else
		h_root=$hp_rootp
	fi
	h_store=$h_root/$hp_storedir h_lock=$h_root/$hp_storedir/$hp_lockname
	h_runs=$h_root/$hp_runsdir h_scr= h_stage= h_gw= h_swap= h_gpid= h_manual= h_isrun= h_cmdg= h_wpid= h_shacmd= h_since= h_up0= h_kdd= h_kf= h_fenced= h_inside=
	# The lease this command's own lock carries; a command working under a
	# manual hold (hp_hold) takes the hold's (h_ownlease).
	h_mylease=$hp_lease
	# Whether pids can be looked up in /proc, proven in this shell.
	h_procown
	h_every=1
	if [ "$h_nap" != 1 ]; then h_every=10; fi
	h_acktries=$((30 * h_every))
	h_paths || exit 0
}

# h_paths: the directories an operation trusts must be real directories (not
# symlinks), owned by the login or root, not writable by others (a group may
# write: teams share a deploy group), and readable by the login. One that does
# not exist is fine, but only when that is known (h_absent): a path that
# cannot be looked at is never "missing". Says ERROR path PROBLEM PATH for the
# first that is not fine, and fails; nothing has been touched then.
h_paths() {
	set --
	for h_p in "$h_root" "$h_store" "$h_runs" "$h_store/.meta" "$h_store/.pins" "$h_store/.files" "$h_store/.bad" "$h_store/.rollouts"; do
		h_absent "$h_p" && continue
		# There (perhaps just made by another command), or its parent
		# cannot be searched.
		if [ -e "$h_p" ] || [ -L "$h_p" ]; then
			set -- "$@" "$h_p"
		else
			h_say ERROR path unsearchable "$(h_oneline "$h_par")"
			return 1
		fi
	done
	[ $# -gt 0 ] || return 0
	# One ls for all of them (POSIX's long format, numeric ids): each
	# line is found by its end, " PATH" (ls sorts its operands; a
	# symlink's line would end with its target, but symlinks are refused
	# first). A path ls writes otherwise (a newline or another character
	# it escapes) gets an ls of its own, whose first line starts with what
	# is needed. A path without a line is not a pass.
	for h_p in "$@"; do
		if [ -L "$h_p" ]; then
			h_say ERROR path symlink "$(h_oneline "$h_p")"
			return 1
		fi
	done
	h_sl=$(LC_ALL=C ls -ldn "$@" 2>/dev/null)
	for h_p in "$@"; do
		h_l=
		case "$h_nl$h_sl$h_nl" in
		*"$h_nl"*" $h_p$h_nl"*)
			h_l=${h_sl%%" $h_p$h_nl"*}
			[ "$h_l" != "$h_sl" ] || h_l=${h_sl%" $h_p"}
			h_l=${h_l##*"$h_nl"}
			;;
		*)
			h_l=$(LC_ALL=C ls -ldn "$h_p" 2>/dev/null)
			h_l=${h_l%%"$h_nl"*}
			;;
		esac
		# An ACL can let others write where the mode bits say they
		# cannot, and hoist cannot read one everywhere: ls marks it with
		# "+", and such a directory is refused.
		case $h_l in
		??????????+*)
			h_say ERROR path acl "$(h_oneline "$h_p")"
			return 1
			;;
		esac
		# shellcheck disable=SC2086 # ls's fields, split on purpose
		h_lsmode $h_l
		h_pathok "$h_p" "$h_lu" "$h_lm" "$h_lt" || {
			h_say ERROR path "$h_why" "$(h_oneline "$h_p")"
			return 1
		}
	done
}

# h_lsmode MODE LINKS UID ...: from the start of an ls -ln line, the owner
# (h_lu), the type (h_lt: directory, symbolic, other) and the permission
# bits in octal as stat's %a writes them (h_lm: 755, 1777, 2775). Empty
# when the line is not one.
h_lsmode() {
	h_lu= h_lm= h_lt=
	[ $# -ge 3 ] || return 0
	case $1 in
	d?????????*) h_lt=directory ;;
	l?????????*) h_lt=symbolic ;;
	??????????*) h_lt=other ;;
	*) return 0 ;;
	esac
	case $3 in '' | *[!0-9]*) return 0 ;; esac
	h_lu=$3
	h_ms=0 h_mu=0 h_mg=0 h_mo=0
	case $1 in ?r*) h_mu=4 ;; esac
	case $1 in ??w*) h_mu=$((h_mu + 2)) ;; esac
	case $1 in ???[xs]*) h_mu=$((h_mu + 1)) ;; esac
	case $1 in ???[sS]*) h_ms=4 ;; esac
	case $1 in ????r*) h_mg=4 ;; esac
	case $1 in ?????w*) h_mg=$((h_mg + 2)) ;; esac
	case $1 in ??????[xs]*) h_mg=$((h_mg + 1)) ;; esac
	case $1 in ??????[sS]*) h_ms=$((h_ms + 2)) ;; esac
	case $1 in ???????r*) h_mo=4 ;; esac
	case $1 in ????????w*) h_mo=$((h_mo + 2)) ;; esac
	case $1 in ?????????[xt]*) h_mo=$((h_mo + 1)) ;; esac
	case $1 in ?????????[tT]*) h_ms=$((h_ms + 1)) ;; esac
	h_lm=$h_ms$h_mu$h_mg$h_mo
	while :; do
		case $h_lm in
		0?*) h_lm=${h_lm#0} ;;
		*) break ;;
		esac
	done
}

# h_pathok PATH UID MODE TYPE: whether PATH, as stat described it, may be
# trusted; h_why says why not. Missing fields (stat failed) are not a pass.
h_pathok() {
	case $4 in
	directory | Directory) ;;
	symbolic | Symbolic) h_why=symlink && return 1 ;;
	'') h_why=unreadable && return 1 ;;
	*) h_why=notdir && return 1 ;;
	esac
	if [ "$2" != 0 ] && [ "$2" != "$h_uid" ]; then
		h_why=owner
		return 1
	fi
	case $3 in *[2367]) h_why=writable && return 1 ;; esac
	case $3 in
	*[2367]?)
		# A team's store: its group may write. runs/ then needs the
		# sticky bit, as /tmp has: its members must not be able to swap
		# each other's scratch directories.
		if [ "$1" = "$h_store" ]; then h_gw=1; fi
		# Others may rename what is in it: a stage, or the store
		# itself (h_op_pushcheck).
		if [ "$1" = "$h_store" ] || [ "$1" = "$h_root" ]; then h_swap=1; fi
		if [ "$1" = "$h_runs" ]; then
			case $3 in [1357]???) ;; *) h_why=nosticky && return 1 ;; esac
		fi
		;;
	esac
	# Reading is needed where hoist lists: runs/ is private to each
	# command, and another login may still read the lock's status.
	if [ "$1" != "$h_runs" ] && { [ ! -r "$1" ] || [ ! -x "$1" ]; }; then
		h_why=unreadable
		return 1
	fi
}

# h_absent PATH: PATH is known not to exist: its parent is a directory the
# login can search and does not hold it, or a parent is not a directory at
# all. h_par is the directory that could not be searched when it fails.
h_absent() {
	[ ! -e "$1" ] && [ ! -L "$1" ] || return 1
	case $1 in
	*/*) h_par=${1%/*} h_par=${h_par:-/} ;;
	*) h_par=. ;;
	esac
	if [ -d "$h_par" ]; then
		[ -x "$h_par" ]
		return
	fi
	if [ -e "$h_par" ] || [ -L "$h_par" ]; then return 0; fi
	h_absent "$h_par" && return 0
	# The parent was absent a moment ago and is there now: another
	# command is making the store. Look again, now that it is.
	# (h_par keeps the directory the look above could not search.)
	h_pq=${1%/*} h_pq=${h_pq:-/}
	[ -d "$h_pq" ] && [ -x "$h_pq" ] && [ ! -e "$1" ] && [ ! -L "$1" ]
}

# h_mkstore: acquiring creates the store; only try-acquire never does.
h_mkstore() {
	[ ! -d "$h_store" ] || return 0
	h_e=$(mkdir -p "$h_store" 2>&1) && return 0
	h_say ERROR mkdir "$(h_oneline "$h_e")"
	return 1
}

# h_mkshared DIR: makes a directory of the store, writable by the store's
# group when a team shares the store (h_gw), by the login only otherwise.
h_mkshared() {
	[ ! -d "$1" ] || return 0
	(if [ -n "$h_gw" ]; then umask 002; fi && mkdir -p "$1")
}

# h_scratch: a directory of this command's own, for the marker files of the
# stdin watcher and a run's output. Private: another user of the host must
# not read what a command printed.
h_scratch() {
	h_scr=$h_runs/$hp_rid
	h_e=$(umask 077 && mkdir -p "$h_scr" 2>&1) && return 0
	h_say ERROR mkdir "$(h_oneline "$h_e")"
	h_scr=
	return 1
}
