# h_inuse: prints the runtime ids some process uses: its executable, working
# directory, open files or mapped files lie in one (/proc/*/exe, cwd, fd,
# maps), or its command line names a path in one (ps). Paths are matched
# against the store as given and as resolved (/proc shows resolved paths).
# Fails when neither /proc nor ps yields anything: then nothing can be known
# to be unused. A login that is not root sees /proc links of its own
# processes only; other users' processes count by their command lines.
h_inuse() {
	h_seen=
	set +f
	h_pl=$({ ls -l /proc/[0-9]*/exe /proc/[0-9]*/cwd /proc/[0-9]*/fd/ && cat /proc/[0-9]*/maps; } 2>/dev/null)
	set -f
	[ -z "$h_pl" ] || h_seen=1
	h_ps=$(ps -A -o args= 2>/dev/null)
	[ -z "$h_ps" ] || h_seen=1
	[ -n "$h_seen" ] || return 1
	h_real=$(cd "$h_store" 2>/dev/null && pwd -P)
	printf '%s\n%s\n' "$h_pl" "$h_ps" | h_s=$h_store/ h_r=${h_real:+$h_real/} awk '
		BEGIN { s[1] = ENVIRON["h_s"]; s[2] = ENVIRON["h_r"] }
		{
			for (k = 1; k <= 2; k++) {
				if (s[k] == "") continue
				line = $0
				while ((i = index(line, s[k])) > 0) {
					line = substr(line, i + length(s[k]))
					id = line
					sub(/[\/ ].*/, "", id)
					# .trash-<36-character token>-<id>: a victim moved aside
					if (substr(id, 1, 7) == ".trash-") id = substr(id, 45)
					if (id != "") print id
				}
			}
		}' | sort -u
}

# h_idle PATH MINUTES: nothing in PATH was written for MINUTES. An upload in
# flight keeps writing its archive, so it is never idle. A find that cannot
# answer (no -mmin) leaves everything alone.
h_idle() {
	h_f=$(find "$1" -mmin "-$2" 2>/dev/null) || return 1
	[ -z "$h_f" ]
}

# h_op_gc: one attempt at the lock (a stale or previous-boot steal counts),
# never a wait: a busy store is skipped. Under the lock, fenced, in this one
# command: keep current, previous, pinned and in-use runtimes and the hp_keep
# newest others; move each victim aside to a unique name, check again that
# nothing wants it, then delete it; sweep what hoist left behind. Only what
# hoist provably made is ever deleted: runtimes with hoist's mark, and paths
# with hoist's names and a token in them. Anything else in the store is
# reported (KEEP unmarked name) and left alone. With hp_dry the plan is said
# and nothing changes.
h_op_gc() {
	if [ ! -d "$h_store" ]; then
		h_say NOSTORE
		return
	fi
	hp_wait=0
	h_take || return
	if ! h_used=$(h_inuse); then
		h_say NOPROC
		h_release_end
		rm -rf "$h_scr"
		return
	fi
	h_cur=$(h_pointer current) h_prev=$(h_pointer previous)
	h_gc_collect
	h_kept=0 h_victims=
	h_ifs=$IFS
	IFS='
'
	for h_l in $h_all; do
		h_i=${h_l#* }
		h_why=
		if [ "$h_i" = "$h_cur" ]; then h_why=current
		elif [ "$h_i" = "$h_prev" ]; then h_why=previous
		elif [ -e "$h_store/.pins/$h_i" ]; then h_why=pinned
		elif h_listed "$h_i" "$h_used"; then h_why=in-use
		elif h_journaled "$h_i"; then h_why=rollout
		# A --keep of ten digits or more keeps them all: it passes the
		# 32 bits some shells count in (mksh), where it would wrap.
		elif [ "${#hp_keep}" -gt 9 ] || [ "$h_kept" -lt "$hp_keep" ]; then
			h_kept=$((h_kept + 1))
			h_why=newest
		fi
		if [ -n "$h_why" ]; then
			h_say KEEP "$h_why" "$h_i"
		else
			h_victims="$h_victims$h_i
"
		fi
	done
	IFS=$h_ifs
	h_gc_unmarked
	h_gc_delete
	h_gc_sweep
	h_gc_records
	h_release_end
	rm -rf "$h_scr"
}

# h_gc_collect: h_all, the marked runtimes newest first (h_byorder);
# h_stages, leftovers with hoist's names. A mark whose runtime is missing
# (a promotion cut short before its rename) is a leftover too.
h_gc_collect() {
	h_byorder
	set +f
	h_stages=$(for h_d in "$h_store"/.stage-* "$h_store"/.trash-* "$h_lock".* "$h_runs"/*; do
		h_n=${h_d##*/}
		case $h_n in
		.stage-*) h_isuuid "${h_n#.stage-}" ;;
		.trash-*) h_istrash "$h_n" ;;
		"$hp_lockname".new-* | "$hp_lockname".stolen-* | "$hp_lockname".released-* | "$hp_lockname".broken-*) h_isuuid "${h_n#"$hp_lockname".*-}" ;;
		*) [ "${h_d%/*}" = "$h_runs" ] && [ "$h_n" != "$hp_rid" ] && h_isuuid "$h_n" && h_isscratch "$h_d" ;;
		esac || continue
		{ [ -e "$h_d" ] || [ -L "$h_d" ]; } && printf '%s\n' "$h_d"
	done)
	h_stages="$h_stages
