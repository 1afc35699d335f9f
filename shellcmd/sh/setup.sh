# h_setup: the paths and poll counts every operation uses. A home-relative root
# resolves on the host, against the HOME that sshd gave the login.
h_setup() {
	if [ -n "$h_rooth" ]; then
		if [ -z "$HOME" ]; then
			h_say ERROR nohome
			exit 0
		fi
		h_root=$HOME${h_rootp:+/$h_rootp}
	else
		h_root=$h_rootp
	fi
	h_store=$h_root/$h_storedir h_lock=$h_root/$h_storedir/$h_lockname
	h_guard=$h_lock.guard h_scr=
	h_every=1
	if [ "$h_nap" != 1 ]; then h_every=10; fi
	h_gtries=$(((h_gstale + 5) * h_every))
	h_acktries=$((30 * h_every))
}

# h_mkstore: acquiring creates the store; only try-acquire never does.
h_mkstore() {
	[ ! -d "$h_store" ] || return 0
	h_e=$(mkdir -p "$h_store" 2>&1) && return 0
	h_say ERROR mkdir "$(h_oneline "$h_e")"
	return 1
}

# h_scratch: a directory of this command's own, for the marker files of the
# stdin watcher and a run's output.
h_scratch() {
	h_scr=$h_root/$h_runsdir/$h_me
	h_e=$(mkdir -p "$h_scr" 2>&1) && return 0
	h_say ERROR mkdir "$(h_oneline "$h_e")"
	h_scr=
	return 1
}
