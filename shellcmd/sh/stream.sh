# Promotion in one pass: the promotion command starts with the upload, on
# the same connection, claims the stage before the first byte is read, and
# digests and unpacks the archive while it arrives, as far as the client
# says it is whole (docs/protocol.md, "Promotion in one pass"). Anything
# in doubt falls back to the full pass of h_op_promote (promote.sh), and a
# client that goes quiet or away gets its stage back, resumable.

# h_op_stream: h_op_promote begun with the upload. After the claim it says
# STREAMING and reads its standard input: "W OFFSET" lines (the archive is
# whole below OFFSET), then "E LENGTH SHA256" once the upload ended. The
# bytes up to each W go from one descriptor on the archive into tar and
# the SHA-256 tool side by side (h_flow); at E the rest follows, and a
# tree whose archive has that digest goes on to the lock as h_op_promote's
# does. A doubt on the way (h_flow) makes it the full pass at E; no line
# for 5 s, end of input or "stop" before E gives the stage back (h_yield).
h_op_stream() {
	h_stage=$h_store/.stage-$hp_stok
	h_pclaim || return
	h_step promote.streaming
	h_pready || return
	h_say STREAMING
	h_flow
	case $h_fr in
	Y)
		h_yield
		return
		;;
	ok) ;;
	pass)
		# Nothing was streamed: the directory h_pready made is as it was.
		h_ppass || return
		;;
	*)
		# The full pass, from a directory of its own.
		if ! h_unud; then
			h_say ERROR unpack "cannot empty the directory unpacked into in the stage"
			h_unstage
			return
		fi
		h_pud || return
		h_ppass || return
		;;
	esac
	h_pdone
}

# h_flow: reads the client's lines (h_feed, in the background on a copy of
# standard input, which it reads no further than E) while the bytes they say
# are whole go to tar, in unpack-<token>, and to the SHA-256 tool, each
# through a FIFO of its own in stream-<token>, made here and now. Sets h_fr:
# "ok" (streamed to the end: tar and every copy ended well and the digest
# is E's, which is hp_sum now), "full" (at E, but in doubt: the full pass)
# or "Y" (no E: the stage goes back), or "pass" (at E, and nothing was
# streamed: the full pass, in the directory h_pready made). A runtime
# under 8 MiB (h_small), a host without mkfifo or dd, or one whose SHA-256
# tool cannot be chosen, only reads the lines: the full pass at E. For a
# small runtime that is one read of bytes the disk's cache still holds,
# where streaming would start a dozen processes more than it saves.
h_flow() {
	h_fr=Y h_sd=stream-$hp_stok h_ft=/dev/null h_fh=/dev/null h_tp= h_hp=
	if ! h_small && command -v mkfifo >/dev/null 2>&1 && command -v dd >/dev/null 2>&1 && h_shatool &&
		mkdir "$h_sd" 2>/dev/null && mkfifo "$h_sd/tar.in" "$h_sd/sha.in" 2>/dev/null; then
		h_ft=$h_sd/tar.in h_fh=$h_sd/sha.in
		h_shaof "$h_fh" >"$h_sd/sum" 2>/dev/null &
		h_hp=$!
		# tar stops at the archive's end; what follows is drained, so the
		# copy never finds its reader gone when all went well.
		{
			(cd -P "$h_ud" && umask 0 && exec tar -xokf -)
			echo "$?" >"$h_sd/tar"
			cat >/dev/null
		} <"$h_ft" >/dev/null 2>&1 &
		h_tp=$!
	else
		mkdir "$h_sd" 2>/dev/null
	fi
	# Two descriptors on the archive, 6 for tar's copy and 8 for the
	# digest's, opened once, here: a file put at its name later is never
	# read. Both read the same bytes, as the full pass's two readers do.
	exec 7<&0
	h_feed "${h_hp:+1}" <&7 6<artifact.tar 8<artifact.tar 3>"$h_ft" 4>"$h_fh" 2>/dev/null &
	h_fp=$!
	exec 7<&-
	h_quiet "$h_fp" >/dev/null 2>&1 &
	h_qp=$!
	wait "$h_fp"
	kill "$h_qp" 2>/dev/null
	if [ -n "$h_tp" ]; then
		# A reader still waiting for its writer (h_feed never ran) gets
		# its end of file.
		: <>"$h_ft"
		: <>"$h_fh"
		wait "$h_tp"
		wait "$h_hp"
	fi
	h_l= h_got= h_e=
	{ read -r h_l h_x h_e <"$h_sd/res"; } 2>/dev/null
	[ "$h_l" = E ] || return 0
	hp_sum=$h_x h_fr=full
	if [ -z "$h_tp" ] && [ "$h_e" = tools ]; then
		h_fr=pass
		return 0
	fi
	[ -n "$h_tp" ] && [ -z "$h_e" ] || return 0
	h_x=
	# The digest is written without a line's end: read fails at it.
	{
		read -r h_got <"$h_sd/sum"
		read -r h_x <"$h_sd/tar"
	} 2>/dev/null
	[ "$h_got" = "$hp_sum" ] && [ "$h_x" = 0 ] && (cd -P "$h_ud" && h_modes) >/dev/null 2>&1 || return 0
	h_fr=ok
	rm -rf "$h_sd"
}

