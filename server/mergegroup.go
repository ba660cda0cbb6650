package server

import (
	"strconv"
	"strings"
)

// Actions of a merge_group delivery, GitHub's names.
const (
	ActionChecksRequested = "checks_requested"
	ActionDestroyed       = "destroyed"
)

// MergeGroup is a merge queue's group: a commit GitHub made on
// gh-readonly-queue/<base>/pr-<n>-<sha> that holds the base branch and the
// queued pull requests up to and including pull request n, and which must
// pass the required checks before GitHub merges it.
type MergeGroup struct {
	HeadSHA string `json:"head_sha,omitempty"`
	// HeadRef and BaseRef are branch names, without refs/heads/.
	HeadRef string `json:"head_ref,omitempty"`
	BaseSHA string `json:"base_sha,omitempty"`
	BaseRef string `json:"base_ref,omitempty"`
	// PR is the pull request the group was made for, from HeadRef; 0 when
	// the ref does not name one.
	PR int `json:"pr,omitempty"`
	// Reason says why a group was destroyed: merged, dequeued or
	// invalidated.
	Reason string `json:"reason,omitempty"`
}

// QueuePrefix starts the name of every merge group's branch.
const QueuePrefix = "gh-readonly-queue/"

// GroupPR reads the pull request number from a merge group's branch,
// gh-readonly-queue/<base>/pr-<n>-<sha> (the base may contain slashes);
// ok is false for any other name.
func GroupPR(ref string) (pr int, ok bool) {
	_, pr, ok = parseGroupRef(ref)
	return pr, ok
}

// groupOfBranch is the merge group whose branch is ref and head sha, as a
// check suite names it; ok is false when ref is not a group's branch.
func groupOfBranch(ref, sha string) (MergeGroup, bool) {
	base, pr, ok := parseGroupRef(ref)
	if !ok {
		return MergeGroup{}, false
	}
	return MergeGroup{HeadSHA: sha, HeadRef: strings.TrimPrefix(ref, "refs/heads/"), BaseRef: base, PR: pr}, true
}

func parseGroupRef(ref string) (base string, pr int, ok bool) {
	ref = strings.TrimPrefix(ref, "refs/heads/")
	if !strings.HasPrefix(ref, QueuePrefix) {
		return "", 0, false
	}
	slash := strings.LastIndexByte(ref, '/')
	base = ref[len(QueuePrefix):max(slash, len(QueuePrefix))]
	last := ref[slash+1:]
	num, sha, found := strings.Cut(strings.TrimPrefix(last, "pr-"), "-")
	if !found || !strings.HasPrefix(last, "pr-") || sha == "" || base == "" {
		return "", 0, false
	}
	n, err := strconv.Atoi(num)
	if err != nil || n <= 0 || strconv.Itoa(n) != num {
		return "", 0, false
	}
	return base, n, true
}
