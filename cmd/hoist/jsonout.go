package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/hoistdev/hoist/lock"
)

// jsonLine is v as one line of JSON.
func jsonLine(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		b = fmt.Appendf(nil, `{"error":%q}`, err.Error())
	}
	return string(b) + "\n"
}

// stateJSON is the stable shape of a lock state in --json output.
func stateJSON(s lock.State) map[string]any {
	obj := map[string]any{"store": s.Store, "locked": s.Locked, "stale": s.Stealable()}
	if len(s.Debris) > 0 {
		obj["debris"] = s.Debris
	}
	if !s.Locked {
		return obj
	}
	obj["token"] = s.Record.Token
	if !s.RecordOK {
		obj["token"] = "-"
		obj["record"] = s.Raw
	}
	if s.AgeKnown {
		obj["age_seconds"] = int64(s.Age / time.Second)
	} else {
		obj["age_seconds"] = nil
	}
	obj["reason"] = s.Reason()
	obj["why"] = s.Why
	if match, known := s.BootMatch(); known {
		obj["boot_match"] = match
	}
	if match, known := s.NSMatch(); known {
		obj["pidns_match"] = match
	}
	obj["lease_seconds"] = int64(s.Lease / time.Second)
	obj["expires_in_seconds"] = nil
	if left, ok := s.ExpiresIn(); ok {
		obj["expires_in_seconds"] = int64(left / time.Second)
	}
	if s.Proc != "" {
		obj["holder_process"] = s.Proc
	}
	if s.RecordOK {
		r := s.Record
		owner := map[string]any{
			"who": r.Who, "pid": r.PID, "command": r.Command, "message": r.Message,
			"version": r.Version, "since": r.Since.UTC().Format(time.RFC3339), "boot": r.BootID,
			"machine": r.Machine, "pidns": r.PIDNS, "init": r.Init,
			"lease_seconds": int64(r.Lease / time.Second), "holder_pid": r.HolderPID, "holder_uid": r.HolderUID,
		}
		if r.Format == 1 {
			owner["boot"] = r.Boot
		}
		obj["owner"] = owner
	}
	return obj
}
