package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// ErrSnapshotMismatch reports a resolved policy whose hash is not the one
// recorded with it.
var ErrSnapshotMismatch = errors.New("artifact policy snapshot does not match its hash")

// Hash is the hex SHA-256 of the canonical JSON encoding of r: struct fields
// in declaration order, map keys sorted, empty collections omitted, so the
// value survives a round trip through checkpoint.json.
func (r *Resolved) Hash() string {
	b, err := json.Marshal(r)
	if err != nil {
		// Resolved holds only strings, ints, slices and maps of strings.
		panic(fmt.Sprintf("policy: encode resolved policy: %v", err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// CheckSnapshot refuses a snapshot r whose hash is not hash, the value
// recorded next to it when the run started.
func CheckSnapshot(r *Resolved, hash string) error {
	if r == nil {
		return fmt.Errorf("%w: the checkpoint has no resolved policy; start a new run", ErrSnapshotMismatch)
	}
	got := r.Hash()
	if want := strings.TrimSpace(hash); got != want {
		return fmt.Errorf("%w: recorded %q, snapshot hashes to %q; the checkpoint was edited or damaged, start a new run",
			ErrSnapshotMismatch, want, got)
	}
	return nil
}

// Excluded reports whether checkpoint commits leave path out. path is
// slash-separated and relative to the repository root.
func (r *Resolved) Excluded(path string) bool {
	return firstMatch(r.Checkpoint.ExcludeGlobs, path) != ""
}

// VerifyDecision decides path for verify.artifacts: deny globs first, then
// allow carve-outs. It returns the first deny glob that matched and, if one
// did, the first allow glob that matched; denied is true when a deny glob
// matched and no allow glob did.
func (r *Resolved) VerifyDecision(path string) (denied bool, denyRule, allowRule string) {
	denyRule = firstMatch(r.Verify.DenyGlobs, path)
	if denyRule == "" {
		return false, "", ""
	}
	allowRule = firstMatch(r.Verify.AllowGlobs, path)
	return allowRule == "", denyRule, allowRule
}

// VerifyReport is the verdict on a set of candidate paths.
type VerifyReport struct {
	Offending        []string // denied paths, sorted, without duplicates
	MatchedDenyRules []string // deny globs that matched an offending path, sorted
	Allowed          []string // paths a deny glob matched but an allow glob carved out, sorted
}

// VerifyPaths applies VerifyDecision to every path.
func (r *Resolved) VerifyPaths(paths []string) VerifyReport {
	var rep VerifyReport
	for _, p := range paths {
		denied, deny, _ := r.VerifyDecision(p)
		switch {
		case denied:
			rep.Offending = append(rep.Offending, p)
			rep.MatchedDenyRules = append(rep.MatchedDenyRules, deny)
		case deny != "":
			rep.Allowed = append(rep.Allowed, p)
		}
	}
	for _, s := range []*[]string{&rep.Offending, &rep.MatchedDenyRules, &rep.Allowed} {
		slices.Sort(*s)
		*s = slices.Compact(*s)
	}
	return rep
}

// firstMatch returns the first glob matching path, or "". Globs were
// validated when the policy was resolved; one that is not valid matches
// nothing.
func firstMatch(globs []string, path string) string {
	for _, g := range globs {
		if ok, err := doublestar.Match(g, path); err == nil && ok {
			return g
		}
	}
	return ""
}
