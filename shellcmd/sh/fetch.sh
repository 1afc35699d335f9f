# A push through a registry: the host fetches what it lacks of a published
# runtime (docs/store.md, "Pushing through a registry") into the stage the
# push's first command made, where the SFTP upload would have put it: the
# pack as the stage's archive, each file blob into pool/<ReuseName> once per
# mode, every blob verified by its SHA-256 before it gets its name. The
# client gives the blob URL (hp_furl), what to do a line each (hp_fetch:
# "link NAME PATH", "blob SHA256 SIZE MODES", "pack SHA256 SIZE"), the
# Authorization value (hp_fauth, a secret) and a CA (hp_fca, PEM), all inside
# the fragment on standard input. The first failure ends the fetch (NOFETCH):
# the client then sends over SFTP what the host could not fetch.

# h_op_fetch: in this push's stage, claimed (h_claim) while it writes:
# fetches what hp_fetch lists, says FETCHED for each verified blob or
# NOFETCH for the first failure, and ends with FETCHEND and the tool it
# used. The credential and the CA are files of the stage (0600) for this
# command only.
h_op_fetch() {
	h_stage=$h_store/.stage-$hp_stok
	if ! h_instage || ! h_claim; then
		h_say ERROR stage "$(h_oneline "$hp_storedir/.stage-$hp_stok") is not this push's stage any more (taken over to resume, or removed); nothing was fetched"
		return
	fi
	h_ft=
	trap 'rm -f ./auth ./ca.pem' EXIT
	trap 'rm -f ./auth ./ca.pem; exit 143' TERM
	trap 'rm -f ./auth ./ca.pem; exit 130' INT
	h_fetch
	rm -f ./auth ./ca.pem ./fetch.err ./fetch.list
	trap - EXIT TERM INT
	h_step fetch.done
	h_unclaim
	h_say FETCHEND "${h_ft:--}"
}

# h_nofetch WHY DETAIL: the fetch ends here (WHY: tool, reach, tls, http,
# cut, digest, write).
h_nofetch() { h_say NOFETCH "$1" "$(h_oneline "$2")"; }

# h_fetch: the fetch itself, in the stage: the tool, the files it reads,
# then each line of hp_fetch in order. Returns at the first failure, said.
h_fetch() {
	h_fetchtool || return 0
	if [ -n "$hp_fca" ] && ! (umask 077 && echo "$hp_fca" >./ca.pem) 2>/dev/null; then
		h_nofetch write "cannot write the registry's CA in the stage (disk full?)"
		return 0
	fi
	# echo is built into every shell: the credential is in no argv. The
	# file is the tool's own configuration (curl -K, wgetrc), 0600.
	if [ -n "$hp_fauth" ]; then
		case $h_ft in
		curl) (umask 077 && echo "header = \"Authorization: $hp_fauth\"" >./auth) ;;
		*) (umask 077 && echo "header = Authorization: $hp_fauth" >./auth) ;;
		esac 2>/dev/null || {
			h_nofetch write "cannot write the credential in the stage (disk full?)"
			return 0
		}
	fi
	if ! mkdir -p pool 2>/dev/null || ! printf '%s\n' "$hp_fetch" >./fetch.list 2>/dev/null; then
		h_nofetch write "cannot write in the stage (disk full?)"
		return 0
	fi
	while read -r h_fk h_fd h_fr; do
		case $h_fk in
		link)
			# A reused copy (pool/<id>/<path>) under the name the pack
			# links to.
			if ! ln "pool/$h_fr" "pool/$h_fd" 2>/dev/null; then
				h_nofetch write "cannot link the reused copy of $h_fr in the stage's pool"
				return 0
			fi
			;;
		blob)
			h_fz=${h_fr%% *} h_fm=${h_fr#* }
			h_get "$h_fd" "$h_fz" "pool/.fetch-$h_fd" || return 0
			h_fp=
			h_fi=$h_fm,
			while [ -n "$h_fi" ]; do
				h_m=${h_fi%%,*} h_fi=${h_fi#*,}
				case $h_m in '' | *[!0-7]*) continue ;; esac
				if [ -z "$h_fp" ]; then
					chmod "$h_m" "pool/.fetch-$h_fd" && mv -f "pool/.fetch-$h_fd" "pool/$h_fd-$h_m"
				else
					cp "pool/$h_fp" "pool/$h_fd-$h_m" && chmod "$h_m" "pool/$h_fd-$h_m"
				fi 2>/dev/null || {
					h_nofetch write "cannot put the blob $h_fd in the stage's pool (disk full?)"
					return 0
				}
				h_fp=$h_fd-$h_m
			done
			h_say FETCHED "$h_fd" "$h_fz" "$h_gt"
			;;
		pack)
			# Into the stage's archive only once it is verified: until
			# then, the archive the first command made stays as it was,
			# for an upload to write into.
			h_get "$h_fd" "$h_fr" ./fetch.pack || return 0
			if ! mv -f ./fetch.pack ./artifact.tar 2>/dev/null; then
				h_nofetch write "cannot write the stage's archive (disk full?)"
				return 0
			fi
			h_say FETCHED "$h_fd" "$h_fr" "$h_gt"
			;;
		esac
	done <./fetch.list
}