$(for h_mf in "$h_store"/.meta/* "$h_store"/.files/*; do
		h_i=${h_mf##*/}
		[ -f "$h_mf" ] && h_isid "$h_i" && [ ! -e "$h_store/$h_i" ] && [ ! -L "$h_store/$h_i" ] && printf '%s\n' "$h_mf"
	done)"
	set -f
}

# h_gc_unmarked: says KEEP unmarked for each entry of the store that is not
# a runtime with hoist's mark: gc never deletes it. Its name may hold
# anything, spaces and line breaks too: each is said as it is found
# (h_pct), never through a list split on words or lines.
h_gc_unmarked() {
	set +f
	for h_d in "$h_store"/*; do
		set -f
		h_i=${h_d##*/}
		{ [ -e "$h_d" ] || [ -L "$h_d" ]; } || continue
		if ! { h_isid "$h_i" && [ -f "$h_store/.meta/$h_i" ]; }; then
			h_say KEEP unmarked "$(h_pct "$h_i")"
		fi
	done
	set -f
}

# h_isscratch DIR: DIR holds nothing but what a command's scratch directory
# holds (h_take, h_run, h_watch), so hoist made it: a directory of the same
# kind of name that someone else keeps in a runs/ of theirs is not swept.
h_isscratch() {
	[ -d "$1" ] && [ ! -L "$1" ] || return 1
	set +f
	for h_sf in "$1"/* "$1"/.[!.]* "$1"/..?*; do
		[ -e "$h_sf" ] || [ -L "$h_sf" ] || continue
		case ${h_sf##*/} in
		out | err | out.t | err.t | info | pgid | guard | cut | cut.t | status | status.t | stop | ack | gone | ready | done | lost | leaselost | kill | kill.guard) ;;
		*) return 1 ;;
		esac
	done
}

# h_istrash NAME: NAME is .trash-<token>-<id>, a victim gc moved aside, or
# .trash-<token>-stage-<token>, a stage it is sweeping (h_gc_sweep).
h_istrash() {
	h_u=${1#.trash-}
	h_r=${h_u#????????????????????????????????????}
	h_u=${h_u%"$h_r"}
	case $h_r in -?*) h_isuuid "$h_u" ;; *) return 1 ;; esac
}

# h_listed WORD LIST: WORD is a line of LIST.
h_listed() {
	case "
$2
" in *"
$1
"*) return 0 ;; esac
	return 1
}

