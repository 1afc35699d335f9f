# A push's stage, runtimes/.stage-<token>: where its upload goes, outside
# the lock, private to the login, and owned by one push at a time. A push
# makes it (h_mkstage) or takes over one an earlier push of the runtime left
# cut short (h_resume); every later command enters it (h_instage) and works
# inside by relative paths, claims it before it changes it (h_claim), and
# removes it from inside (h_unstage). After a failed upload the client keeps
# it for a resume (h_op_keepstage) or drops it (h_op_dropstage). The files
# the host already has are reused in its pool/ (reuse.sh); the promotion
# unpacks it (promote.sh). docs/protocol.md, "A push's stage", says why each
# step is as it is.

# h_enter: makes the stage (h_stage) this command's working directory, when it
# is, as it is entered, the entry of that name in the store (not a directory
# elsewhere that a symlink put at the name leads to: test -ef compares device
# and inode, in the shell), a directory the login owns and nobody else may
# enter or change (mode 700, no ACL, read as h_paths reads its directories:
# h_lsmode; h_sm is what ls said). The setgid bit is allowed (2700): a store a
# team shares is setgid (docs/protocol.md), and a directory made in it
# inherits the bit, which opens it to nobody; only the owner (the login) or
# root can give it to a directory of the login's. Every stage operation after
# it uses relative paths: in a store a team shares, a member may rename the
# stage and put a directory or a symlink of their own at its name, and a path
# through that name could then lead anywhere, the login's own files included.
# The directory entered stays the one checked, whatever its name becomes.
h_enter() {
	h_sm=
	# shellcheck disable=SC3013 # test -ef: in dash, bash, busybox, mksh, ksh and BSD sh, and tested under the first four
	cd -P -- "$h_stage" 2>/dev/null && [ .. -ef "$h_store" ] && [ . -ef "../${h_stage##*/}" ] || return 1
	h_sm=$(LC_ALL=C ls -ldn . 2>/dev/null) || return 1
	case $h_sm in ??????????+*) return 1 ;; esac
	# shellcheck disable=SC2086 # ls's fields, split on purpose
	h_lsmode $h_sm
	[ "$h_lt" = directory ] && [ "$h_lu" = "$h_uid" ] && { [ "$h_lm" = 700 ] || [ "$h_lm" = 2700 ]; }
}

# h_ourkey: the stage this command is in holds this push's key.
h_ourkey() {
	h_k=
	{ IFS= read -r h_k <key; } 2>/dev/null
	[ -n "$hp_skey" ] && [ "$h_k" = "$hp_skey" ]
}

# h_instage: h_enter, into the stage of this push: it holds the push's key
# (hp_skey, which travels with the command and is written nowhere else), so
# another private directory of the login's, reached through a symlink put
# at the stage's name, is not taken for it. A push's first command that
# goes on as its promotion (h_inside) is in the stage it entered and
# checked: it reads the key again, from there.
h_instage() {
	{ [ -n "$h_inside" ] || h_enter; } && h_ourkey || return 1
	h_step stage.entered
}

# h_mkstage: makes the stage (h_stage) of a push that resumes none, private
# to the login, and enters it (h_newstage). A stage refused there is
# removed only when this command is in it (h_enter got as far as its
# mode), it is the login's, and it is still the entry of its name, checked
# from inside just before: in a store a team shares, a member may have
# renamed this push's directory and put one of theirs at the name, which
# is theirs to keep, empty or not (an owner the file system gave it cannot
# be told from theirs: that one is left too, for gc to sweep). rmdir
# removes nothing but an empty directory, never through a link. The
# refusal says what was found: the file system did not make the directory
# as asked, or someone renamed it.
h_mkstage() {
	if ! h_e=$(umask 077 && mkdir "$h_stage" 2>&1); then
		h_say ERROR mkdir "$(h_oneline "$h_e")"
		return 1
	fi
	h_newstage && return 0
	h_e="left as it is"
	# shellcheck disable=SC3013 # test -ef, as in h_enter
	if [ -n "$h_sm" ] && [ "$h_lu" = "$h_uid" ] && [ . -ef "../${h_stage##*/}" ] &&
		cd .. && rmdir "./${h_stage##*/}" 2>/dev/null; then h_e="removed"; fi
	h_say ERROR stage "$(h_oneline "$hp_storedir/.stage-$hp_stok"), just made by this push, was not an empty directory of the login's that only it may enter when the push entered it ($(h_oneline "${h_sm:-not a directory in $hp_storedir}")): either the file system there does not keep the owner and mode a directory is made with, or someone who may write $hp_storedir renamed it; nothing was written in it, and it was $h_e: push again, and if it happens again, look at how $hp_storedir is mounted and who may write it"
	return 1
}

