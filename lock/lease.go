package lock

import "time"

// DefaultLease is the lease a lock this client takes carries unless
// [Lock.Lease] says otherwise, and the lease assumed for a record that names
// none unless [Lock.AssumedLease] does: a lock whose record was not renewed
// for this long may be stolen. The host renews the lease every quarter of it
// while a command works under the lock.
const DefaultLease = 20 * time.Minute

// MinLease is the shortest lease a record carries; a record with a shorter
// one, or none, falls under the assumed lease.
const MinLease = 2 * time.Second

// MaxLease is the longest lease a record carries (about 115 days: the host
// reads seven digits at most).
const MaxLease = 9999999 * time.Second

// DefaultGrace is the time a stopped command gets between SIGTERM and
// SIGKILL ([RunOptions.Grace]).
const DefaultGrace = 10 * time.Second
