# The doctor's look at the tools the protocol runs (hoist doctor, doctor.sh):
# each probed as the protocol uses it, read-only.

# h_dr_tools: each tool the protocol uses, as it uses it.
h_dr_tools() {
	case $h_stat in
	gnu) h_dr_check stat ok gnu "stat -c %Y prints modification times" ;;
	bsd) h_dr_check stat ok bsd "stat -f %m prints modification times" ;;
	*) h_dr_check stat warn none "neither stat -c %Y nor stat -f %m works: lock ages cannot be read, so the stale rule never frees a lock" ;;
	esac

	# h_shatool passes over a tool that does not print the SHA-256 of an
	# empty file.
	if h_shatool; then
		h_dr_check sha256 ok "$h_shacmd" "$h_shacmd verifies uploads"
	else
		h_dr_check sha256 fail - "no working openssl, sha256sum, shasum or sha256: push cannot verify uploads"
	fi

	if command -v tar >/dev/null 2>&1; then
		h_drx=$(LC_ALL=C tar --version </dev/null 2>&1 | head -n 1)
		case $h_drx in
		*"GNU tar"*) h_drv=gnu ;;
		*bsdtar*) h_drv=bsd ;;
		*busybox* | *BusyBox*) h_drv=busybox ;;
		*) h_drv=tar ;;
		esac
		h_dr_check tar ok "$h_drv" "tar unpacks uploads: ${h_drx:-tar}"
	else
		h_dr_check tar fail - "no tar: push cannot unpack uploads"
	fi

	if command -v gzip >/dev/null 2>&1; then
		h_dr_check gzip ok gzip "gzip is there (not needed: hoist uploads a plain tar)"
	else
		h_dr_check gzip ok - "no gzip, which hoist does not need: it uploads a plain tar"
	fi

	if [ "$h_nap" = 0.1 ]; then
		h_dr_check sleep ok 0.1 "sleep takes fractions: waits poll every 100 ms"
	else
		h_dr_check sleep warn 1 "sleep takes whole seconds only: waits poll every second"
	fi

	if [ ! -c /dev/null ]; then
		h_dr_check mv warn - "/dev/null is not a device: mv -T cannot be probed without writing"
		h_dr_check touch warn - "/dev/null is not a device: touch -c cannot be probed without writing"
	else
		if h_dr_hasopt mv -T; then
			h_dr_check mv ok mv-T "mv -T renames over a symlink atomically"
		elif h_dr_hasopt mv -h; then
			h_dr_check mv ok mv-h "mv -h renames over a symlink atomically"
		else
			h_dr_check mv fail - "neither mv -T nor mv -h: activate and rollback cannot switch current"
		fi
		if h_dr_hasopt touch -c; then
			h_dr_check touch ok touch-c "touch -c renews leases"
		else
			h_dr_check touch fail - "touch has no -c: leases cannot be renewed"
		fi
	fi

	if command -v setsid >/dev/null 2>&1; then
		h_dr_check setsid ok setsid "setsid gives each run a session of its own"
	else
		h_dr_check setsid warn - "no setsid: a run's command gets no session of its own, so what it leaves in the background is not stopped"
	fi

	h_drx=$(df -Pk / 2>/dev/null | {
		read -r _
		read -r _ _ _ h_av _
		printf '%s' "$h_av"
	})
	case $h_drx in
	'' | *[!0-9]*) h_dr_check df warn - "df -Pk does not tell the free space: push cannot check it before unpacking" ;;
	*) h_dr_check df ok df-P "df -Pk tells the free space" ;;
	esac

	if find /dev/null -mmin -1 >/dev/null 2>&1; then
		h_dr_check find ok find-mmin "find -mmin tells an abandoned upload from one in flight"
	else
		h_dr_check find warn - "find has no -mmin: gc cannot tell an abandoned upload from one in flight, and leaves them"
	fi
}

# h_dr_hasopt TOOL OPTION: TOOL takes OPTION, asked with paths under
# /dev/null, which cannot exist: the tool fails either way, and only says
# "option" (invalid, illegal, unrecognized) or its usage when it does not
# take it.
h_dr_hasopt() {
	h_drx=$(LC_ALL=C "$1" "$2" /dev/null/hoist-a /dev/null/hoist-b 2>&1 </dev/null)
	case $h_drx in *option* | *[Uu]sage*) return 1 ;; esac
}