# h_newstage: h_enter, into the stage just made: it must be empty (what
# else was there, had the name been swapped for a link, is never
# overwritten), and gets the push's key, never over a file. The setgid bit
# a team's store passes on (h_enter) is cleared, from inside: what the push
# makes in the stage is then made as in any store, and the runtime's modes
# are the artifact's.
h_newstage() {
	h_enter || return 1
	set +f
	for h_e in ./* ./.[!.]* ./..?*; do
		if [ -e "$h_e" ] || [ -L "$h_e" ]; then
			set -f
			return 1
		fi
	done
	set -f
	if [ "$h_lm" = 2700 ]; then chmod g-s . 2>/dev/null; fi
	# echo is built into every shell (printf is not into mksh): the key
	# never shows in a process list.
	(set -C && echo "$hp_skey" >key) 2>/dev/null
}

# h_resume: takes over the stage an earlier push of this runtime left cut
# short (its "resume" mark names the id, the digest and the window the upload
# may have left gaps in) as this push's stage: one the stopped client marked
# "cut" (with where its bytes stop being whole), or whose mark and archive are
# both 5 s old: nothing has written the archive since its push's first command
# ended. Only one taker gets it: the mark is renamed, and a rename succeeds
# once; a promotion claims the mark (h_claim) before it reads the archive.
# Says RESUME id offset sha256: the upload goes on from offset (the cut, or
# the archive's length less the window), and the archive's bytes before it,
# copied into a file of this push's own, have that digest. The stage taken
# over is entered (h_enter) and must hold the taker's claim (taken-<stage
# token>), then gets this push's key. Returns 1 when there is nothing to
# resume, 2 when what was moved is not the stage claimed.
h_resume() {
	set +f
	for h_d in "$h_store"/.stage-*; do
		{ h_isuuid "${h_d##*/.stage-}" && [ -d "$h_d" ] && [ ! -L "$h_d" ] && [ -O "$h_d" ]; } || continue
		{ [ -f "$h_d/resume" ] && [ -f "$h_d/artifact.tar" ] && [ ! -L "$h_d/artifact.tar" ]; } || continue
		h_rw=
		read -r h_ri h_rd h_rw <"$h_d/resume" || continue
		{ [ "$h_ri" = "$hp_id" ] && [ "$h_rd" = "$hp_digest" ]; } || continue
		case $h_rw in '' | *[!0-9]*) continue ;; esac
		h_shatool || break
		if [ ! -f "$h_d/cut" ]; then
			{ h_age "$h_d/artifact.tar" && [ "$h_a" -ge 5 ] && h_age "$h_d/resume" && [ "$h_a" -ge 5 ]; } || continue
		fi
		mv "$h_d/resume" "$h_d/taken-$hp_stok" 2>/dev/null || continue
		h_step resume.taken
		mv "$h_d" "$h_stage" 2>/dev/null || continue
		set -f
		if ! h_enter || [ ! -f "taken-$hp_stok" ] || [ -L "taken-$hp_stok" ] ||
			! echo "$hp_skey" >key; then
			return 2
		fi
		h_sz=$(wc -c <artifact.tar 2>/dev/null)
		h_rc=
		{ read -r h_rc <./cut; } 2>/dev/null
		# Where the bytes stop being whole: as a stopped client said, or
		# the length less the window; never past the length. The offset
		# is that, in whole 64 KiB blocks ("OFFSET BLOCKS"). In awk: an
		# archive passes 2 GiB, beyond the 32 bits some shells count in
		# (mksh).
		h_roff=$(awk -v z="$h_sz" -v w="$h_rw" -v c="$h_rc" 'BEGIN {
			z += 0
			if (c !~ /^[0-9]+$/) c = z - w
			if (c + 0 > z) c = z
			b = int(c / 65536)
			if (b < 0) b = 0
			printf "%.0f %.0f\n", b * 65536, b
		}')
		case $h_roff in *[0-9]" "[0-9]*) ;; *) h_roff="0 0" ;; esac
		h_rblocks=${h_roff#* } h_roff=${h_roff% *}
		rm -f "taken-$hp_stok" cut
		# The bytes before the offset go into a new file: the push that was
		# cut may only be stalled, and write on through what it holds open
		# (the old file, gone once the new one takes its name).
		if ! dd if=artifact.tar of=artifact.new bs=65536 count="$h_rblocks" 2>/dev/null ||
			! mv -f artifact.new artifact.tar; then
			h_unstage
			return 1
		fi
		h_rsum=$(h_sha256 artifact.tar)
		h_say RESUME "$hp_id" "$h_roff" "${h_rsum:--}"
		return 0
	done
	set -f
	return 1
}

