# How a host fetches blobs from a registry (fetch.sh): the tool it has
# (h_fetchtool), the blobs in a curl a size class with the connection kept
# (h_curlall), or a blob at a time with wget (h_wgetall); a blob cut short
# is resumed with a Range request; no tool writes much more of a blob than
# its declared size (h_capped), and one that came larger is refused; every
# blob is verified by its SHA-256 before it counts as fetched.

# h_fetchtool: chooses the tool (h_ft): curl, else GNU wget, else busybox
# wget for a plain HTTP registry that needs no credential (it takes headers
# in argv only, and verifies no certificate). Returns 1, with why in h_fw,
# when none will do.
h_fetchtool() {
	h_ft= h_fw=
	# Each is run: a shell may find a file it cannot execute (busybox's
	# command -v does).
	if curl --version >/dev/null 2>&1; then
		h_ft=curl
	else
		case $(wget --version 2>/dev/null) in
		*"GNU Wget"*) h_ft=wget ;;
		*) case $(wget --help 2>&1) in *BusyBox*) h_ft=busybox ;; esac ;;
		esac
	fi
	case $h_ft in
	'') h_fw="neither curl nor wget on the host" ;;
	busybox)
		if [ -n "$hp_fauth" ] || [ -z "$hp_fplain" ]; then
			h_ft=
			h_fw="only busybox wget on the host, which would show the credential in its argv and verifies no certificate: install curl there"
		fi
		;;
	esac
	[ -n "$h_ft" ]
}

# h_wgetall: the blobs of fetch.todo with wget, one at a time (h_get),
# each capped at its size plus one block of 512 bytes (floor(SIZE/512)+1
# blocks, by awk: mksh counts in 32 bits). With a credential, descriptor 9
# is the stage's wgetrc: GNU wget refuses a pipe as its --config ("Exiting
# due to error in /dev/stdin"), so the file is unlinked while still empty,
# then written through the descriptor, which wget opens again as
# /dev/fd/9: the credential is under no name, and goes with the last
# descriptor whatever ends the command. echo is a builtin: in no argv.
h_wgetall() {
	if [ -n "$hp_fauth" ] && ! { rm -f ./wgetrc && echo "header = Authorization: $hp_fauth" >&9; } 2>/dev/null; then
		h_nofetch write "cannot write the credential for wget (disk full?)"
		return 1
	fi
	awk '{ printf "%s %s %s %.0f\n", $1, $2, $3, int($3 / 512) + 1 }' ./fetch.todo >./fetch.now
	while read -r h_ff h_fd h_fz h_fb; do
		h_get "$h_fd" "$h_fz" "$h_ff" "$h_fb" || return 1
		echo "$h_fd $h_fz $h_gt" >>./fetch.done
	done <./fetch.now
}

# h_get SHA256 SIZE FILE BLOCKS: fetches the blob into FILE, a try at a
# time, each capped at BLOCKS of 512 bytes (more than SIZE): a try cut
# short (the connection dropped) is resumed from what FILE holds with a
# Range request, while each try adds bytes, up to 8 tries (h_gt counts
# them). FILE larger than SIZE ends it at once (size); then FILE must be
# SIZE bytes of that SHA-256. FILE is removed on failure, which says
# NOFETCH and returns 1.
h_get() {
	rm -f "$3"
	h_gt=0 h_gn=0
	while :; do
		h_gt=$((h_gt + 1))
		h_grab "$1" "$3" "$4"
		h_gp=$h_gn
		h_gn=$(wc -c <"$3" 2>/dev/null) || h_gn=0
		h_gn=$((h_gn + 0))
		if [ "$h_gn" -gt "$2" ]; then
			rm -f "$3"
			h_nofetch size "$(h_toolarge "$1" "$2" "$h_gn")"
			return 1
		fi
		[ "$h_gx" = 0 ] && [ "$h_gn" -ge "$2" ] && break
		# The server ended a whole answer short: go on as from a cut.
		[ "$h_gx" = 0 ] && h_gx="cut"
		if [ "$h_gx" = cut ] && [ "$h_gn" -gt "$h_gp" ] && [ "$h_gt" -lt 8 ]; then
			continue
		fi
		[ "$h_gx" = cut ] && [ "$h_gn" -le "$h_gp" ] && [ "$h_gt" = 1 ] && h_gx=reach
		h_e=
		{ IFS= read -r h_e <./fetch.err; } 2>/dev/null
		case $h_e in *"redirections exceeded"*) h_e="the registry redirected it elsewhere, where wget may not follow with a credential (it would send the credential there too): install curl on the host" ;; esac
		rm -f "$3"
		h_nofetch "$h_gx" "blob $1 after $h_gt tries and $h_gn of $2 bytes: ${h_e:-no answer}"
		return 1
	done
	h_got=$(h_sha256 "$3")
	if [ "$h_gn" != "$2" ] || [ "$h_got" != "$1" ]; then
		rm -f "$3"
		h_nofetch digest "blob $1 came as $h_gn bytes of sha256 ${h_got:-unknown}, not $2 bytes of its digest: the registry, or a mirror in front of it, served other bytes (tampered?); not used"
		return 1
	fi
	return 0
}

