package store

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
)

// publishedRecord remembers, for one registry, the repository each blob a
// publish put there was last put in: a later publish into another
// repository mounts it from there instead of sending it (a tag that moves
// from a staging repository to a production one). It lives in the user's
// cache directory, hoist/published/, one file per registry. It only saves
// bytes: a mount gives a repository a blob only if the one named holds it,
// by digest, so a record that is wrong (or someone else's) costs an
// upload, never a wrong blob. Like the digest cache it is read only when
// the user's own and nobody else may write it.
type publishedRecord struct {
	path  string
	Host  string
	Blobs map[string]string // digest to repository
}

// maxRecorded bounds a record; past it, only the last publish's blobs stay.
const maxRecorded = 50000

// NoRecord, as PublishOptions.Record, keeps no record of publishes.
const NoRecord = "-"

// recordPath is where publishes to host are recorded, "" for none; file
// overrides it (NoRecord: none).
func recordPath(host, file string) string {
	switch file {
	case NoRecord:
		return ""
	case "":
	default:
		return file
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	key := sha256.Sum256([]byte(host))
	return filepath.Join(dir, "hoist", "published", hex.EncodeToString(key[:12]))
}

func loadRecord(host, file string) *publishedRecord {
	r := &publishedRecord{path: recordPath(host, file), Host: host, Blobs: map[string]string{}}
	if r.path == "" {
		return r
	}
	if b, ok := readOwn(r.path); ok {
		var saved publishedRecord
		if json.Unmarshal(b, &saved) == nil && saved.Host == host && saved.Blobs != nil {
			r.Blobs = saved.Blobs
		}
	}
	return r
}

// save records that repo now holds digests. Failing to is not an error:
// the next publish to another repository sends those blobs.
func (r *publishedRecord) save(repo string, digests []string) {
	if r.path == "" {
		return
	}
	if len(r.Blobs)+len(digests) > maxRecorded {
		r.Blobs = map[string]string{}
	}
	for _, d := range digests {
		r.Blobs[d] = repo
	}
	saveOwn(r.path, r)
}
