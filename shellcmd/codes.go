package shellcmd

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Code is an ERROR verdict's code: what the host could not do. Each is one
// row of [codes], with the package that reads it and the sentence it
// becomes ([Code.Explain]); [Op.Codes] says which operation may end with
// which.
type Code string

// The error codes.
const (
	CodeNoHome     Code = "nohome"
	CodePath       Code = "path"
	CodeMkdir      Code = "mkdir"
	CodeRecord     Code = "record"
	CodeLockPath   Code = "lockpath"
	CodeRelease    Code = "release"
	CodePermission Code = "permission"
	CodeChanged    Code = "changed"
	// The store's.
	CodeSpace     Code = "space"
	CodeForeign   Code = "foreign"
	CodeCollision Code = "collision"
	CodeUnpack    Code = "unpack"
	CodePromote   Code = "promote"
	CodeSwitch    Code = "switch"
	CodeStage     Code = "stage"
	CodeNoSHA256  Code = "nosha256"
	CodePin       Code = "pin"
	CodeGC        Code = "gc"
	// A health-checked switch's.
	CodeBad     Code = "bad"
	CodeJournal Code = "journal"
	CodeInDoubt Code = "indoubt"
	// A settled record whose runtime failed its checks after the settle.
	CodeUnhealthy Code = "unhealthy"
)

// codeSpec is one error code: the package whose errors it is (lock's
// HostError for both; store maps its own to its sentinel errors) and what it
// becomes for a person, from the host's text.
type codeSpec struct {
	code     Code
	owner    owner
	sentence func(text string) string
}

