# The doctor (hoist doctor): a look at what hoist needs on the host, one
# "CHECK name status value detail" line per item (status ok, warn or fail;
# value one word for scripts; detail the rest of the line, for people), the
# lock as status says it (NOSTORE, FREE, LOCK, DEBRIS), and DOCTOR at the
# end.
#
# It changes nothing: no store, no lock, no scratch directory, no temporary
# file. The tools are probed with read-only commands, and the option probes
# of mv and touch name paths under /dev/null, which cannot exist. It runs
# without h_setup, which stops a command on a store that fails its checks:
# h_dr_store sets the paths h_setup sets, and reports the checks of h_paths
# instead of stopping on them. The checks of the tools are in
# doctor-tools.sh.

h_op_doctor() {
	h_procown
	h_dr_login
	h_dr_sh
	h_dr_userland
	h_dr_tools
	h_dr_boot
	h_dr_proc
	h_dr_store
	h_say DOCTOR
}

# h_dr_check NAME STATUS VALUE DETAIL: one item. VALUE is one word: spaces
# and odd characters become "_"; DETAIL is made one line.
h_dr_check() {
	h_drv=${3:--}
	case $h_drv in
	*[!A-Za-z0-9._+:/=@%-]*) h_drv=$(printf '%s' "$h_drv" | tr -c 'A-Za-z0-9._+:/=@%-' '_') ;;
	esac
	h_say CHECK "$1" "$2" "$h_drv" "$(h_oneline "${4:--}")"
}

# h_dr_login: the login shell: the passwd entry's (getent, else
# /etc/passwd) and $SHELL, which sshd sets from it.
h_dr_login() {
	h_drp=
	h_dru=$(id -un 2>/dev/null) || h_dru=
	if [ -n "$h_dru" ]; then
		h_drp=$(getent passwd "$h_dru" 2>/dev/null) || h_drp=
		if [ -z "$h_drp" ] && [ -r /etc/passwd ]; then
			while IFS= read -r h_drl; do
				case $h_drl in "$h_dru":*)
					h_drp=$h_drl
					break
					;;
				esac
			done </etc/passwd
		fi
	fi
	if [ -n "$h_drp" ]; then
		# The shell is the last field; an empty one means /bin/sh.
		h_drp=${h_drp##*:}
		h_drp=${h_drp:-/bin/sh}
	fi
	h_drx=${h_drp:-${SHELL:-}}
	if [ -z "$h_drx" ]; then
		h_dr_check login warn - "the login shell cannot be told: no passwd entry for ${h_dru:-this uid}, and SHELL is not set"
		return
	fi
	h_dr_check login ok "${h_drx##*/}" "${h_drx##*/}: passwd ${h_drp:--}, SHELL ${SHELL:--}"
}

# h_dr_sh: the /bin/sh every fragment runs under (this shell): told by its
# variables, by what /bin/sh --help prints (busybox names itself), then by
# the file /bin/sh resolves to.
h_dr_sh() {
	h_drv= h_drd=
	if [ -n "${BASH_VERSION:-}" ]; then
		h_drv=bash h_drd=$BASH_VERSION
	elif [ -n "${ZSH_VERSION:-}" ]; then
		h_drv=zsh h_drd=$ZSH_VERSION
	elif [ -n "${YASH_VERSION:-}" ]; then
		h_drv=yash h_drd=$YASH_VERSION
	elif [ -n "${KSH_VERSION:-}" ]; then
		case $KSH_VERSION in
		*MIRBSD*) h_drv=mksh ;;
		*"PD KSH"*) h_drv=pdksh ;;
		*) h_drv=ksh93 ;;
		esac
		h_drd=$KSH_VERSION
	elif [ -n "${POSH_VERSION:-}" ]; then
		h_drv=posh h_drd=$POSH_VERSION
	else
		h_drx=$(/bin/sh --help </dev/null 2>&1 | head -n 1)
		case $h_drx in *BusyBox*) h_drv=busybox h_drd=$h_drx ;; esac
	fi
	h_drt=$(readlink -f /bin/sh 2>/dev/null) || h_drt=
	if [ -z "$h_drv" ]; then
		case ${h_drt##*/} in
		'') h_drv=unknown ;;
		dash*) h_drv=dash ;;
		*) h_drv=${h_drt##*/} ;;
		esac
	fi
	h_drd="$h_drv: ${h_drd:+$h_drd; }/bin/sh is ${h_drt:-?}"
	case $h_drv in
	dash | bash | busybox | mksh) h_dr_check sh ok "$h_drv" "$h_drd" ;;
	*) h_dr_check sh warn "$h_drv" "$h_drd: not one of the shells hoist is tested under" ;;
	esac
}

