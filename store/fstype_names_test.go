package store

import "testing"

// TestChangeTimeTrustedOnlyWhereNamed: on macOS and FreeBSD, the file
// systems whose change times the digest cache trusts are named; any other
// name, known or not, is distrusted.
func TestChangeTimeTrustedOnlyWhereNamed(t *testing.T) {
	for name, want := range map[string]bool{
		"apfs": true, "hfs": true, "ufs": true, "zfs": true, "tmpfs": true,
		"msdos": false, "exfat": false, "webdav": false, "macfuse": false, "fusefs.sshfs": false,
		"nfs": false, "smbfs": false, "cd9660": false, "udf": false, "nullfs": false, "": false,
	} {
		if got := keepsChangeTimeNamed(name); got != want {
			t.Errorf("file system %q: change time trusted %v, want %v", name, got, want)
		}
	}
}