# h_fetchtool: chooses the tool (h_ft): curl, else GNU wget, else busybox
# wget for a plain HTTP registry that needs no credential (it takes headers
# in argv only, and verifies no certificate). Says NOFETCH tool when none
# will do.
h_fetchtool() {
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
	'')
		h_nofetch tool "neither curl nor wget on the host"
		return 1
		;;
	busybox)
		if [ -n "$hp_fauth" ] || [ -z "$hp_fplain" ]; then
			h_ft=
			h_nofetch tool "only busybox wget on the host, which would show the credential in its argv and verifies no certificate: install curl there"
			return 1
		fi
		;;
	esac
	return 0
}

# h_get SHA256 SIZE FILE: fetches the blob into FILE, a try at a time: a try
# cut short (the connection dropped) is resumed from what FILE holds with a
# Range request, while each try adds bytes, up to 8 tries (h_gt counts
# them). Then FILE must be SIZE bytes of that SHA-256, or it is removed.
# Says NOFETCH and returns 1 on failure.
h_get() {
	rm -f "$3"
	h_gt=0 h_gn=0
	while :; do
		h_gt=$((h_gt + 1))
		h_grab "$1" "$3"
		h_gp=$h_gn
		h_gn=$(wc -c <"$3" 2>/dev/null) || h_gn=0
		h_gn=$((h_gn + 0))
		[ "$h_gx" = 0 ] && [ "$h_gn" -ge "$2" ] && break
		# The server ended a whole answer short: go on as from a cut.
		[ "$h_gx" = 0 ] && h_gx="cut"
		if [ "$h_gx" = cut ] && [ "$h_gn" -gt "$h_gp" ] && [ "$h_gt" -lt 8 ]; then
			continue
		fi
		[ "$h_gx" = cut ] && [ "$h_gn" -le "$h_gp" ] && [ "$h_gt" = 1 ] && h_gx=reach
		h_e=
		{ IFS= read -r h_e <./fetch.err; } 2>/dev/null
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

# h_grab SHA256 FILE: one try of the tool at the blob, resuming FILE when it
# holds bytes. Sets h_gx to 0, or to the kind of failure (as h_nofetch's
# WHY): reach, tls, http, cut or write.
h_grab() {
	h_u=$hp_furl"sha256:$1"
	h_c=
	[ -s "$2" ] && h_c=1
	case $h_ft in
	curl)
		h_pr="=https"
		[ -n "$hp_fplain" ] && h_pr="=http,https"
		set -- curl -fsSL --connect-timeout 5 --speed-limit 1 --speed-time 10 --proto "$h_pr" --proto-redir "$h_pr" -o "$2"
		[ -f ./ca.pem ] && set -- "$@" --cacert ./ca.pem
		[ -f ./auth ] && set -- "$@" -K ./auth
		[ -n "$h_c" ] && set -- "$@" -C -
		"$@" "$h_u" 2>./fetch.err
		case $? in
		0) h_gx=0 ;;
		5 | 6 | 7 | 45) h_gx=reach ;;
		16 | 18 | 28 | 52 | 55 | 56 | 92) h_gx="cut" ;;
		35 | 51 | 53 | 54 | 58 | 59 | 60 | 64 | 66 | 77 | 80 | 82 | 83 | 90 | 91) h_gx=tls ;;
		23) h_gx="write" ;;
		*) h_gx=http ;;
		esac
		;;
	wget)
		set -- wget -q --tries=1 --connect-timeout=5 --read-timeout=10 -O "$2"
		[ -f ./auth ] && set -- "$@" --config=./auth
		[ -f ./ca.pem ] && set -- "$@" --ca-certificate=./ca.pem
		[ -n "$h_c" ] && set -- "$@" -c
		"$@" "$h_u" 2>./fetch.err
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
		if "$@" "$h_u" 2>./fetch.err; then h_gx=0; else h_gx="cut"; fi
		;;
	esac
}
