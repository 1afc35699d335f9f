# A push through a registry: the host fetches what it lacks of a published
# runtime (docs/store.md, "Pushing through a registry") into the stage the
# push's first command made, where the SFTP upload would have put it: the
# pack as the stage's archive, each file blob into pool/<ReuseName> once per
# mode, every blob verified by its SHA-256 before it gets its name. The
# client gives the blob URL (hp_furl), what to do a line each (hp_fetch:
# "link NAME PATH", "blob SHA256 SIZE MODES", "pack SHA256 SIZE"), the
# Authorization value (hp_fauth, a secret) and a CA (hp_fca, PEM), all inside
# the fragment on standard input. The first failure ends the fetch (NOFETCH):
# the client then sends over SFTP what the host could not fetch. How each
# blob is fetched and verified, by curl or wget: fetchget.sh.

# h_op_fetch: in this push's stage, claimed (h_claim) while it writes:
# fetches what hp_fetch lists, says FETCHED for each verified blob or
# NOFETCH for the first failure, and ends with FETCHEND and the tool it
# used. The CA is a file of the stage for this command; the credential is
# under no name on the host (h_curl, h_wgetall), so a command killed with
# SIGKILL leaves it nowhere.
h_op_fetch() {
	h_stage=$h_store/.stage-$hp_stok
	if ! h_instage || ! h_claim; then
		h_say ERROR stage "$(h_oneline "$hp_storedir/.stage-$hp_stok") is not this push's stage any more (taken over to resume, or removed); nothing was fetched"
		return
	fi
	h_ft=
	h_fetch
	rm -f ./ca.pem ./wgetrc ./fetch.err ./fetch.list ./fetch.todo ./fetch.now ./fetch.tiers ./fetch.sums ./fetch.seen ./fetch.done
	h_step fetch.done
	h_unclaim
	h_say FETCHEND "${h_ft:--}"
}

# h_nofetch WHY DETAIL: the fetch ends here (WHY: tool, reach, tls, http,
# cut, size, digest, write).
h_nofetch() { h_say NOFETCH "$1" "$(h_oneline "$2")"; }

# h_fetch: the fetch itself, in the stage: the tool, the files it reads,
# the reused copies linked under the names the pack links to, then every
# blob into pool/.fetch/ (its first mode's name; the pack as "pack"),
# verified (h_curlall, or h_get a blob at a time), then put in place
# (h_place). Returns at the first failure, said.
h_fetch() {
	if ! h_fetchtool; then
		h_nofetch tool "$h_fw"
		return 0
	fi
	if [ -n "$hp_fca" ] && ! (umask 077 && echo "$hp_fca" >./ca.pem) 2>/dev/null; then
		h_nofetch write "cannot write the registry's CA in the stage (disk full?)"
		return 0
	fi
	if ! mkdir -p pool/.fetch 2>/dev/null || ! printf '%s\n' "$hp_fetch" >./fetch.list 2>/dev/null ||
		! : >./fetch.todo || ! : >./fetch.done; then
		h_nofetch write "cannot write in the stage (disk full?)"
		return 0
	fi
	# fetch.todo: "FILE SHA256 SIZE RESUMES" a blob to fetch.
	while read -r h_fk h_fd h_fr; do
		case $h_fk in
		link)
			# A reused copy (pool/<id>/<path>) under the name the pack
			# links to.
			if ! ln -f "pool/$h_fr" "pool/$h_fd" 2>/dev/null; then
				h_nofetch write "cannot link the reused copy of $h_fr in the stage's pool"
				return 0
			fi
			;;
		blob)
			h_fm=${h_fr##* }
			echo "pool/.fetch/$h_fd-${h_fm%%,*} $h_fd ${h_fr%% *} 0" >>./fetch.todo
			;;
		pack) echo "pool/.fetch/pack $h_fd $h_fr 0" >>./fetch.todo ;;
		esac
	done <./fetch.list
	if [ "$h_ft" = curl ]; then
		h_curlall || return 0
	elif [ -z "$hp_fauth" ]; then
		h_wgetall || return 0
	else
		# GNU wget with a credential (h_fetchtool): its wgetrc is descriptor
		# 9 (h_wgetall), 0600 in the 0700 stage.
		if ! (umask 077 && : >./wgetrc) 2>/dev/null; then
			h_nofetch write "cannot write in the stage (disk full?)"
			return 0
		fi
		h_wgetall 9<>./wgetrc || return 0
	fi
	h_place || return 0
	while read -r h_fd h_fz h_fn; do
		h_say FETCHED "$h_fd" "$h_fz" "$h_fn"
	done <./fetch.done
}

# h_place: puts the verified blobs of pool/.fetch/ in place: a copy for
# each further mode of a blob, each mode given (one chmod a mode, as few
# processes as find -exec {} + makes), all moved into the pool with one
# mv, and the pack made the stage's archive. Until then the archive the
# first command made stays as it was, for an upload to write into.
h_place() {
	while read -r h_fk h_fd h_fr; do
		[ "$h_fk" = blob ] || continue
		h_fm=${h_fr#* },
		h_f1=${h_fm%%,*} h_fm=${h_fm#*,}
		while [ -n "$h_fm" ]; do
			h_m=${h_fm%%,*} h_fm=${h_fm#*,}
			cp "pool/.fetch/$h_fd-$h_f1" "pool/.fetch/$h_fd-$h_m" 2>/dev/null || {
				h_nofetch write "cannot copy the blob $h_fd in the stage's pool (disk full?)"
				return 1
			}
		done
	done <./fetch.list
	awk '$1 == "blob" { n = split($4, m, ","); for (i = 1; i <= n; i++) print m[i] }' ./fetch.list | sort -u | while read -r h_m; do
		case $h_m in '' | *[!0-7]*) continue ;; esac
		find pool/.fetch -type f -name "*-$h_m" -exec chmod "$h_m" {} + 2>/dev/null
	done
	set +f
	set -- pool/.fetch/*-*
	set -f
	if { [ ! -f "$1" ] || mv -f "$@" pool/ 2>/dev/null; } &&
		{ [ ! -f pool/.fetch/pack ] || mv -f pool/.fetch/pack ./artifact.tar 2>/dev/null; } && rmdir pool/.fetch 2>/dev/null; then
		return 0
	fi
	h_nofetch write "cannot move the fetched blobs into the stage's pool (disk full?)"
	return 1
}

