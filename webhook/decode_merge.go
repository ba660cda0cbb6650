package webhook

import (
	"strings"

	"github.com/kilroy-bot/kilroy-bot/server"
)

// decodeMergeGroup decodes the merge queue's deliveries: checks_requested
// (run the pipelines on the group's head commit) and destroyed (cancel
// them). The group's pull request comes from its branch name,
// gh-readonly-queue/<base>/pr-<n>-<sha>; a group whose branch names none
// still runs, reported on its head commit.
//
// A merge queue sends one delivery per group, and a busy queue many, so
// the payload is scanned like a pull_request's (scan.go), with
// encoding/json on any doubt.
func decodeMergeGroup(payload []byte) (Event, error) {
	var p mergeGroupPayload
	if !scanMergeGroup(payload, &p) {
		p = mergeGroupPayload{}
		if err := unmarshal(payload, &p); err != nil {
			return Event{}, err
		}
	}
	if p.Action != server.ActionChecksRequested && p.Action != server.ActionDestroyed {
		return Event{}, ignoredAction("merge_group", p.Action)
	}
	g := p.MergeGroup
	switch {
	case g == nil:
		return Event{}, missing("merge_group", "merge_group")
	case p.Repository == nil:
		return Event{}, missing("merge_group", "repository")
	case g.HeadSHA == "":
		return Event{}, missing("merge_group", "merge_group.head_sha")
	case g.BaseRef == "":
		return Event{}, missing("merge_group", "merge_group.base_ref")
	}
	ev := p.base(KindMergeGroup)
	ev.MergeGroup = MergeGroup{
		HeadSHA: g.HeadSHA,
		HeadRef: strings.TrimPrefix(g.HeadRef, "refs/heads/"),
		BaseSHA: g.BaseSHA,
		BaseRef: strings.TrimPrefix(g.BaseRef, "refs/heads/"),
		Reason:  p.Reason,
	}
	ev.MergeGroup.PR, _ = server.GroupPR(g.HeadRef)
	return ev, nil
}

// The keys read from a merge_group payload.
var (
	mergeGroupPayloadKeys = []string{"action", "repository", "installation", "sender", "merge_group", "reason"}
	mergeGroupKeys        = []string{"head_sha", "head_ref", "base_sha", "base_ref"}
)

// scanMergeGroup fills p from payload; false means "decode it with
// encoding/json instead".
func scanMergeGroup(payload []byte, p *mergeGroupPayload) bool {
	s := &jscan{buf: payload}
	return s.document(func() bool {
		return s.members(mergeGroupPayloadKeys, func(key string) bool {
			switch key {
			case "action":
				return s.str(&p.Action)
			case "repository":
				return s.repo(&p.Repository)
			case "installation":
				return s.installation(&p.Installation)
			case "sender":
				return s.userPtr(&p.Sender)
			case "reason":
				return s.str(&p.Reason)
			default: // merge_group
				return s.mergeGroup(&p.MergeGroup)
			}
		})
	})
}

func (s *jscan) mergeGroup(dst **ghMergeGroup) bool {
	if s.null() {
		*dst = nil
		return true
	}
	g := &ghMergeGroup{}
	*dst = g
	return s.members(mergeGroupKeys, func(key string) bool {
		switch key {
		case "head_sha":
			return s.str(&g.HeadSHA)
		case "head_ref":
			return s.str(&g.HeadRef)
		case "base_sha":
			return s.str(&g.BaseSHA)
		default: // base_ref
			return s.str(&g.BaseRef)
		}
	})
}