# h_dr_userland: whose ls, stat, mv...: GNU coreutils, toybox, busybox or
# BSD.
h_dr_userland() {
	# shellcheck disable=SC2012 # ls names itself here, it lists nothing
	h_drx=$(LC_ALL=C ls --version 2>/dev/null | head -n 1)
	case $h_drx in
	*coreutils*)
		h_dr_check userland ok gnu "GNU coreutils: $h_drx"
		return
		;;
	*toybox*)
		h_dr_check userland ok toybox "toybox: $h_drx"
		return
		;;
	esac
	# shellcheck disable=SC2012 # ls names itself here, it lists nothing
	h_drx=$(LC_ALL=C ls --help 2>&1 | head -n 1)
	case $h_drx in *BusyBox*)
		h_dr_check userland ok busybox "busybox: $h_drx"
		return
		;;
	esac
	h_drx=$(uname -sr 2>/dev/null)
	if [ "$h_stat" = bsd ]; then
		h_dr_check userland ok bsd "BSD: $h_drx"
	else
		h_dr_check userland warn unknown "ls is neither GNU coreutils', busybox's nor BSD's (${h_drx:-unknown system})"
	fi
}

# h_dr_boot: the boot evidence of the previous-boot rule (facts.sh).
h_dr_boot() {
	h_drx="machine-id ${h_mach%%:*}, host ${h_mach#*:}"
	[ "$h_mach" != - ] || h_drx="machine-id unreadable (/etc/machine-id)"
	h_drx="$h_drx, boot_id $h_bootid"
	[ "$h_bootid" != - ] || h_drx="$h_drx (unreadable: /proc/sys/kernel/random/boot_id)"
	if [ "$h_mach" != - ] && [ "$h_bootid" != - ]; then
		h_dr_check boot ok yes "$h_drx"
	else
		h_dr_check boot warn no "$h_drx: a lock left by a previous boot is freed only when its lease runs out"
	fi
}

# h_dr_proc: /proc is this login's own (its /proc/self is this shell,
# h_procown), and its PID namespace can be read: the exited rule and the
# previous-boot rule within a boot need both.
h_dr_proc() {
	if [ "$h_pidns" != - ] && h_procown; then
		h_dr_check proc ok "$h_pidns" "/proc/self is this shell; PID namespace $h_pidns, its PID 1 started at tick $h_init"
	elif [ ! -d /proc/self ]; then
		h_dr_check proc warn - "no /proc: hoist cannot tell that a lock's holder has exited, so its lock is freed only when its lease runs out"
	elif h_procown; then
		h_dr_check proc warn - "/proc/self is this shell, but its PID namespace cannot be read (readlink /proc/self/ns/pid)"
	else
		h_dr_check proc warn - "/proc belongs to another PID namespace (/proc/self is not this shell): hoist follows a run's command by wait and kill -0 there, and frees a lock whose holder was killed when its lease runs out"
	fi
}

