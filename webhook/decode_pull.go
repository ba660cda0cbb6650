package webhook

import (
	"encoding/json"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/server"
)

// pullRequestRuns reports whether a pull_request action can start runs.
func pullRequestRuns(action string) bool {
	switch action {
	case "opened", "synchronize", "reopened", "ready_for_review":
		return true
	}
	return false
}

// decodePullRequest decodes the actions that start runs, and "closed": a
// pull request closed or merged becomes a KindCancel event (Action
// server.ActionClosed) for it, because its unfinished runs would only burn
// workers and finish checks on a dead pull request.
func decodePullRequest(payload []byte) (Event, error) {
	var p pullRequestPayload
	if !scanPullRequest(payload, &p) {
		p = pullRequestPayload{}
		if err := unmarshal(payload, &p); err != nil {
			return Event{}, err
		}
	}
	closed := p.Action == server.ActionClosed
	if !closed && !pullRequestRuns(p.Action) {
		return Event{}, ignoredAction("pull_request", p.Action)
	}
	pr := p.PullRequest
	switch {
	case pr == nil:
		return Event{}, missing("pull_request", "pull_request")
	case p.Repository == nil:
		return Event{}, missing("pull_request", "repository")
	case pr.Number == 0:
		return Event{}, missing("pull_request", "pull request number")
	case pr.Head.SHA == "" && !closed: // a cancel needs only the number
		return Event{}, missing("pull_request", "pull request head sha")
	}
	kind := KindPullRequest
	if closed {
		kind = KindCancel
	}
	ev := p.base(kind)
	ev.PR = PullRequest{
		Number:           pr.Number,
		HeadSHA:          pr.Head.SHA,
		HeadRef:          pr.Head.Ref,
		HeadRepoFullName: pr.Head.Repo.repo().FullName,
		BaseRef:          pr.Base.Ref,
		BaseSHA:          pr.Base.SHA,
		Draft:            pr.Draft,
		Fork:             isFork(pr.Head.Repo, p.Repository),
		AuthorLogin:      pr.User.Login,
	}
	if closed {
		merged, err := decodeMerged(payload)
		if err != nil {
			return Event{}, err
		}
		ev.PR.Merged = merged
	}
	return ev, nil
}

// decodeMerged reads pull_request.merged, which only a closed delivery
// needs: the checks then say "merged" rather than "closed". It is decoded
// on its own so the pull_request fast path stays as it is; closed
// deliveries are rare enough for a second pass over the payload.
func decodeMerged(payload []byte) (bool, error) {
	var m struct {
		PullRequest struct {
			Merged bool `json:"merged"`
		} `json:"pull_request"`
	}
	if err := json.Unmarshal(payload, &m); err != nil {
		return false, badRequest("pull_request payload: merged: "+err.Error(), nil)
	}
	return m.PullRequest.Merged, nil
}

// isFork reports whether the head repository is not the base repository.
// head.repo.fork is not the test: it is also true for a pull request between
// two branches of a repository that is itself a fork. A deleted head
// repository (null) counts as a fork, the untrusted side.
func isFork(head, base *ghRepo) bool {
	if head == nil {
		return true
	}
	if head.ID != 0 && base.ID != 0 {
		return head.ID != base.ID
	}
	return !strings.EqualFold(head.FullName, base.FullName)
}
