# h_op_pushcheck: the first command of a push. A runtime already promoted
# with this digest costs this one command (and, with --activate, the switch
# under the lock in the same command). Otherwise it checks that the host has
# room for the upload and its unpacked tree, and makes the stage the upload
# goes into, outside the lock; the stage is private to the login. Under a
# manual hold (--token) the hold is checked first (h_held), so a token that
# is not this store's lock is told before anything is made or uploaded.
h_op_pushcheck() {
	h_held || return
	h_mkstore || return
	h_collides && return
	if h_present "$h_id" "$h_digest"; then
		if [ -z "$h_activate" ]; then
			h_say PRESENT "$h_id"
			return
		fi
		if [ "$(h_pointer current)" = "$h_id" ]; then
			h_say ACTIVATED "$h_id" "$h_id"
			h_say PRESENT "$h_id"
			return
		fi
		h_take || return
		# Checked again under the lock: a gc may have taken it meanwhile,
		# and then it is uploaded again like any missing runtime.
		if h_present "$h_id" "$h_digest"; then
			h_activate "$h_id" push
			h_release_end
			rm -rf "$h_scr"
			h_say PRESENT "$h_id"
			return
		fi
		h_release_end
		rm -rf "$h_scr"
	fi
	# A host that could not verify the upload is told before it is sent.
	if ! h_shaany; then
		h_nosha
		return
	fi
	# The archive and the tree unpacked from it, side by side.
	h_room "$h_store" 2 4608 || return
	h_stage=$h_store/.stage-$h_stok
	h_resume
	case $? in
	1) h_mkstage || return ;;
	2)
		h_say ERROR stage "the stage taken over to resume $h_id was not the one claimed when it was entered: someone renames entries in $h_storedir (its group may write it); nothing was written or removed: push again, and find out who if it happens again"
		return
		;;
	esac
	# From here on the stage is this command's working directory
	# (h_enter). The file the upload writes, made here where only the
	# login can reach; the files the host has; and, last, the mark by which
	# a later push of this runtime resumes the stage if this upload is cut
	# short (the promotion removes it first).
	if ! { [ -f artifact.tar ] || (umask 077 && : >artifact.tar); }; then
		h_unstage
		h_say ERROR mkdir "cannot write in the stage (disk full?)"
		return
	fi
	# Where others may rename the stage (a store a team shares), the
	# upload opens the archive by a name that may lead elsewhere by then:
	# it checks that the file it opened bears this date, which nobody else
	# can give a file of the login's, before it writes.
	h_share=private
	if [ -n "$h_swap" ]; then
		if ! TZ=UTC0 touch -m -t "$h_stamp" artifact.tar 2>/dev/null; then
			h_unstage
			h_say ERROR stage "cannot date the stage's archive with touch -t, which a store its group may write needs: install coreutils there"
			return
		fi
		h_share=shared
	fi
	h_pool
	if ! printf '%s %s %s\n' "$h_id" "$h_digest" "$h_window" >resume.t ||
		! mv -f resume.t resume; then
		h_unstage
		h_say ERROR mkdir "cannot write in the stage (disk full?)"
		return
	fi
	h_say STAGE "$h_id" "$h_share"
}