# h_feed [STREAM]: reads the client's lines on standard input until E, and
# with STREAM copies the archive as far as each W says, in whole MiB
# blocks, from descriptor 6 to 3 (tar) and from 8 to 4 (the digest), side
# by side (h_copy), then at E the rest. Each line is counted in
# stream-<token>/beat with the blocks copied so far (h_quiet reads it). A W
# that goes back, a line that does not parse, a copy that falls short (an
# offset beyond the archive's length) or fails (tar gone) is a doubt:
# nothing more is copied. Writes stream-<token>/res: "E SHA256 [DOUBT]",
# or "Y" when input ended, or "stop" came, before E.
h_feed() {
	h_fb=0 h_fn=0 h_fd=tools
	if [ "$1" = 1 ]; then h_fd=; fi
	while IFS= read -r h_l; do
		h_fn=$((h_fn + 1))
		echo "$h_fn $h_fb" >"$h_sd/beat"
		case $h_l in
		"W "*)
			[ -z "$h_fd" ] || continue
			if ! h_blocks "${h_l#W }"; then
				h_fd=line
			elif [ "$h_nb" -lt "$h_fb" ]; then
				h_fd=back
			elif [ "$h_nb" -gt "$h_fb" ]; then
				echo "$h_fn $h_fb busy" >"$h_sd/beat"
				if h_copy $((h_nb - h_fb)); then h_fb=$h_nb; else h_fd=short; fi
				echo "$h_fn $h_fb" >"$h_sd/beat"
			fi
			;;
		"E "*)
			h_l=${h_l#E }
			case ${h_l#* } in
			*[!0-9a-f]* | "$h_l") break ;;
			????????????????????????????????????????????????????????????????) ;;
			*) break ;;
			esac
			h_blocks "${h_l%% *}" || break
			if [ -z "$h_fd" ]; then
				[ "$h_nb" -ge "$h_fb" ] || h_fd=back
				echo "$h_fn $h_fb busy" >"$h_sd/beat"
				[ -n "$h_fd" ] || h_copy || h_fd=copy
			fi
			echo "E ${h_l#* } $h_fd" >"$h_sd/res"
			return
			;;
		stop) break ;;
		*) h_fd=${h_fd:-line} ;;
		esac
	done
	echo "Y $h_fb" >"$h_sd/res"
}

