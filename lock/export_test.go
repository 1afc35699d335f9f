package lock

// The test hooks of package lock, for its tests only.

// SetPause makes every command on l stop at the protocol steps at
// (docs/protocol.md names them): at step S the host creates dir/S.at and
// waits until dir/S.go exists.
func SetPause(l *Lock, dir string, at ...string) { l.pause.dir, l.pause.at = dir, at }

// PauseDir is where l's commands stop (SetPause).
func PauseDir(l *Lock) string { return l.pause.dir }
