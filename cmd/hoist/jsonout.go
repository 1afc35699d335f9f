package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/hoistdev/hoist/cmd/hoist/output"
	"github.com/hoistdev/hoist/lock"
)

// jsonLine is obj as one line of JSON, the keys of every object in sorted
// order (as hoist has always printed them, whatever the order of a type's
// fields).
func jsonLine(obj output.Object) string {
	b, err := json.Marshal(obj)
	if err == nil {
		b, err = sortKeys(b)
	}
	if err != nil {
		b = fmt.Appendf(nil, `{"error":%q}`, err.Error())
	}
	return string(b) + "\n"
}

// sortKeys rewrites the JSON value b with the keys of each object in
// sorted order. Strings and numbers are kept byte for byte.
func sortKeys(b []byte) ([]byte, error) {
	switch b = bytes.TrimSpace(b); {
	case len(b) > 0 && b[0] == '{':
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(b, &obj); err != nil {
			return nil, err
		}
		out := []byte{'{'}
		for i, k := range slices.Sorted(maps.Keys(obj)) {
			v, err := sortKeys(obj[k])
			if err != nil {
				return nil, err
			}
			if i > 0 {
				out = append(out, ',')
			}
			key, _ := json.Marshal(k)
			out = append(append(append(out, key...), ':'), v...)
		}
		return append(out, '}'), nil
	case len(b) > 0 && b[0] == '[':
		var arr []json.RawMessage
		if err := json.Unmarshal(b, &arr); err != nil {
			return nil, err
		}
		out := []byte{'['}
		for i, v := range arr {
			v, err := sortKeys(v)
			if err != nil {
				return nil, err
			}
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, v...)
		}
		return append(out, ']'), nil
	}
	return b, nil
}

// stateJSON is a lock state as --json shows it.
func stateJSON(s lock.State) *output.Lock {
	obj := &output.Lock{Store: s.Store, Locked: s.Locked, Stale: s.Stealable(), Debris: s.Debris}
	if !s.Locked {
		return obj
	}
	h := &output.Held{Token: s.Record.Token, Reason: s.Reason(), Why: string(s.Why), LeaseSeconds: seconds(s.Lease)}
	obj.Held = h
	if !s.RecordOK {
		h.Token, h.Record = "-", &s.Raw
	}
	if s.AgeKnown {
		h.AgeSeconds = ptr(seconds(s.Age))
	}
	if match, known := s.BootMatch(); known {
		h.BootMatch = &match
	}
	if match, known := s.NSMatch(); known {
		h.PIDNSMatch = &match
	}
	if left, ok := s.ExpiresIn(); ok {
		h.ExpiresInSeconds = ptr(seconds(left))
	}
	h.HolderProcess = string(s.Proc)
	if s.RecordOK {
		r := s.Record
		h.Owner = &output.Owner{
			Who: r.Who, PID: r.PID, Command: r.Command, Message: r.Message,
			Version: r.Version, Since: r.Since.UTC().Format(time.RFC3339), Boot: r.BootID,
			Machine: r.Machine, PIDNS: r.PIDNS, Init: r.Init,
			LeaseSeconds: seconds(r.Lease), HolderPID: r.HolderPID, HolderUID: r.HolderUID,
		}
		if r.Format == 1 {
			h.Owner.Boot = r.Boot
		}
	}
	return obj
}

func seconds(d time.Duration) int64 { return int64(d / time.Second) }

func ptr[T any](v T) *T { return &v }
