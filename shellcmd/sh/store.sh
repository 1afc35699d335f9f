# The runtime store: runtimes/<id> are promoted trees, runtimes/.meta/<id>
# marks one verified (written only after the tree is in place),
# runtimes/.pins/<id> keeps one alive, <root>/current and <root>/previous
# are symlinks to runtimes/<id>.

# h_owned: fencing. Every store mutation happens only while the lock's record
# still carries our token, checked in the same command that acts; a holder
# whose lock was taken over stops with LOST instead of writing over its
# successor's work.
h_owned() {
	{ IFS= read -r h_x <"$h_lock/owner"; } 2>/dev/null || return 1
	case $h_x in "hoist-lock/1 token=$h_me "*) return 0 ;; esac
	return 1
}

h_fence() {
	h_owned && return 0
	h_sample
	h_say LOST "${h_line:--}"
	return 1
}

# h_present ID: ID is promoted and verified.
h_present() { [ -d "$h_store/$1" ] && [ -f "$h_store/.meta/$1" ]; }

# h_pointer NAME: the runtime id <root>/NAME points to, or nothing.
h_pointer() {
	h_p=$(readlink "$h_root/$1" 2>/dev/null) || return 0
	case $h_p in "$h_storedir"/*) printf '%s' "${h_p#"$h_storedir"/}" ;; esac
}

# h_repoint NAME ID: points <root>/NAME at runtimes/ID by renaming a new
# symlink over the old one: there is never a moment without NAME, and never
# delete-then-create. Plain mv would move the new link INTO the directory the
# old one points to, so only a rename that refuses to follow it is used: GNU
# and busybox mv -T, BSD mv -h. A host with neither is refused.
h_repoint() {
	h_new=$h_root/.$1-$h_me
	rm -f "$h_new"
	ln -s "$h_storedir/$2" "$h_new" || return 1
	if mv -T "$h_new" "$h_root/$1" 2>/dev/null || mv -h "$h_new" "$h_root/$1" 2>/dev/null; then
		return 0
	fi
	rm -f "$h_new"
	return 1
}

# h_activate ID: under the lock, makes ID current and the old current
# previous. Says ACTIVATED ID OLD.
h_activate() {
	if ! h_present "$1"; then
		h_say NOTFOUND "$1"
		return 1
	fi
	h_old=$(h_pointer current)
	if [ "$h_old" = "$1" ]; then
		h_say ACTIVATED "$1" "${h_old:--}"
		return 0
	fi
	h_fence || return 1
	if ! h_repoint current "$1"; then
		h_say ERROR switch "cannot rename a symlink atomically on this host (no mv -T or mv -h)"
		return 1
	fi
	if [ -n "$h_old" ] && [ -d "$h_store/$h_old" ]; then
		h_repoint previous "$h_old" || h_say ERROR switch "current moved, but previous could not be recorded"
	fi
	h_say ACTIVATED "$1" "${h_old:--}"
}

# h_sha256 FILE: the file's SHA-256 in hex, by whichever tool the host has.
h_sha256() {
	{ sha256sum "$1" || shasum -a 256 "$1" || sha256 -q "$1"; } 2>/dev/null | {
		read -r h_h _
		printf '%s' "$h_h"
	}
}

# h_rmtree DIR: removes a tree that came from an artifact, whose modes may
# include read-only directories that rm -rf alone cannot empty.
h_rmtree() {
	[ -e "$1" ] || [ -L "$1" ] || return 0
	chmod -R u+w "$1" 2>/dev/null
	rm -rf "$1"
}

# h_release_say: release and report it; the command's end.
h_release_say() {
	h_release
	h_say_release $?
}
