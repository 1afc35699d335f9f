package lock

import "github.com/hoistdev/hoist/shellcmd"

// fixFor says what to do about a host check that is not ok.
func fixFor(c Check) string {
	switch c.Name {
	case "login":
		return "make sure the login has a passwd entry"
	case "sh":
		return "hoist is tested with dash, bash, busybox ash and mksh as /bin/sh; others that are POSIX should work"
	case "userland":
		return "hoist is tested with GNU coreutils, busybox and BSD userlands; install GNU coreutils or busybox"
	case "stat":
		return "install GNU coreutils or busybox (stat -c %Y), so a lock whose holder vanished frees when its lease runs out"
	case "sha256":
		return "install GNU coreutils (sha256sum) or perl (shasum): push verifies every upload with it"
	case "tar":
		return "install tar: push unpacks every upload with it"
	case "sleep":
		return "install GNU coreutils or busybox (sleep 0.1), so waits poll every 100 ms"
	case "mv":
		if c.Value == "" {
			return "install GNU coreutils or busybox (mv -T): activate and rollback rename current with it"
		}
	case "touch":
		if c.Value == "" {
			return "install GNU coreutils or busybox (touch -c): heartbeats renew leases with it"
		}
	case "setsid":
		return "install util-linux (setsid), so hoist run can stop everything a command started"
	case "df":
		return "install a df that takes -P (GNU coreutils, busybox)"
	case "find":
		return "install GNU findutils or busybox (find -mmin), so gc removes abandoned uploads"
	case "boot":
		return "give the host a machine id (systemd-machine-id-setup) and a readable /proc/sys/kernel/random/boot_id"
	case "proc":
		return "mount the login's own /proc (in a container, its PID namespace's), so hoist can tell that a holder has exited"
	case "clock":
		if c.Value == "" {
			return "hoist reads ages with date +%s on the host: install GNU coreutils or busybox"
		}
		return "sync the host's clock (NTP: timedatectl set-ntp true, or chrony): lock records carry the host's time"
	case "rtt":
		return "a closer network path or a jump host nearer the host helps; hoist works either way"
	case "root":
		switch c.Value {
		case "nohome":
			return (&HostError{Code: shellcmd.CodeNoHome}).Error()
		case "unsearchable":
			return "let the login search the directories above the root (chmod o+x), or choose another --root"
		case "notdir":
			return "move what is in the way, or choose another --root"
		case "unwritable":
			return "create the root (mkdir, then chown it to the login), or choose another --root"
		}
	case "paths":
		return (&HostError{Code: shellcmd.CodePath, Detail: c.Detail}).Error()
	case "space":
		return "free space on that filesystem (hoist gc drops old runtimes), or choose another --root"
	case "lock":
		if c.Status == CheckFail {
			return (&HostError{Code: shellcmd.CodeLockPath, Detail: c.Detail}).Error()
		}
		if c.Value == "" {
			return "fix the store's paths first (see paths)"
		}
		return "see hoist lock status"
	}
	return ""
}