# h_pool: the files of this runtime (h_want: PoolName lines,
# "<sha256>-<mode>") that runtimes already here hold with that digest and
# mode (runtimes/.files/<id>: one "sha256 mode path" line per file) are
# copied into the stage's pool, pool/<id>/<path>: one tar pipe per runtime
# they come from where tar takes a list (-T), else a cp a file. It runs in
# the stage (h_enter). Every copy is then hashed, and
# each one whose digest matches is said with HAVE PoolName path: the
# upload carries a hard link to it instead of its bytes. A copy, never a
# link to the other runtime's file: runtimes stay independent.
h_pool() {
	[ -n "$h_want" ] && [ -d "$h_store/.files" ] || return 0
	# The lists of runtimes that are here: plain files named by an id.
	set +f
	set --
	for h_f in "$h_store"/.files/*; do
		h_i=${h_f##*/}
		h_isid "$h_i" && [ -f "$h_f" ] && [ ! -L "$h_f" ] && [ -d "$h_store/$h_i" ] && [ ! -L "$h_store/$h_i" ] &&
			set -- "$@" "$h_f"
	done
	set -f
	[ $# -gt 0 ] || return 0
	h_pd=pool
	mkdir -p "$h_pd" || return 0
	# "id<TAB>name<TAB>path" for the first holder of each file wanted,
	# paths that climb out or are absolute left out.
	printf '%s\n' "$h_want" | awk '
		FNR == NR { if ($1 != "") want[$1] = 1; next }
		{
			key = $1 "-" $2
			if (!(key in want) || (key in got)) next
			p = substr($0, length($1) + length($2) + 3)
			if (p == "" || p ~ /^\// || ("/" p "/") ~ /\/\.\.?\//) next
			got[key] = 1
			n = split(FILENAME, parts, "/")
			print parts[n] "\t" key "\t" p
		}' - "$@" >pool.map 2>/dev/null || return 0
	# Nothing wanted is here, or nothing could verify a copy.
	[ -s pool.map ] && h_shatool || return 0
	# Only the files named: a name that became a directory since it was
	# looked at is not copied whole (--no-recursion).
	if tar -cf /dev/null --no-recursion -T /dev/null 2>/dev/null; then
		h_pi=
		while IFS='	' read -r h_i _ h_pp; do
			# Only plain files: a symlink copied into the pool would
			# let a later path of the list be written through it.
			h_src=$h_store/$h_i/$h_pp
			{ [ -f "$h_src" ] && [ ! -L "$h_src" ]; } || continue
			if [ "$h_i" != "$h_pi" ]; then
				h_pi=$h_i
				: >"$h_pd/$h_i.list"
			fi
			printf './%s\n' "$h_pp" >>"$h_pd/$h_i.list"
		done <pool.map
		set +f
		for h_l in "$h_pd"/*.list; do
			[ -f "$h_l" ] || continue
			h_i=${h_l##*/}
			h_i=${h_i%.list}
			# The list is opened here, in the stage, before the cd.
			mkdir -p "$h_pd/$h_i" &&
				(cd "$h_store/$h_i" && tar -cf - --no-recursion -T - 2>/dev/null) <"$h_l" | (cd "$h_pd/$h_i" && umask 0 && tar -xof - 2>/dev/null)
			rm -f "$h_l"
		done
		set -f
	else
		# A tar without -T (busybox's): a copy a file, with the source's
		# mode and time as tar keeps them, owned by the login (cp -p
		# would keep another member's ownership when root pushes).
		h_pi=
		while IFS='	' read -r h_i _ h_pp; do
			h_pt=$h_pd/$h_i/$h_pp
			if [ "${h_pt%/*}" != "$h_pi" ]; then
				h_pi=${h_pt%/*}
				mkdir -p "$h_pi" || continue
			fi
			# Only a plain file is read: cp would block on a FIFO.
			h_src=$h_store/$h_i/$h_pp
			if [ -f "$h_src" ] && [ ! -L "$h_src" ]; then
				(umask 0 && cp "$h_src" "$h_pt" 2>/dev/null) && touch -r "$h_src" "$h_pt"
			fi
		done <pool.map
	fi
	# Every copy is checked: its mode (find -perm, a mode at a time) and its
	# digest. One that is not what its list says (or not a plain file) is
	# not used, and travels.
	awk -F '\t' '{ sub(/^.*-/, "", $2); print $2 }' pool.map | sort -u | while read -r h_m; do
		case $h_m in '' | *[!0-7]*) continue ;; esac
		find "$h_pd" -type f -perm "$h_m" | awk -v m="$h_m" '{ print m "\t" $0 }'
	done >pool.perm
	h_shafind "$h_pd" | awk -v pd="$h_pd/" '
		FILENAME == ARGV[1] { split($0, f, "\t"); want[f[1] "/" f[3]] = f[2]; next }
		FILENAME == ARGV[2] { m = $0; sub(/\t.*/, "", m); p = substr($0, length(m) + 2); mode[p] = m; next }
		{
			sum = $1; sub(/^\\/, "", sum)
			p = $0; sub(/^[^ ]* [ *]?/, "", p)
			if (substr(p, 1, length(pd)) != pd) next
			q = substr(p, length(pd) + 1)
			if (!(q in want)) next
			split(want[q], k, "-")
			if (k[1] == sum && mode[p] == k[2]) print want[q] "\t" q
		}' pool.map pool.perm - | while IFS='	' read -r h_k h_p; do
		h_say HAVE "$h_k" "$h_p"
	done
	rm -f pool.map pool.perm
}
