//go:build linux

package store

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/hoistdev/hoist/e2e/sshd"
)

// TestChangeTimeTrustedOnlyWhereKnown: the digest cache trusts the change
// times of the file systems it knows keep them, and of no other: one it
// does not know is distrusted, not trusted (v9fs over 9P2000.u reports the
// modification time as the change time, and is no FUSE, FAT or exFAT). A
// real ramfs (not on the list, though it keeps change times) and a real
// tmpfs (on it), mounted here, are judged as their magic says.
func TestChangeTimeTrustedOnlyWhereKnown(t *testing.T) {
	for magic, want := range map[uint32]bool{
		0xEF53: true, 0x58465342: true, 0x9123683E: true, 0x01021994: true, 0x2FC12FC1: true, 0xF2F52010: true, 0x794C7630: true,
		0x01021997: false, // v9fs
		0x65735546: false, // fuse
		0x4d44:     false, // vfat
		0x2011bab0: false, // exfat
		0x6969:     false, // nfs
		0xFF534D42: false, // cifs
		0xFE534D42: false, // smb2
		0x858458f6: false, // ramfs
		0x12345678: false, // none known
	} {
		if got := keepsChangeTime(magic); got != want {
			t.Errorf("file system magic %#x: change time trusted %v, want %v", magic, got, want)
		}
	}

	sshd.RequireRoot(t)
	for fs, want := range map[string]bool{"ramfs": false, "tmpfs": true} {
		dir := filepath.Join(t.TempDir(), fs)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("mount", "-t", fs, fs, dir).CombinedOutput(); err != nil {
			t.Fatalf("mount -t %s: %v %s", fs, err, out)
		}
		t.Cleanup(func() { exec.Command("umount", dir).Run() })
		if got := changeTimeKept(dir); got != want {
			t.Errorf("a real %s: change time trusted %v, want %v", fs, got, want)
		}
	}
}