# h_toolarge SHA256 SIZE N: what NOFETCH size says of a blob that came as
# N bytes or more.
h_toolarge() {
	echo "blob sha256:$1 is larger than its declared size: $3 bytes or more came, the manifest says $2 (the registry, or a mirror in front of it, sent more than the blob); stopped there, not used"
}

# h_grab SHA256 FILE BLOCKS: one try of wget at the blob, resuming FILE
# when it holds bytes, capped at BLOCKS (h_capped). Sets h_gx to 0, or to
# the kind of failure (as h_nofetch's WHY): tls, http, cut or write.
h_grab() {
	h_u=$hp_furl"sha256:$1"
	h_c=
	[ -s "$2" ] && h_c=1
	h_b=$3
	case $h_ft in
	wget)
		set -- wget -nv --tries=1 --connect-timeout=5 --read-timeout=10 -O "$2"
		# GNU wget sends its headers on to a redirect's host: with a
		# credential it follows none, and a redirected blob is sent over SSH.
		# -nv: its errors, a line each, for NOFETCH's detail.
		[ -n "$hp_fauth" ] && set -- "$@" --config=/dev/fd/9 --max-redirect=0
		[ -f ./ca.pem ] && set -- "$@" --ca-certificate=./ca.pem
		[ -n "$h_c" ] && set -- "$@" -c
		h_capped "$h_b" "$@" "$h_u" 2>./fetch.err
		case $? in
		0) h_gx=0 ;;
		3) h_gx="write" ;;
		4) h_gx="cut" ;;
		5) h_gx=tls ;;
		*) h_gx=http ;;
		esac
		;;
	*)
		set -- wget -q -O "$2"
		[ -n "$h_c" ] && set -- "$@" -c
		if h_capped "$h_b" "$@" "$h_u" 2>./fetch.err; then h_gx=0; else h_gx="cut"; fi
		;;
	esac
}

# h_curlall: the blobs of fetch.todo with curl, a round at a time
# (h_curlround); then all the files hashed at once (h_shafind). A
# verified blob is written to fetch.done ("SHA256 SIZE TRIES"); one short
# of its size is asked for again in the next round from where it stops (-C
# -: a Range request); one larger than its size ends the fetch (size), one
# of its size that does not match too (digest). A round that verifies no
# blob and adds no byte ends it too, as curl's failure says.
h_curlall() {
	h_round=0 h_was=0
	while [ -s ./fetch.todo ]; do
		h_round=$((h_round + 1))
		: >./fetch.now
		while read -r h_ff h_fd h_fz h_fn; do
			[ -s "$h_ff" ] && h_fn=$((h_fn + 1))
			echo "$h_ff $h_fd $h_fz $h_fn" >>./fetch.now
		done <./fetch.todo
		h_curlround
		h_shafind pool/.fetch >./fetch.sums
		awk 'FILENAME == ARGV[1] { s = $1; sub(/^\\/, "", s); p = $0; sub(/^[^ ]* [ *]?/, "", p); sum[p] = s; next }
			{ print (sum[$1] == $2 ? "ok" : "no"), $0 }' ./fetch.sums ./fetch.now >./fetch.seen
		: >./fetch.todo
		h_now=0 h_any=
		while read -r h_ok h_ff h_fd h_fz h_fn; do
			if [ "$h_ok" = ok ]; then
				echo "$h_fd $h_fz $((h_fn + 1))" >>./fetch.done
				h_any=1
				continue
			fi
			h_n=0
			[ -f "$h_ff" ] && h_n=$(wc -c <"$h_ff")
			h_n=$((h_n + 0))
			if [ "$h_n" -gt "$h_fz" ]; then
				rm -f "$h_ff"
				h_nofetch size "$(h_toolarge "$h_fd" "$h_fz" "$h_n")"
				return 1
			fi
			if [ "$h_n" -ge "$h_fz" ]; then
				rm -f "$h_ff"
				h_nofetch digest "blob $h_fd came as $h_n bytes of another SHA-256, not $h_fz bytes of its digest: the registry, or a mirror in front of it, served other bytes (tampered?); not used"
				return 1
			fi
			h_now=$((h_now + h_n))
			echo "$h_ff $h_fd $h_fz $h_fn" >>./fetch.todo
		done <./fetch.seen
		[ -s ./fetch.todo ] || return 0
		if { [ -z "$h_any" ] && [ "$h_now" -le "$h_was" ]; } || [ "$h_round" -ge 64 ]; then
			[ "$h_gx" = 0 ] && h_gx="cut"
			[ "$h_gx" = cut ] && [ -z "$h_any" ] && [ "$h_round" = 1 ] && h_gx=reach
			h_e=
			{ IFS= read -r h_e <./fetch.err; } 2>/dev/null
			h_nofetch "$h_gx" "after $h_round tries, $(wc -l <./fetch.todo) blobs not fetched: ${h_e:-no answer}"
			return 1
		fi
		h_was=$h_now
	done
}

