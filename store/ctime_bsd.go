//go:build darwin || freebsd || netbsd || openbsd

package store

import "syscall"

func ctimeOf(st *syscall.Stat_t) int64 { return st.Ctimespec.Nano() }
