# The local rule's checks (docs/rollout.md, "The local rule"): once a
# settle has restarted the runtime it went back to (or finished an
# --atomic commit on the new one), the record's exec checks run again on
# it, with the record's timing, in this host command, under the hold it
# already has (its guardian renews the lease as for the sequence). The
# dialled probes are the client's, and a settle may have none: they are
# not run, and SETTLED says how many there were. A runtime that fails is
# not switched again: the record is finished where it is, and the
# command reports it (h_settle).

# h_recheck DIR: the checks of record DIR (h_recread read its plan) after
# the settle chose h_jside (h_jran: it restarted, or committed): h_jck is
# healthy, unhealthy (h_jwhy says why; a restart that failed counts),
# unchecked (no exec check was given), old (a record of an older hoist,
# which does not keep its checks) or - (nothing restarted: nothing to
# check); h_jrt the runtime. Says SETTLED id side runtime checks dialled
# why.
h_recheck() {
	h_jck=- h_jwhy= h_jrt=$h_jf h_jo=$h_jt
	[ "$h_jside" = from ] || h_jrt=$h_jt h_jo=$h_jf
	if [ -z "$h_jran" ] || [ "$(h_pointer current)" != "$h_jrt" ]; then
		h_jck=-
	elif [ -z "$h_jnew" ]; then
		h_jck=old
	elif [ -n "$h_jrst" ] && [ "$h_jrst" != 0 ]; then
		h_jck=unhealthy h_jwhy="restart: exit $h_jrst"
	elif [ ! -f "$1/checks" ] || [ -L "$1/checks" ]; then
		h_jck=unchecked
	else
		h_seqinit
		h_pchecks=$(cat "$1/checks") h_pint=$h_jint h_ptmo=$h_jtmo h_pdl=$h_jdl h_pstb=$h_jstb h_sq=1
		h_sub=$h_jrt h_oth=$h_jo h_ndial=0 h_stay=1
		h_jck=healthy
		h_probe || h_jck=unhealthy h_jwhy=$h_why
		h_sq=
	fi
	h_say SETTLED "$h_jid" "$h_jside" "${h_jrt:--}" "$h_jck" "$h_jnd" "$(h_pct "$(h_oneline "${h_jwhy:--}")")"
}
