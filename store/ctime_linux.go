//go:build linux

package store

import "syscall"

func ctimeOf(st *syscall.Stat_t) int64 { return st.Ctim.Nano() }

// noChangeTime lists, by statfs magic, the file systems that keep no change
// time of their own and report the modification time in its place (which
// anyone who writes a file may set back): every FUSE file system (sshfs,
// whose SFTP has no change time, rclone, s3fs, ntfs-3g, ...; what each
// reports is up to its daemon), FAT (vfat, msdos), exFAT, HFS (not HFS+),
// UDF, and the old smbfs.
var noChangeTime = map[int64]string{
	0x65735546: "fuse",
	0x4d44:     "vfat",
	0x2011bab0: "exfat",
	0x4244:     "hfs",
	0x15013346: "udf",
	0x517b:     "smbfs",
}

// changeTimeKept reports whether the file system that holds p keeps a real
// change time; where it cannot tell, it does not.
func changeTimeKept(p string) bool {
	var fs syscall.Statfs_t
	if syscall.Statfs(p, &fs) != nil {
		return false
	}
	_, no := noChangeTime[int64(fs.Type)]
	return !no
}