# h_claim: after h_instage, takes the stage from any push that would take
# it over to resume it (h_resume): renames its resume mark (one rename of
# it succeeds) and finds this push's key still there. Entered by its
# working directory, the stage may have been taken over and renamed since
# h_instage; the taker writes its own key before it writes a new mark, so a
# mark renamed after that is the taker's: it is put back, and the stage
# left to it; a push that finds another's key before it renames anything
# touches nothing. Returns 0 with the mark gone (the caller puts it back
# with h_unclaim if it keeps the stage), 1 when the stage is not this
# push's.
h_claim() {
	h_ourkey || return 1
	if ! mv resume "claimed-$hp_stok" 2>/dev/null; then
		# A push whose stage this was before a takeover may hold the
		# mark for the instant of its own claim (or died there). The
		# key is read again once the mark is ours: a takeover since the
		# first look wrote its key before its mark, so a key that is
		# still this push's makes the mark this push's, and no takeover
		# can come while it is claimed; another's gets its mark back.
		set +f
		for h_c in claimed-*; do
			if [ -f "$h_c" ] && mv "$h_c" "claimed-$hp_stok" 2>/dev/null; then
				set -f
				h_ourkey && return 0
				mv "claimed-$hp_stok" "$h_c" 2>/dev/null
				return 1
			fi
		done
		set -f
		return 1
	fi
	h_ourkey && return 0
	h_unclaim
	return 1
}

# h_unclaim: gives the mark h_claim took back.
h_unclaim() { mv "claimed-$hp_stok" resume 2>/dev/null; }

# h_unstage [PATH...]: removes the stage this command entered (h_enter),
# from inside: nobody else can change what it holds, so emptying it follows
# no link of anyone's. Then the directory itself goes by its name in the
# directory that holds it, if it is there and empty: rmdir never follows a
# link and removes nothing else. What was put at the stage's name by
# others is never removed. The PATHs (absolute: this command's scratch
# directory) go with the stage's contents, in the same rm.
h_unstage() {
	# Read-only directories of a tree not promoted are made writable
	# first (find never follows a link).
	if [ -d tree ] || [ -d pool ] || [ -d "unpack-$hp_stok/tree" ] || [ -d "unpack-$hp_stok/pool" ]; then
		find . -type d ! -perm -700 -exec chmod u+rwx {} \; 2>/dev/null
	fi
	set +f
	rm -rf ./* ./.[!.]* ./..?* "$@" 2>/dev/null
	set -f
	cd .. && rmdir "./${h_stage##*/}" 2>/dev/null
	return 0
}

# h_op_keepstage: marks this push's stage "cut" after its upload was
# stopped: the next push of the runtime resumes it at once (h_resume),
# and gc removes it after the stale period.
h_op_keepstage() {
	h_stage=$h_store/.stage-$hp_stok
	# Held by h_claim while it is marked: a push that took it over
	# meanwhile is never marked cut at this one's offset.
	if h_instage && h_claim; then
		printf '%s\n' "$hp_cut" >./cut
		h_unclaim
	fi
	h_say RESUMABLE "$hp_id"
}

# h_op_dropstage: removes this push's stage after a failed upload, when the
# stage's name still leads to it (h_instage) and no other push took it over
# (h_claim); what someone else put there, or took, is left alone. A stage
# whose upload was stopped or ended in an unknown outcome is left for the next
# push to resume, and for gc.
h_op_dropstage() {
	h_stage=$h_store/.stage-$hp_stok
	if h_instage && h_claim; then h_unstage; fi
	h_say DROPPED
}
