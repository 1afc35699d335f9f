# The delta: files the host already has are reused instead of sent. The
# client lists the files of the runtime worth reusing (hp_reuse: a
# "<sha256>-<mode>" line each, the store's ReuseName, for each file of
# ReuseMin bytes or more), and every runtime promoted here lists its own
# (runtimes/.files/<id>: one "sha256 mode path" line per file, written by
# h_promote). h_reuse finds the files both name (h_reuse_map), copies them
# into the stage's pool/ (h_reuse_copy), and says each copy whose digest
# and mode it verified (h_reuse_verify: REUSED): the upload carries a hard
# link to it in place of its bytes, and the promotion moves pool/ in with
# the tree that links to it. A copy, never a link to the other runtime's
# file: runtimes stay independent. docs/store.md, "Reuse: files the host
# already has", says the whole of it.

# h_reuse: the delta, in the stage (h_enter): pool/<id>/<path> gets a copy
# of each file of this runtime (hp_reuse) that a runtime here (<id>) holds
# with the same digest and mode, and each verified copy is said with REUSED
# ReuseName path. Copies nothing when the client lists nothing, no runtime
# here lists its files, or the host cannot verify a copy (h_shatool).
h_reuse() {
	[ -n "$hp_reuse" ] && [ -d "$h_store/.files" ] || return 0
	# The pool's name in the stage, which the archive's links name.
	h_pd=pool
	h_reuse_map || return 0
	h_reuse_copy
	h_reuse_verify
	rm -f pool.map pool.perm
}

# h_reuse_map: writes pool.map, "id<TAB>ReuseName<TAB>path" for the first
# runtime here (by its list, runtimes/.files/<id>: a plain file named by an
# id, whose runtime is a directory) that holds each file listed; paths that
# climb out or are absolute are left out. Makes the pool (h_pd). Fails when
# there is nothing to copy, or nothing could verify a copy.
h_reuse_map() {
	# The lists of runtimes that are here: plain files named by an id.
	set +f
	set --
	for h_f in "$h_store"/.files/*; do
		h_i=${h_f##*/}
		h_isid "$h_i" && [ -f "$h_f" ] && [ ! -L "$h_f" ] && [ -d "$h_store/$h_i" ] && [ ! -L "$h_store/$h_i" ] &&
			set -- "$@" "$h_f"
	done
	set -f
	[ $# -gt 0 ] || return 1
	mkdir -p "$h_pd" || return 1
	printf '%s\n' "$hp_reuse" | awk '
		FNR == NR { if ($1 != "") listed[$1] = 1; next }
		{
			key = $1 "-" $2
			if (!(key in listed) || (key in got)) next
			p = substr($0, length($1) + length($2) + 3)
			if (p == "" || p ~ /^\// || ("/" p "/") ~ /\/\.\.?\//) next
			got[key] = 1
			n = split(FILENAME, parts, "/")
			print parts[n] "\t" key "\t" p
		}' - "$@" >pool.map 2>/dev/null || return 1
	# Nothing listed is here, or nothing could verify a copy.
	[ -s pool.map ] && h_shatool
}

# h_reuse_copy: copies the files pool.map names from their runtimes into
# pool/<id>/<path>, only plain files, each with its mode and time, owned by
# the login: one tar pipe per runtime where tar takes a list (-T), else a cp
# a file.
h_reuse_copy() {
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
				(cd "$h_store/$h_i" && tar -cf - --no-recursion -T - 2>/dev/null) <"$h_l" | (cd -P "$h_pd/$h_i" && umask 0 && tar -xof - 2>/dev/null)
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
}

# h_reuse_verify: says REUSED ReuseName path for each copy in the pool that
# is what pool.map says it is: a plain file of that mode and that SHA-256
# (h_shafind). One that is not is not reused, and travels.
h_reuse_verify() {
	# Its mode (find -perm, a mode at a time), then its digest.
	awk -F '\t' '{ sub(/^.*-/, "", $2); print $2 }' pool.map | sort -u | while read -r h_m; do
		case $h_m in '' | *[!0-7]*) continue ;; esac
		find "$h_pd" -type f -perm "$h_m" | awk -v m="$h_m" '{ print m "\t" $0 }'
	done >pool.perm
	h_shafind "$h_pd" | awk -v pd="$h_pd/" '
		FILENAME == ARGV[1] { split($0, f, "\t"); name[f[1] "/" f[3]] = f[2]; next }
		FILENAME == ARGV[2] { m = $0; sub(/\t.*/, "", m); p = substr($0, length(m) + 2); mode[p] = m; next }
		{
			sum = $1; sub(/^\\/, "", sum)
			p = $0; sub(/^[^ ]* [ *]?/, "", p)
			if (substr(p, 1, length(pd)) != pd) next
			q = substr(p, length(pd) + 1)
			if (!(q in name)) next
			split(name[q], k, "-")
			if (k[1] == sum && mode[p] == k[2]) print name[q] "\t" q
		}' pool.map pool.perm - | while IFS='	' read -r h_k h_p; do
		h_say REUSED "$h_k" "$h_p"
	done
}
