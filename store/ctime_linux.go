//go:build linux

package store

import "syscall"

func ctimeOf(st *syscall.Stat_t) int64 { return st.Ctim.Nano() }

// changeTimeTrusted lists, by statfs magic, the only file systems whose
// change time hoist trusts: the kernel sets it on every change of a file's
// bytes or metadata, and nobody short of root can set it. Every other is
// distrusted, known or not: FUSE (sshfs, whose SFTP has no change time,
// rclone, s3fs, ntfs-3g: what each reports is up to its daemon), FAT,
// exFAT, HFS, UDF, 9p (v9fs over 9P2000.u reports the modification time
// for it), and those whose change time is real on the server but not
// always here: NFS (the client keeps a file's attributes up to a minute,
// so a change made from another machine can show its old times) and
// SMB/CIFS (a client may set a file's ChangeTime, and this one caches
// attributes too). Overlay's change times are its layers' (the upper
// layer's once a file is written), whose file systems statfs does not
// tell: a lower layer of a kind not listed here is not detected.
var changeTimeTrusted = map[uint32]string{
	0xEF53:     "ext2/ext3/ext4",
	0x58465342: "xfs",
	0x9123683E: "btrfs",
	0x01021994: "tmpfs",
	0x2FC12FC1: "zfs",
	0xF2F52010: "f2fs",
	0x794C7630: "overlay",
}

// changeTimeKept reports whether the file system that holds p keeps a
// change time hoist trusts; where it cannot tell, it does not.
func changeTimeKept(p string) bool {
	var fs syscall.Statfs_t
	if syscall.Statfs(p, &fs) != nil {
		return false
	}
	return keepsChangeTime(uint32(fs.Type))
}

// keepsChangeTime: magic (statfs's f_type, 32 bits on every Linux) names a
// file system of changeTimeTrusted.
func keepsChangeTime(magic uint32) bool {
	_, ok := changeTimeTrusted[magic]
	return ok
}
