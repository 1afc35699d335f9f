package transport

import (
	"io/fs"
	"syscall"

	"github.com/pkg/sftp"
)

// FileOwner is the uid of the file fi describes, as an SFTP server or the
// local system gave it, and false when fi does not say.
func FileOwner(fi fs.FileInfo) (uint32, bool) {
	switch st := fi.Sys().(type) {
	case *sftp.FileStat:
		return st.UID, true
	case *syscall.Stat_t:
		return st.Uid, true
	}
	return 0, false
}