h_gc_delete() {
	[ -n "$h_victims" ] || return 0
	h_ifs=$IFS
	IFS='
'
	if [ -n "$hp_dry" ]; then
		for h_i in $h_victims; do h_say DELETE "$h_i" plan; done
		IFS=$h_ifs
		return 0
	fi
	h_fence || {
		IFS=$h_ifs
		return 1
	}
	h_moved=
	for h_i in $h_victims; do
		if mv "$h_store/$h_i" "$h_store/.trash-$hp_rid-$h_i" 2>/dev/null; then
			h_moved="$h_moved$h_i
"
		fi
	done
	# Check again, now that the victims are out of reach under new names: a
	# process that started using one meanwhile, or a pointer to one, puts it
	# back.
	h_used=$(h_inuse) || h_used=$h_moved
	h_cur=$(h_pointer current) h_prev=$(h_pointer previous)
	for h_i in $h_moved; do
		if h_listed "$h_i" "$h_used" || [ "$h_i" = "$h_cur" ] || [ "$h_i" = "$h_prev" ] || [ -e "$h_store/.pins/$h_i" ]; then
			# Put back only onto an absent name: mv would move it into an
			# existing directory.
			if [ ! -e "$h_store/$h_i" ] && [ ! -L "$h_store/$h_i" ] && mv "$h_store/.trash-$hp_rid-$h_i" "$h_store/$h_i"; then
				h_say KEEP in-use "$h_i"
			else
				h_say ERROR gc "could not put $h_i back; it is in $hp_storedir/.trash-$hp_rid-$h_i"
			fi
		else
			rm -f "$h_store/.meta/$h_i" "$h_store/.files/$h_i" "$h_store/.bad/$h_i"
			if h_rmtree "$h_store/.trash-$hp_rid-$h_i"; then
				h_say DELETE "$h_i" 'done'
			else
				h_say DELETE "$h_i" failed
			fi
		fi
	done
	IFS=$h_ifs
}

# h_gc_sweep: removes leftovers nothing has written to for the stale period
# (a run's record: for hp_keepruns, a week unless told), by the full paths h_gc_collect
# found. A command waiting for the lock touches its scratch directory every
# minute, and a promotion waiting for the lock its stage too.
h_gc_sweep() {
	h_ifs=$IFS
	IFS='
'
	for h_d in $h_stages; do
		h_n=${h_d##*/}
		case $h_n in .trash-"$hp_rid"-*) continue ;; esac
		h_min=$(((hp_stale + 59) / 60))
		if [ "${h_d%/*}" = "$h_runs" ]; then
			if [ -f "$h_d/info" ]; then
				h_min=$(((hp_keepruns + 59) / 60))
				# A run without its end may still be running (its
				# guardian touches it every minute): never sooner than
				# the stale period.
				if [ ! -f "$h_d/status" ] && [ "$h_min" -lt $(((hp_stale + 59) / 60)) ]; then
					h_min=$(((hp_stale + 59) / 60))
				fi
			elif [ -f "$h_d/status" ]; then
				# An earlier version's kept output: a day.
				h_min=1440
			fi
		fi
		h_n=${h_d#"$h_root"/}
		# A run's record an hour after it ended: its output is cut to
		# its last 64 KiB (before the idle test, which the cut does not
		# disturb: it looks at the directory's files).
		if [ -z "$hp_dry" ] && [ "${h_d%/*}" = "$h_runs" ] && [ -f "$h_d/info" ] && [ -f "$h_d/status" ] &&
			[ ! -f "$h_d/cut" ] && h_idle "$h_d" 60; then
			h_trim "$h_d"
		fi
		if h_idle "$h_d" "$h_min"; then
			if [ -n "$hp_dry" ]; then
				h_say SWEEP "$h_n" plan
			elif h_owned; then
				h_sw=$h_d
				case ${h_d##*/} in
				.stage-*)
					# A stage that quiet is one a push of its runtime
					# may take over to resume (h_resume) meanwhile: it
					# is renamed to this gc's trash first, which only
					# one of them can do, and removed there.
					h_sw=$h_store/.trash-$hp_rid-${h_d##*/.}
					mv "$h_d" "$h_sw" 2>/dev/null || continue
					;;
				esac
				h_rmtree "$h_sw" && h_say SWEEP "$h_n" 'done'
			fi
		elif [ "${h_d%/*}" != "$h_runs" ] || [ ! -f "$h_d/info" ]; then
			# A run's record is kept for a week: not worth a line.
			h_say KEEP fresh "$h_n"
		fi
	done
	IFS=$h_ifs
}
