# The doctor's registry item (hoist doctor --via): whether the host can
# reach the registry a push through it would fetch from, with the tool the
# fetch would use (fetchget.sh), and how long one request takes. It asks
# for the registry's /v2/ without credentials (an answer of 401 says the
# registry is there, and asks for what a push hands), verifying TLS as the
# fetch does; the CA travels on the tool's standard input, so the doctor
# writes nothing on the host.

# h_op_reach: says CHECK registry with the tool as its value.
h_op_reach() {
	if ! h_fetchtool; then
		h_say CHECK registry fail - "$(h_oneline "$h_fw")"
		return
	fi
	h_ru=${hp_furl%%/v2/*}/v2/
	h_rc=/dev/null
	[ -n "$hp_fca" ] && h_rc=/dev/stdin
	h_ra=
	case $h_ft in
	curl)
		h_pr="=https"
		[ -n "$hp_fplain" ] && h_pr="=http,https"
		set -- curl -sS -o /dev/null -w '%{http_code} %{time_total}' --connect-timeout 5 --max-time 10 --proto "$h_pr"
		[ -n "$hp_fca" ] && set -- "$@" --cacert /dev/stdin
		h_ra=$(echo "$hp_fca" | "$@" "$h_ru" 2>&1)
		h_rx=$?
		;;
	*)
		set -- wget -q --spider
		[ "$h_ft" = wget ] && set -- "$@" -T 10 -t 1
		[ "$h_ft" = wget ] && [ -n "$hp_fca" ] && set -- "$@" --ca-certificate=/dev/stdin
		h_rs=$(date +%s)
		h_ra=$(echo "$hp_fca" | "$@" "$h_ru" 2>&1)
		h_rx=$?
		# GNU wget: 6 is an answer that asks for credentials.
		[ "$h_rx" = 6 ] && h_rx=0 h_ra="401"
		h_ra="${h_ra:-200} $(($(date +%s) - h_rs))"
		;;
	esac
	case $h_rx:$h_ra in
	0:200\ * | 0:401\ *)
		h_say CHECK registry ok "$h_ft" "$(h_oneline "$h_ft reached $h_ru: HTTP ${h_ra%% *} in ${h_ra#* } s")"
		;;
	*)
		h_say CHECK registry fail "$h_ft" "$(h_oneline "$h_ft could not reach $h_ru (exit $h_rx): ${h_ra:-no answer}")"
		;;
	esac
}
