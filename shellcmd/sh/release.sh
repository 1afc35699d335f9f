# h_release: removes the lock only if its record still carries h_me, checked
# under the guard, so it never removes a lock that a stealer or a successor
# took. The lock is moved aside first and disappears at once. Returns 0 when
# released, 1 when the lock is someone else's (h_line says whose), 2 when
# there is no lock, 3 when the guard stayed busy (nothing was changed).
h_release() {
	h_guard_take || return 3
	if ! h_sample; then
		h_r=2
	elif [ "$h_tok" = "$h_me" ] && mv "$h_lock" "$h_lock.released-$h_me" 2>/dev/null; then
		h_r=0
	else
		h_r=1
	fi
	h_guard_drop
	rm -rf "$h_lock.released-$h_me"
	return $h_r
}

# h_say_release CODE: the verdict for h_release's result.
h_say_release() {
	case $1 in
	0) h_say RELEASED ;;
	1) h_say LOST "${h_line:--}" ;;
	2) h_say NOTHELD ;;
	*) h_say ERROR guard busy ;;
	esac
}
