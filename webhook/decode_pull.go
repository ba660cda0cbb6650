package webhook

import "strings"

// pullRequestRuns reports whether a pull_request action can start runs.
func pullRequestRuns(action string) bool {
	switch action {
	case "opened", "synchronize", "reopened", "ready_for_review":
		return true
	}
	return false
}

func decodePullRequest(payload []byte) (Event, error) {
	var p pullRequestPayload
	if !scanPullRequest(payload, &p) {
		p = pullRequestPayload{}
		if err := unmarshal(payload, &p); err != nil {
			return Event{}, err
		}
	}
	if !pullRequestRuns(p.Action) {
		return Event{}, ignoredAction("pull_request", p.Action)
	}
	pr := p.PullRequest
	switch {
	case pr == nil:
		return Event{}, missing("pull_request", "pull_request")
	case p.Repository == nil:
		return Event{}, missing("pull_request", "repository")
	case pr.Number == 0 || pr.Head.SHA == "":
		return Event{}, missing("pull_request", "pull request number or head sha")
	}
	ev := p.base(KindPullRequest)
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
	return ev, nil
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
