# h_inuse: prints the runtime ids some process uses: its executable or
# working directory lies in one (/proc/*/exe, /proc/*/cwd), or its command
# line names a path in one (ps). Fails when neither /proc nor ps can be read:
# then nothing can be known to be unused.
h_inuse() {
	h_seen=
	set +f
	h_pl=$(ls -l /proc/[0-9]*/exe /proc/[0-9]*/cwd 2>/dev/null) && [ -n "$h_pl" ] && h_seen=1
	set -f
	h_ps=$(ps -A -o args= 2>/dev/null) && [ -n "$h_ps" ] && h_seen=1
	[ -n "$h_seen" ] || return 1
	printf '%s\n%s\n' "$h_pl" "$h_ps" | h_s=$h_store/ awk '
		BEGIN { s = ENVIRON["h_s"] }
		{
			line = $0
			while ((i = index(line, s)) > 0) {
				line = substr(line, i + length(s))
				id = line
				sub(/[\/ ].*/, "", id)
				# .trash-<36-character token>-<id>: a victim moved aside
				if (substr(id, 1, 7) == ".trash-") id = substr(id, 45)
				if (id != "") print id
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
			mv "$h_store/.trash-$h_me-$h_i" "$h_store/$h_i"
			h_say KEEP "$h_i" in-use
		else
			rm -f "$h_store/.meta/$h_i"
			rm -rf "$h_store/.trash-$h_me-$h_i"
			h_say DELETE "$h_i" done
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
		if h_stage_idle "$h_store/$h_d"; then
			if [ -n "$h_dry" ]; then
				h_say SWEEP "$h_d" plan
			elif h_owned; then
				rm -rf "$h_store/$h_d" && h_say SWEEP "$h_d" done
			fi
		else
			h_say KEEP "$h_d" fresh
		fi
	done
	IFS=$h_ifs
}
