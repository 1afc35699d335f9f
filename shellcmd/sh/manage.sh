# h_op_list: every runtime hoist promoted (h_present), newest first
# (h_byorder), one RT line each: id, promoted (epoch), size, flags (c
# current, p previous, P pinned, b marked bad, with a BAD line after it,
# - none), its place in the order of
# promotions (h_order), name; then the rollout records left unfinished
# here (h_sayunfin). Read-only, but for a rollout's staging (hp_hid): then
# the witness of its plan (h_witness) before LISTED.
h_op_list() {
	if [ ! -d "$h_store" ]; then
		h_say NOSTORE
		return
	fi
	h_cur=$(h_pointer current) h_prev=$(h_pointer previous)
	h_wx= h_wn= h_wp= h_wc=0
	h_byorder
	h_ifs=$IFS
	IFS='
'
	for h_l in $h_all; do
		IFS=$h_ifs
		h_i=${h_l#* }
		h_present "$h_i" || continue
		[ -z "$hp_hid" ] || h_wpick "$h_i" "$h_mname"
		h_f=
		if [ "$h_i" = "$h_cur" ]; then h_f=${h_f}c; fi
		if [ "$h_i" = "$h_prev" ]; then h_f=${h_f}p; fi
		if [ -e "$h_store/.pins/$h_i" ]; then h_f=${h_f}P; fi
		h_bad=
		if h_isbad "$h_i"; then h_f=${h_f}b h_bad=1; fi
		h_say RT "$h_i" "${h_mwhen:-0}" "${h_msize:-0}" "${h_f:--}" "$h_mord" "${h_mname:--}"
		[ -z "$h_bad" ] || h_say BAD "$h_i" "${h_bwhen:--}" "${h_brid:--}" "$(h_pct "${h_bwhy:--}")"
	done
	IFS=$h_ifs
	[ -z "$hp_hid" ] || h_witness "$h_cur"
	h_sayunfin
	h_say LISTED
}

# h_nostore: activate, rollback and pin on a host without a store answer so,
# take no lock and create nothing.
h_nostore() {
	[ ! -d "$h_store" ] || return 1
	h_say NOSTORE
}

# h_op_activate: switch current to hp_id, under the lock (waits): after
# settling what an earlier sequence left (h_settle), and only with hp_force
# when hp_id is marked bad here; health-checked with hp_hid (h_switch).
h_op_activate() {
	h_nostore && return
	if ! h_present "$hp_id"; then
		h_say NOTFOUND "$hp_id"
		return
	fi
	h_take || return
	if ! h_present "$hp_id"; then
		h_say NOTFOUND "$hp_id"
	elif h_badok "$hp_id" && h_settle; then
		h_switch "$hp_id" activate
	fi
	h_release_end
	rm -rf "$h_scr"
}

# h_op_rollback: current goes back to previous (or, with hp_id, to that
# runtime), and previous to what was current, under the lock. Without
# hp_id a runtime marked bad is passed over (h_rbtarget); with it, it is
# tried only with hp_force.
h_op_rollback() {
	h_nostore && return
	if [ -z "$hp_id" ] && [ -z "$(h_pointer previous)" ]; then
		h_say NOPREVIOUS
		return
	fi
	if [ -n "$hp_id" ] && ! h_present "$hp_id"; then
		h_say NOTFOUND "$hp_id"
		return
	fi
	h_take || return
	if h_settle; then
		h_to=$hp_id
		[ -n "$h_to" ] || h_rbtarget
		if [ -n "$h_to" ] && h_present "$h_to"; then
			! h_badok "$h_to" || h_switch "$h_to" rollback
		elif [ -n "$hp_id" ]; then
			h_say NOTFOUND "$hp_id"
		else
			h_say NOPREVIOUS
		fi
	fi
	h_release_end
	rm -rf "$h_scr"
}

# h_switch ID ACTION: the switch itself: with hp_hid (a restart or checks
# were given) the health-checked sequence (h_health), else h_activate.
h_switch() {
	if [ -n "$hp_hid" ] && [ "$(h_pointer current)" != "$1" ]; then
		h_health "$1" "$2"
	else
		h_activate "$1" "$2"
	fi
}

# h_op_pin: a pin keeps a runtime from garbage collection until unpinned;
# changed under the lock, like every store mutation.
h_op_pin() {
	h_nostore && return
	if ! h_present "$hp_id"; then
		h_say NOTFOUND "$hp_id"
		return
	fi
	h_take || return
	if ! h_present "$hp_id"; then
		h_say NOTFOUND "$hp_id"
	elif h_fence; then
		if [ -n "$hp_unpin" ]; then
			rm -f "$h_store/.pins/$hp_id" && h_say UNPINNED "$hp_id"
		else
			# A pin is an empty file; one made here never truncates
			# what a link put at its name leads to (set -C).
			h_pin=$h_store/.pins/$hp_id
			if h_mkshared "$h_store/.pins" && { { [ -f "$h_pin" ] && [ ! -L "$h_pin" ]; } || (set -C && : >"$h_pin") 2>/dev/null; }; then
				h_say PINNED "$hp_id"
			elif [ -e "$h_pin" ] || [ -L "$h_pin" ]; then
				h_say ERROR pin "$(h_oneline "$hp_storedir/.pins/$hp_id") is not a plain file (a link?), so hoist left it alone: remove it by hand and pin again"
			else
				h_say ERROR pin "cannot write $(h_oneline "$hp_storedir/.pins/$hp_id"): check free space and permissions on the store"
			fi
		fi
	fi
	h_release_end
	rm -rf "$h_scr"
}

# h_op_history: the last switches of current, oldest first, one HIST line
# each: when (epoch), action, from (or -), to, and who (the client's part of
# the lock record, as it was). Read-only.
h_op_history() {
	if [ ! -d "$h_store" ]; then
		h_say NOSTORE
		return
	fi
	if [ -f "$h_root/history" ] && [ ! -L "$h_root/history" ]; then
		tail -n 200 "$h_root/history" | while IFS=' ' read -r h_w h_act h_from h_to h_who; do
			case $h_w:$h_act:$h_from:$h_to in
			*[!0-9A-Za-z._+:-]*) continue ;;
			esac
			h_say HIST "$h_w" "$h_act" "$h_from" "$h_to" "${h_who:--}"
		done
	fi
	h_say LISTED
}
