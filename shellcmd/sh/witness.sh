# Witnesses of a rollout in batches (docs/rollout.md, "Resume of a rollout
# in batches"): runtimes/.rollouts/.plan-<id>, one line, written by every
# host as it stages (the list that ends staging), so that a host whose
# batch is never reached still vouches for the plan a resume would run
# there. A witness is not a record: nothing settles it, nothing refuses on
# it, gc keeps nothing for it (its name starts with a dot, which the globs
# of the records never match), and gc sweeps it by age.

# h_wpick ID NAME: during a list, what the REF hp_id resolves to, as the
# client resolves it (an id, then the newest runtime of that name, then
# the one id it is a prefix of): h_wx, h_wn and h_wp (h_wc prefixes).
h_wpick() {
	[ "$1" != "$hp_id" ] || h_wx=$1
	[ -n "$h_wn" ] || [ "$2" != "$hp_id" ] || h_wn=$1
	case $1 in "$hp_id"*)
		h_wp=$1 h_wc=$((h_wc + 1))
		;;
	esac
}

# h_witness CURRENT: writes the witness of rollout hp_hid (its plan
# hp_hplan, its runtime the one hp_id names), once (a witness there is
# left as it is) and whole (a temporary file renamed), and says WITNESSED
# id to. Not on a host already on it (it takes no part), nor without a
# plan. A witness that cannot be written is no error: a resume then needs
# the operator's word for this host, as for one without a record.
h_witness() {
	h_wto=${h_wx:-$h_wn}
	[ -n "$h_wto" ] || [ "$h_wc" != 1 ] || h_wto=$h_wp
	[ -n "$h_wto" ] && [ -n "$hp_hplan" ] && [ "$h_wto" != "$1" ] && h_isrid "$hp_hid" || return 0
	h_wf=$h_store/.rollouts/.plan-$hp_hid
	h_wt=$h_wf.$$.t
	if [ -e "$h_wf" ] || [ -L "$h_wf" ]; then return 0; fi
	# set -C: the temporary file is made, never opened through what was
	# planted at its name.
	{ h_mkshared "$h_store/.rollouts" && (
		umask 077
		set -C
		printf 'hoist-witness/1 id=%s to=%s%s\n' "$hp_hid" "$h_wto" "$hp_hplan" >"$h_wt"
	) && mv -f "$h_wt" "$h_wf"; } 2>/dev/null || {
		rm -f "$h_wt"
		return 0
	}
	# A directory planted at the name since the look: it got the file.
	if [ -e "$h_wf/${h_wt##*/}" ]; then
		rm -f "$h_wf/${h_wt##*/}"
		return 0
	fi
	h_say WITNESSED "$hp_hid" "$h_wto"
}

# h_rwitness: a resume's word on the witness of hp_hid here: WITNESS id to
# hosts opts, as the witness says them, or "-" for each when it is not as
# hoist writes it (not a regular file that no one else may write, or not
# one line of its form): the client refuses on that. Nothing when there is
# none, or when it is another login's (a team store's): this login cannot
# read it, and it vouches for nothing here.
h_rwitness() {
	h_wf=$h_store/.rollouts/.plan-$hp_hid
	[ -e "$h_wf" ] || [ -L "$h_wf" ] || return 0
	if [ ! -L "$h_wf" ] && [ -n "$(find "$h_wf" -prune -type f ! -user "$h_uid" 2>/dev/null)" ]; then return 0; fi
	h_wto=- h_whosts=- h_wopts=-
	if [ ! -L "$h_wf" ] && [ -n "$(find "$h_wf" -prune -type f -user "$h_uid" ! -perm -020 ! -perm -002 2>/dev/null)" ]; then
		h_wl=$(head -n 2 "$h_wf" 2>/dev/null)
		case $h_wl in
		"hoist-witness/1 id=$hp_hid to="*" hosts="*" opts="*) ;;
		*) h_wl= ;;
		esac
		# shellcheck disable=SC2086 # its fields, split on purpose (set -f)
		set -- $h_wl
		if [ $# -eq 5 ]; then
			h_wto=${3#to=} h_whosts=${4#hosts=} h_wopts=${5#opts=}
		fi
	fi
	h_say WITNESS "$hp_hid" "${h_wto:--}" "${h_whosts:--}" "${h_wopts:--}"
}

# h_wlatest: RWITNESS with the latest rollout witnessed here (ids begin
# with a UTC time: lexical order), for rollout status without ID: a resume
# without ID counts a witness as recorded, so that a rollout whose client
# stopped before its first batch (no record anywhere) is found. Only a
# regular file's name is read (the resume reads it as h_rwitness does);
# nothing when there is none.
h_wlatest() {
	set +f
	h_wl=$(for h_d in "$h_store"/.rollouts/.plan-*; do
		h_i=${h_d##*/.plan-}
		if ! h_isrid "$h_i" || [ -L "$h_d" ] || [ ! -f "$h_d" ]; then continue; fi
		printf '%s\n' "$h_i"
	done | LC_ALL=C sort | tail -n 1)
	set -f
	[ -z "$h_wl" ] || h_say RWITNESS "$h_wl"
}
