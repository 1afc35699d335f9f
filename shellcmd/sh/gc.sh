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

# h_stage_idle STAGE: nothing in STAGE was written for the stale period. An
# upload in flight keeps writing its archive, so it is never idle.
# A find that cannot answer (no -mmin) leaves the stage alone.
h_stage_idle() {
	h_f=$(find "$1" -mmin "-$(((h_stale + 59) / 60))" 2>/dev/null) || return 1
	[ -z "$h_f" ]
}

# h_op_gc: one attempt at the lock (a stale or previous-boot steal counts),
# never a wait: a busy store is skipped. Under the lock, fenced, in this one
# command: keep current, previous, pinned and in-use runtimes and the h_keep
# newest others; move each victim aside to a unique name, check again that
# nothing wants it, then delete it; sweep idle stages and leftovers. With
# h_dry the plan is said and nothing changes.
h_op_gc() {
	if [ ! -d "$h_store" ]; then
		h_say NOSTORE
		return
	fi
	h_acquire 0
	case $? in
	0) ;;
	*) return ;;
	esac
	h_say ACQUIRED "$h_me"
	if ! h_used=$(h_inuse); then
		h_say NOPROC
		h_release_say
		return
	fi
	h_cur=$(h_pointer current) h_prev=$(h_pointer previous)
	# Candidates, newest first: promoted time, then id.
	set +f
	h_all=$(for h_mf in "$h_store"/.meta/*; do
		[ -f "$h_mf" ] || continue
		h_i=${h_mf##*/}
		h_w=$(sed -n 's/^promoted=//p' "$h_mf")
		printf '%s %s\n' "${h_w:-0}" "$h_i"
	done | sort -rn)
	h_unmarked=$(for h_d in "$h_store"/*; do
		[ -d "$h_d" ] && [ ! -f "$h_store/.meta/${h_d##*/}" ] && printf '%s\n' "${h_d##*/}"
	done)
	h_stages=$(for h_d in "$h_store"/.stage-* "$h_store"/.trash-* "$h_lock".stolen-* "$h_lock".released-* "$h_lock".broken-*; do
		[ -d "$h_d" ] && printf '%s\n' "${h_d##*/}"
	done)
	set -f
	h_n=0 h_victims=
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
		elif [ "$h_n" -lt "$h_keep" ]; then
			h_n=$((h_n + 1))
			h_why=newest
		fi
		if [ -n "$h_why" ]; then
			h_say KEEP "$h_i" "$h_why"
		else
			h_victims="$h_victims$h_i
"
		fi
	done
	# A tree without its verified mark and not in use is a promotion cut
	# short; it goes too.
	for h_i in $h_unmarked; do
		if h_listed "$h_i" "$h_used" || [ "$h_i" = "$h_cur" ] || [ "$h_i" = "$h_prev" ]; then
			h_say KEEP "$h_i" in-use
		else
			h_victims="$h_victims$h_i
"
		fi
	done
	IFS=$h_ifs
	h_gc_delete
	h_gc_sweep
	h_release_say
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
	if [ -n "$h_dry" ]; then
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
		if mv "$h_store/$h_i" "$h_store/.trash-$h_me-$h_i" 2>/dev/null; then
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
			if [ ! -e "$h_store/$h_i" ] && [ ! -L "$h_store/$h_i" ] && mv "$h_store/.trash-$h_me-$h_i" "$h_store/$h_i"; then
				h_say KEEP "$h_i" in-use
			else
				h_say ERROR gc "could not put $h_i back; it is in $h_storedir/.trash-$h_me-$h_i"
			fi
		else
			rm -f "$h_store/.meta/$h_i"
			if h_rmtree "$h_store/.trash-$h_me-$h_i"; then
				h_say DELETE "$h_i" done
			else
				h_say DELETE "$h_i" failed
			fi
		fi
	done
	IFS=$h_ifs
}

h_gc_sweep() {
	h_ifs=$IFS
	IFS='
'
	for h_d in $h_stages; do
		case $h_d in .trash-"$h_me"-*) continue ;; esac
		# A promotion waiting for the lock writes nothing to its stage,
		# but keeps its scratch directory (same token) fresh.
		h_stok=${h_d#.stage-}
		if [ "$h_stok" != "$h_d" ] && [ -d "$h_root/$h_runsdir/$h_stok" ] && ! h_stage_idle "$h_root/$h_runsdir/$h_stok"; then
			h_say KEEP "$h_d" waiting
			continue
		fi
		if h_stage_idle "$h_store/$h_d"; then
			if [ -n "$h_dry" ]; then
				h_say SWEEP "$h_d" plan
			elif h_owned; then
				h_rmtree "$h_store/$h_d" && h_say SWEEP "$h_d" done
			fi
		else
			h_say KEEP "$h_d" fresh
		fi
	done
	IFS=$h_ifs
}
