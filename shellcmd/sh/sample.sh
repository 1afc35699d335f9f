# h_sample: reads the lock as it is now, with builtins only (a glob and a
# read), and sets h_kind:
#   free       no lock path
#   held       a token directory with its record: h_tok, h_line
#   legacy     an earlier version's lock with its "owner" record: h_line
#   ownerless  an earlier version's lock without a record
#   dead       token directories without a record, or creators' directories
#              that landed inside: nobody holds it
#   bad        a symlink or a file at the lock path, or an entry hoist does
#              not make inside it: never touched. h_odd names the path,
#              h_oddwhy says what it is (symlink, file, foreign)
# h_rp is the path whose age is the lock's, and h_r_* the record's fields
# (h_parse). A record that cannot be read leaves them empty: evidence of
# nothing.
h_sample() {
	h_kind= h_tok= h_line= h_rp= h_odd= h_oddwhy= h_old=
	h_parse_clear
	if [ -L "$h_lock" ]; then
		h_kind=bad h_odd=$h_lock h_oddwhy=symlink
		return
	fi
	if h_nondir "$h_lock"; then
		h_kind=bad h_odd=$h_lock h_oddwhy=file
		return
	fi
	if [ ! -d "$h_lock" ]; then
		h_kind=free
		return
	fi
	h_dead=
	set +f
	for h_e in "$h_lock"/* "$h_lock"/.[!.]* "$h_lock"/..?*; do
		[ -e "$h_e" ] || [ -L "$h_e" ] || continue
		h_n=${h_e##*/}
		case $h_n in
		owner) h_old=1 ;;
		.owner-*) ;;
		# A creator's directory that landed inside (h_create): nobody
		# holds it, and the next clear removes it.
		"$hp_lockname".new-*) h_dead=1 ;;
		*[!0-9a-f-]*) h_odd=$h_e h_oddwhy=foreign ;;
		*)
			# An entry that vanished since the glob (a release or a
			# steal clearing its lock) is no evidence of anything.
			if [ -L "$h_e" ]; then
				h_odd=$h_e h_oddwhy=foreign
			elif [ -d "$h_e" ]; then
				if [ -f "$h_e/rec" ]; then h_tok=$h_n; else h_dead=1; fi
			elif h_nondir "$h_e"; then
				h_odd=$h_e h_oddwhy=foreign
			fi
			;;
		esac
	done
	set -f
	if [ -n "$h_odd" ]; then
		h_kind=bad
	elif [ -n "$h_tok" ]; then
		h_kind=held h_rp=$h_lock/$h_tok/rec
		{ IFS= read -r h_line <"$h_rp"; } 2>/dev/null
		# A record moved out since the glob: the lock is dead now.
		if [ -z "$h_line" ] && [ ! -f "$h_rp" ]; then
			h_kind=dead h_tok= h_rp=
			return
		fi
		h_parse
		# A record must name the token whose path it is in.
		if [ "$h_r_tok" != "$h_tok" ]; then h_parse_clear; fi
	elif [ -n "$h_old" ]; then
		h_kind=legacy h_rp=$h_lock
		{ IFS= read -r h_line <"$h_lock/owner"; } 2>/dev/null
		h_parse
		h_tok=$h_r_tok
	elif [ -n "$h_dead" ]; then
		h_kind=dead
	elif [ ! -d "$h_lock" ]; then
		h_kind=free
	else
		h_kind=ownerless h_rp=$h_lock
	fi
}

# h_settled: h_sample, for a command that looks once (status, break): a
# lock without a record is sampled again a poll later, since a release or a
# steal leaves one for an instant between its two removals, and a glob of
# one lock followed by the look at the next can read as one too (h_acquire
# waits for two such polls running, h_ol).
h_settled() {
	h_sample
	[ "$h_kind" = ownerless ] || return 0
	sleep "$h_nap"
	h_sample
}