# h_dr_store: the root as h_setup resolves it, its owner and mode, the
# checks of h_paths (captured, not said: they would end the command), the
# free space where the store is or would be, and the lock.
h_dr_store() {
	if [ -n "$hp_rooth" ]; then
		if [ -z "$HOME" ]; then
			h_dr_check root fail nohome "HOME is not set, so ~/$hp_rootp cannot be resolved"
			return
		fi
		h_root=$HOME${hp_rootp:+/$hp_rootp}
	else
		h_root=$hp_rootp
	fi
	h_store=$h_root/$hp_storedir h_lock=$h_root/$hp_storedir/$hp_lockname h_runs=$h_root/$hp_runsdir
	# The nearest directory that exists, at or above the root, and what
	# is in the way of creating the root, if anything.
	h_dra=$h_root h_drb=
	while [ ! -d "$h_dra" ] || [ -L "$h_dra" ]; do
		if [ -e "$h_dra" ] || [ -L "$h_dra" ]; then h_drb=$h_dra; fi
		case $h_dra in
		*/*) h_dra=${h_dra%/*} h_dra=${h_dra:-/} ;;
		*) h_dra=. ;;
		esac
		[ "$h_dra" != . ] || break
	done
	h_drf=
	if [ -e "$h_root" ] || [ -L "$h_root" ]; then
		h_dr_ls "$h_root"
		h_dr_check root ok present "$h_root: $h_drx"
	elif ! h_absent "$h_root"; then
		h_dr_check root fail unsearchable "$h_root cannot be looked at: $h_par cannot be searched by $(id -un 2>/dev/null)"
		h_drf=1
	elif [ -n "$h_drb" ]; then
		h_dr_check root fail notdir "$h_root cannot be created: $h_drb is not a directory"
		h_drf=1
	elif [ ! -w "$h_dra" ] || [ ! -x "$h_dra" ]; then
		h_dr_ls "$h_dra"
		h_dr_check root fail unwritable "$h_root does not exist and cannot be created: $h_dra ($h_drx) is not writable by $(id -un 2>/dev/null)"
		h_drf=1
	else
		h_dr_check root ok absent "$h_root does not exist yet; the first push or lock acquire creates it"
	fi

	if h_drx=$(h_paths); then
		h_dr_check paths ok ok "the root and the store's directories that exist pass hoist's checks: real directories, owned by the login or root, not writable by others"
	else
		case $h_drx in
		*"$h_marker ERROR path "*)
			h_drx=${h_drx#*"$h_marker ERROR path "}
			h_dr_check paths fail "${h_drx%% *}" "$h_drx"
			;;
		*) h_dr_check paths fail unknown "unknown: the path checks failed without saying why" ;;
		esac
		h_drf=1
	fi

	h_drx=$(df -Pk "$h_dra" 2>/dev/null | {
		read -r _
		read -r _ _ _ h_av _ h_mnt
		printf '%s %s' "$h_av" "$h_mnt"
	})
	h_drk=${h_drx%% *}
	case $h_drk in
	'' | *[!0-9]*) h_dr_check space warn - "df -Pk cannot tell the free space at $h_dra" ;;
	*)
		# Over 2 TiB free, the KiB pass the 32 bits some shells count in
		# (mksh): awk divides, and the limits (7 digits at most) are
		# compared only with numbers of at most 7 digits.
		h_drx="$(awk -v k="$h_drk" 'BEGIN { printf "%.0f", int(k / 1024) }') MiB free at $h_dra (filesystem mounted on ${h_drx#* })"
		if [ "${#h_drk}" -le 7 ] && [ "$h_drk" -lt 65536 ]; then
			h_dr_check space fail "$h_drk" "$h_drx: too little to install anything"
		elif [ "${#h_drk}" -le 7 ] && [ "$h_drk" -lt 1048576 ]; then
			h_dr_check space warn "$h_drk" "$h_drx: less than 1 GiB"
		else
			h_dr_check space ok "$h_drk" "$h_drx"
		fi
		;;
	esac

	if [ -n "$h_drf" ]; then
		h_dr_check lock warn - "not read: the store's paths fail their checks"
		return
	fi
	# The lock as lock status reads it (a bad lock path is its ERROR
	# lockpath, which the client turns into a failed check).
	h_op_status
}

# h_dr_ls PATH: sets h_drx to PATH's mode, owner (and uid) and group, as ls
# shows them.
h_dr_ls() {
	h_drx=$(ls -ld "$1" 2>/dev/null) h_dry=$(ls -ldn "$1" 2>/dev/null)
	h_ifs=$IFS
	IFS=' '
	# shellcheck disable=SC2086 # the fields of ls -l, split on purpose
	set -- $h_dry
	h_dry=${3:-?}
	# shellcheck disable=SC2086 # the fields of ls -l, split on purpose
	set -- $h_drx
	IFS=$h_ifs
	h_drx="${1:-?} owner ${3:-?} (uid $h_dry), group ${4:-?}"
}
