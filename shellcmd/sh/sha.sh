# SHA-256 on the host: which tool works (h_shatool), the digest of a file
# (h_sha256) or of every file under a directory (h_shafind), and the refusal
# of a host that has none (h_nosha). A push verifies its archive with them
# (h_op_promote), the reuse of files the host already has its copies
# (h_reuse), and a resume the bytes it keeps (h_resume).

# h_shatool: whether the host has a SHA-256 tool h_sha256 can use: the
# first, in h_sha256's order, that is there and gives the digest of nothing
# (a tool found but broken, such as an openssl without its library, is
# passed over). Chosen once per command.
h_shatool() {
	[ -z "$h_shacmd" ] || return 0
	for h_shacmd in openssl sha256sum shasum sha256; do
		command -v "$h_shacmd" >/dev/null 2>&1 &&
			[ "$(h_shaof /dev/null)" = e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 ] &&
			return 0
	done
	h_shacmd=
	return 1
}

# h_shaany: the host has one of the SHA-256 tools at all (builtins only:
# whether it works shows when it is used).
h_shaany() {
	for h_x in openssl sha256sum shasum sha256; do
		command -v "$h_x" >/dev/null 2>&1 && return 0
	done
	return 1
}

# h_nosha [WHY]: says that the host cannot verify an upload, and what to do.
h_nosha() {
	h_say ERROR nosha256 "no openssl, sha256sum, shasum or sha256 on the host${1:+ ($1)}: install openssl or coreutils there"
}

# h_sha256 FILE: the file's SHA-256 in hex, by the fastest tool the host has:
# openssl dgst uses the CPU's SHA instructions, which coreutils' sha256sum
# does not (256 MiB: 0.26 s against 1.7 s on a machine that has them); then
# sha256sum (GNU, busybox), shasum, BSD's sha256. The tool h_shatool chose,
# or, when none was chosen yet, the first in that order whose answer for
# FILE is a digest: a working tool then costs no trial run, a broken one a
# run on FILE. Returns 3 when no tool gives one.
h_sha256() {
	if [ -n "$h_shacmd" ]; then
		h_shaof "$1"
		return
	fi
	for h_shacmd in openssl sha256sum shasum sha256; do
		command -v "$h_shacmd" >/dev/null 2>&1 || continue
		h_h=$(h_shaof "$1")
		case $h_h in
		*[!0-9a-f]*) ;;
		????????????????????????????????????????????????????????????????)
			printf '%s' "$h_h"
			return
			;;
		esac
	done
	h_shacmd=
	return 3
}

# h_shaof FILE: what the chosen tool (h_shacmd) says FILE's SHA-256 is.
h_shaof() {
	case $h_shacmd in
	openssl) openssl dgst -sha256 -r "$1" ;;
	sha256sum) sha256sum "$1" ;;
	shasum) shasum -a 256 "$1" ;;
	sha256) sha256 -q "$1" ;;
	esac 2>/dev/null | {
		read -r h_h _
		printf '%s' "$h_h"
	}
}

# h_shafind DIR: the SHA-256 of every plain file under DIR, one line each
# as the tool writes it ("<hex> *<path>" or "<hex>  <path>"), by the fastest
# tool, as few processes as find makes.
h_shafind() {
	[ -n "$h_shacmd" ] || h_shatool || return 1
	case $h_shacmd in
	openssl) find "$1" -type f -exec openssl dgst -sha256 -r {} + ;;
	sha256sum) find "$1" -type f -exec sha256sum {} + ;;
	shasum) find "$1" -type f -exec shasum -a 256 {} + ;;
	sha256) find "$1" -type f -exec sha256 -r {} + ;;
	esac 2>/dev/null
}