# h_nondir PATH: PATH was, at one look, a file of a kind other than a
# directory (regular, fifo, socket, device; a symlink to one too). Each test
# is one stat, true only of what was there at that instant; two tests
# ("exists", then "not a directory") can straddle a directory's removal, as
# every release and steal makes, and would call it a file.
h_nondir() {
	[ -f "$1" ] || [ -p "$1" ] || [ -S "$1" ] || [ -c "$1" ] || [ -b "$1" ]
}

# h_parse: the fields of the record in h_line. An earlier version's record
# (hoist-lock/1) gives its token only: its boot evidence is not precise
# enough for the boot rule. A field with a character that does not belong
# there makes the whole record unreadable. A lease outside 2 s to 115 days
# is none (the default applies).
h_parse() {
	case $h_line in
	"hoist-lock/1 token="*)
		h_x=${h_line#hoist-lock/1 token=}
		h_r_tok=${h_x%% *}
		;;
	"hoist-lock/2 "*)
		h_ifs=$IFS
		IFS=' '
		for h_f in $h_line; do
			case $h_f in
			token=*) h_r_tok=${h_f#*=} ;;
			mach=*) h_r_mach=${h_f#*=} ;;
			boot=*) h_r_boot=${h_f#*=} ;;
			pidns=*) h_r_ns=${h_f#*=} ;;
			init=*) h_r_init=${h_f#*=} ;;
			lease=*) h_r_lease=${h_f#*=} ;;
			hpid=*) h_r_hpid=${h_f#*=} ;;
			hstart=*) h_r_hst=${h_f#*=} ;;
			huid=*) h_r_huid=${h_f#*=} ;;
			esac
		done
		IFS=$h_ifs
		;;
	esac
	case $h_r_tok:$h_r_mach:$h_r_boot:$h_r_ns:$h_r_init:$h_r_lease:$h_r_hpid:$h_r_hst:$h_r_huid in
	*[!0-9A-Za-z.:_-]*) h_parse_clear ;;
	esac
	case $h_r_tok in *[!0-9a-f-]*) h_r_tok= ;; esac
	# "-" is a fact the writer could not read.
	[ "$h_r_mach" != - ] || h_r_mach=
	[ "$h_r_boot" != - ] || h_r_boot=
	[ "$h_r_ns" != - ] || h_r_ns=
	[ "$h_r_init" != - ] || h_r_init=
	case $h_r_lease in *[!0-9]* | ?????????* | [01] | 0*) h_r_lease= ;; esac
	[ -z "$h_r_lease" ] || [ "$h_r_lease" -le 9999999 ] || h_r_lease=
	case $h_r_hpid in *[!0-9]* | 0*) h_r_hpid= ;; esac
	case $h_r_hst in *[!0-9]*) h_r_hst= ;; esac
	case $h_r_huid in *[!0-9]*) h_r_huid= ;; esac
}

# h_parse_clear: no record fields: evidence of nothing.
h_parse_clear() {
	h_r_tok= h_r_mach= h_r_boot= h_r_ns= h_r_init= h_r_lease= h_r_hpid= h_r_hst= h_r_huid=
}

# h_clear: removes a lock nobody holds: an earlier version's temporary
# records, creators' directories that landed inside (their records are not
# the lock's: a lock's record is <lock>/<token>/rec), the token directories
# that have no record, then the directory. rmdir removes only empty
# directories, so this can never remove a lock that holds a record: if a
# creator published a new lock meanwhile, it stays.
h_clear() {
	h_step clear.judged
	set +f
	for h_e in "$h_lock"/.owner-*; do
		if [ -f "$h_e" ]; then rm -f "$h_e"; fi
	done
	for h_e in "$h_lock"/"$hp_lockname".new-*; do
		if [ -e "$h_e" ] || [ -L "$h_e" ]; then rm -rf "$h_e"; fi
	done
	rmdir "$h_lock"/* "$h_lock" 2>/dev/null
	set -f
	return 0
}
