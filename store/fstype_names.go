package store

// keepsChangeTimeNamed reports whether a file system of this type name (as
// statfs gives it on macOS and FreeBSD) keeps a change time hoist trusts:
// only those listed, where the kernel sets it on every change of a file:
// APFS and HFS+ ("hfs"), UFS, ZFS and tmpfs. Every other is
// distrusted, known or not: FAT ("msdos"), exFAT, every FUSE file system
// (macFUSE, fusefs), WebDAV, and NFS and SMB ("nfs", "smbfs"), whose
// clients cache attributes.
func keepsChangeTimeNamed(name string) bool {
	switch name {
	case "apfs", "hfs", "ufs", "zfs", "tmpfs":
		return true
	}
	return false
}