# h_curlround: the round's blobs (fetch.now) in one curl a size class,
# each class's connection kept (--fail-early: a curl stops at the first
# blob that fails, and the round at the first curl). A class is the blobs
# of floor(SIZE/512)+1 blocks up to a power of two, T: its curl is capped
# at T blocks (h_capped), so no blob's file grows past twice its size and
# a block (curl's --max-filesize misses chunked answers before curl 8.4),
# at a curl for each power of two among the sizes. awk counts: mksh counts
# in 32 bits.
h_curlround() {
	awk '{ b = int($3 / 512) + 1; t = 1; while (t < b) t *= 2; printf "%.0f %s %s\n", t, $1, $2 }' ./fetch.now | sort -n >./fetch.tiers
	h_gx=0 h_t=
	set --
	while read -r h_tb h_ff h_fd; do
		if [ -n "$h_t" ] && [ "$h_tb" != "$h_t" ]; then
			h_curl "$h_t" "$@"
			[ "$h_gx" = 0 ] || return 0
			set --
		fi
		h_t=$h_tb
		set -- "$@" -o "$h_ff" "$hp_furl""sha256:$h_fd"
	done <./fetch.tiers
	[ -z "$h_t" ] || h_curl "$h_t" "$@"
}

# h_capped BLOCKS CMD ARG...: CMD, whose files cannot grow past BLOCKS of
# 512 bytes (ulimit -f counts 512 in every sh; bash counts 1024 outside
# POSIX mode, a looser cap). SIGXFSZ ignored: a write past it fails
# (EFBIG), and the tool says so and stops. A hard limit already lower (the
# ulimit fails) caps it more.
h_capped() {
	(
		trap '' XFSZ
		ulimit -f "$1" 2>/dev/null
		shift
		exec "$@"
	)
}

# h_curl BLOCKS ARG...: curl with the fetch's options, capped at BLOCKS:
# HTTPS only unless the registry is plain (redirects too), the CA file
# when there is one, resuming what a file holds (-C -), giving up on a
# connection after 5 s and on a transfer silent for 10 s. Sets h_gx as
# h_grab does. The credential is read from a pipe (-K -) that echo, a
# builtin, writes: in no argv, under no name. curl sends it to no other
# host than the registry (a redirect elsewhere goes without it:
# --location-trusted is not given). HTTP/1.1 (kept alive): the blobs go
# one after another anyway, and some curl and registry pairs (curl 7.88
# with distribution 2.8's HTTP/2) end a stream with a framing error, where
# a cut blob's bytes are not kept.
h_curl() {
	h_b=$1
	shift
	h_pr="=https"
	[ -n "$hp_fplain" ] && h_pr="=http,https"
	set -- -fsSL --http1.1 --fail-early -C - --connect-timeout 5 --speed-limit 1 --speed-time 10 --proto "$h_pr" --proto-redir "$h_pr" "$@"
	[ -f ./ca.pem ] && set -- --cacert ./ca.pem "$@"
	if [ -n "$hp_fauth" ]; then
		echo "header = \"Authorization: $hp_fauth\"" | h_capped "$h_b" curl -K - "$@" 2>./fetch.err
	else
		h_capped "$h_b" curl "$@" </dev/null 2>./fetch.err
	fi
	case $? in
	0) h_gx=0 ;;
	5 | 6 | 7 | 45) h_gx=reach ;;
	16 | 18 | 28 | 52 | 55 | 56 | 92) h_gx="cut" ;;
	35 | 51 | 53 | 54 | 58 | 59 | 60 | 64 | 66 | 77 | 80 | 82 | 83 | 90 | 91) h_gx=tls ;;
	23) h_gx="write" ;;
	*) h_gx=http ;;
	esac
}