// codes is every error code.
var codes = []codeSpec{
	{CodeNoHome, ofLock, func(string) string {
		return "HOME is not set on the host, so a ~/ root cannot be resolved; pass an absolute --root"
	}},
	{CodePath, ofLock, func(d string) string {
		problem, p, _ := strings.Cut(d, " ")
		if what, ok := pathProblems[problem]; ok {
			return p + " " + what
		}
		return "unsafe store path: " + d
	}},
	{CodeMkdir, ofLock, func(d string) string {
		return "cannot create the store: " + d + "; check --root and its permissions"
	}},
	{CodeRecord, ofLock, func(d string) string {
		return "cannot write the lock's owner record: " + d + "; check free space and permissions"
	}},
	{CodeLockPath, ofLock, func(d string) string {
		what, p, _ := strings.Cut(d, " ")
		switch what {
		case "symlink":
			return p + " is a symlink, not the lock directory; hoist never follows one and touched nothing: remove it by hand if it is not meant to be there"
		case "file":
			return p + " is a file, not the lock directory; hoist touched nothing: remove it by hand if it is not meant to be there"
		}
		return p + " is in the lock directory but hoist never puts it there, so the lock is not hoist's; hoist touched nothing: remove it by hand if it is not meant to be there"
	}},
	{CodeRelease, ofLock, func(d string) string {
		return "the lock is ours but its record could not be moved out (" + d + "); check permissions on the store"
	}},
	{CodePermission, ofLock, func(d string) string {
		return "the lock could not be taken although a rule allows it: " + d + "; the login may not write the lock's directory (in a store a team shares, its directories need group write)"
	}},
	{CodeChanged, ofLock, func(string) string {
		return "the lock changed while it was being broken, and was left alone; run hoist lock status"
	}},

	{CodeSpace, ofStore, func(d string) string {
		need, free, _ := strings.Cut(d, " ")
		return fmt.Sprintf("not enough free space: the runtime needs %s in the store's filesystem, which has %s free; make room (hoist gc) and push again", kib(need), kib(free))
	}},
	{CodeForeign, ofStore, func(d string) string {
		return d + " exists and hoist did not promote it (it has no mark in .meta); it is left alone: move it away, or push under another --name"
	}},
	{CodeCollision, ofStore, func(d string) string {
		id, digest, _ := strings.Cut(d, " ")
		return id + " on the host is another tree whose digest (" + digest + ") shares the id's 12 digits; it is left alone: push under another --name"
	}},
	{CodeUnpack, ofStore, func(d string) string { return "the host could not unpack the upload: " + d }},
	{CodePromote, ofStore, func(d string) string { return "the host could not promote the runtime: " + d }},
	{CodeSwitch, ofStore, func(d string) string { return "the host could not switch current: " + d }},
	{CodeStage, ofStore, func(d string) string { return "the upload's stage: " + d }},
	{CodeNoSHA256, ofStore, func(d string) string { return "the host could not verify the upload: " + d }},
	{CodePin, ofStore, func(d string) string { return "the host could not pin the runtime: " + d }},
	{CodeGC, ofStore, func(d string) string { return "gc: " + d }},
	{CodeBad, ofRollout, func(d string) string {
		id, rest, _ := strings.Cut(d, " ")
		when, why, _ := strings.Cut(rest, " ")
		at := ""
		if n, err := strconv.ParseInt(when, 10, 64); err == nil {
			at = " at " + time.Unix(n, 0).UTC().Format(time.RFC3339)
		}
		return id + " is marked bad here: it failed its checks" + at + " (" + why + "); --force tries it anyway"
	}},
	{CodeJournal, ofRollout, func(d string) string {
		if p, ok := strings.CutSuffix(d, " exists"); ok {
			return p + " is there already (a resume ended this rollout here): nothing was switched; start a new rollout"
		}
		return d + " is not what hoist makes in a rollout's record; hoist touched nothing: look at it, and move the record away by hand"
	}},
	{CodeInDoubt, ofRollout, func(d string) string {
		id, rest, _ := strings.Cut(d, " ")
		dec, hosts, _ := strings.Cut(rest, " ")
		decider := "the decider"
		if i, err := strconv.Atoi(dec); err == nil {
			if hs := strings.Split(hosts, ","); i >= 0 && i < len(hs) {
				decider += " " + unpct(hs[i])
			}
		}
		return "rollout " + id + " is in doubt here (voted ready; " + decider + " has the decision); run hoist rollout resume " + id + ", or --force to override"
	}},
	{CodeUnhealthy, ofRollout, func(d string) string {
		id, rest, _ := strings.Cut(d, " ")
		rt, why, _ := strings.Cut(rest, " ")
		return "rollout " + id + " was settled here by the local rule, and " + rt + ", which current names, failed its checks after the settle (" + why +
			"): nothing else was switched (the record is finished and is not settled again); check the service, then run the command again"
	}},
}

// pathProblems says what each h_pathok problem means, and what to do.
var pathProblems = map[string]string{
	"symlink":      "is a symlink; hoist never follows one out of the store: replace it with a real directory",
	"notdir":       "is not a directory: move it away, or choose another --root",
	"owner":        "belongs to another user: it must be owned by the login or by root (chown it, or choose another --root)",
	"writable":     "is writable by others, so anyone on the host could change what hoist installs: chmod o-w it",
	"unreadable":   "cannot be read by the login: fix its permissions",
	"unsearchable": "cannot be searched by the login, so hoist cannot tell what is in it: fix its permissions",
	"acl":          "has an ACL, which could let others write to it and which hoist cannot check: remove it (setfacl -b), or use plain modes",
	"nosticky":     "is writable by its group but has no sticky bit, so one member could swap another's scratch directory: chmod +t it",
}

func kib(field string) string {
	n, err := strconv.ParseInt(field, 10, 64)
	if err != nil {
		return field + " KiB"
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/1024)
}

// codeSpecs finds a code's row.
var codeSpecs = rowsBy(codes, func(c *codeSpec) Code { return c.code })

// Explain is what an ERROR with code c and the host's text says, for a
// person (not yet made safe to print: [Printable]). A code the table does
// not know reads as the code and the text.
func (c Code) Explain(text string) string {
	if spec, ok := codeSpecs[c]; ok {
		return spec.sentence(text)
	}
	return strings.TrimSpace("host error: " + string(c) + " " + text)
}