# h_copy [N]: copies N blocks of a MiB from 6 to 3 and from 8 to 4 at
# once; fails unless both copied all N (dd reads a plain file in whole
# blocks: its "records in" is the count unless the file ends first). With
# no N, copies the rest, to the archive's end.
h_copy() {
	if [ -z "$1" ]; then
		cat <&6 >&3 &
		h_cp=$!
		cat <&8 >&4 || { wait "$h_cp"; return 1; }
		wait "$h_cp"
		return
	fi
	dd bs=1048576 count="$1" <&6 >&3 2>"$h_sd/dd.t" &
	h_cp=$!
	dd bs=1048576 count="$1" <&8 >&4 2>"$h_sd/dd.h"
	h_x=$?
	wait "$h_cp" && [ "$h_x" = 0 ] || return 1
	h_r= h_x=
	{
		IFS=+ read -r h_r _ <"$h_sd/dd.t"
		IFS=+ read -r h_x _ <"$h_sd/dd.h"
	} 2>/dev/null
	[ "$h_r" = "$1" ] && [ "$h_x" = "$1" ]
}

# h_small: the runtime is under 8 MiB (hp_size, the tree's bytes, in at
# most seven digits and below 8388608).
h_small() {
	case $hp_size in '' | *[!0-9]*) return 1 ;; esac
	[ "${#hp_size}" -le 7 ] && [ "$hp_size" -lt 8388608 ]
}

# h_blocks OFFSET: sets h_nb to the whole MiB blocks below OFFSET, a
# byte count in decimal digits (no leading zero: the shell would read it as
# octal). Beyond nine digits awk divides: the shell may count in 32 bits.
h_blocks() {
	case $1 in '' | *[!0-9]* | 0?*) return 1 ;; esac
	if [ "${#1}" -le 9 ]; then
		h_nb=$(($1 / 1048576))
	else
		h_nb=$(awk -v o="$1" 'BEGIN { printf "%.0f", int(o / 1048576) }')
	fi
}

# h_quiet PID: stops h_feed (PID) when it has read no line for 5 s: its
# beat has not changed in five looks a second apart. A copy counts as no
# quiet (the beat says "busy"): its time is the host's disk's.
h_quiet() {
	h_qb= h_qn=0
	while [ "$h_qn" -lt 5 ]; do
		sleep 1
		h_qc=
		{ read -r h_qc <"$h_sd/beat"; } 2>/dev/null
		case $h_qc in
		"$h_qb") h_qn=$((h_qn + 1)) ;;
		*" busy") h_qn=0 ;;
		*) h_qn=0 h_qb=$h_qc ;;
		esac
	done
	kill "$1"
}

# h_unud: removes the directory unpacked into and moves the pool back out,
# as the stage held it before.
h_unud() {
	{ [ ! -d "$h_ud/pool" ] || [ -L "$h_ud/pool" ] || mv "$h_ud/pool" pool; } &&
		rm -rf "$h_ud" "$h_sd" 2>/dev/null
}

# h_yield: gives the stage back as a cut upload leaves it: the directory
# unpacked into gone, "cut" where its bytes are known whole (those read, as
# the client said, or the length less the window, h_resume's own rule,
# whichever is further), and the mark put back (h_unclaim). The next push
# resumes the stage or takes it over at once; a client that was only
# stalled comes to h_op_promote, whose claim finds whether it still has
# it. Says YIELDED with the cut.
h_yield() {
	h_x= h_fb=0
	{ read -r h_x h_fb h_e <"$h_sd/beat"; } 2>/dev/null
	case $h_fb in '' | *[!0-9]*) h_fb=0 ;; esac
	h_sz=$(wc -c <artifact.tar 2>/dev/null)
	h_x=$(awk -v b="$h_fb" -v z="$h_sz" -v w="$hp_window" 'BEGIN {
		c = b * 1048576
		if (z - w > c) c = z - w
		printf "%.0f", c
	}')
	if ! h_unud; then
		h_say ERROR unpack "cannot empty the directory unpacked into in the stage"
		h_unstage
		return
	fi
	printf '%s\n' "${h_x:-0}" >./cut
	h_unclaim
	h_step promote.yielded
	h_say YIELDED "${h_x:-0}"
}
