package webhook

import (
	"encoding/json"
	"fmt"
	"strings"
)

// decode turns a verified payload into an Event. A delivery that asks for
// nothing returns an *ignoredError; one that cannot be read, a 400.
func (h *Handler) decode(event string, payload []byte) (Event, error) {
	switch event {
	case "pull_request":
		return decodePullRequest(payload)
	case "issue_comment":
		return decodeIssueComment(payload, h.cfg.AppSlug)
	case "check_run":
		return decodeCheckRun(payload, h.cfg.AppID)
	case "check_suite":
		return decodeCheckSuite(payload, h.cfg.AppID)
	case "installation", "installation_repositories":
		return decodeInstallation(event, payload)
	case "merge_group":
		return decodeMergeGroup(payload)
	case "ping":
		return decodePing(payload)
	default:
		return Event{}, ignore(fmt.Sprintf("event %q is not handled", event))
	}
}

// unmarshal decodes a JSON payload into v.
func unmarshal(payload []byte, v any) error {
	if err := json.Unmarshal(payload, v); err != nil {
		return badRequest("malformed JSON payload: "+err.Error(), nil)
	}
	return nil
}

// missing is the 400 for a payload that lacks a field its event always has.
func missing(event, field string) error {
	return badRequest(fmt.Sprintf("%s payload has no %s", event, field), nil)
}

func ignoredAction(event, action string) error {
	return ignore(fmt.Sprintf("%s action %q is not handled", event, action))
}

// base fills the fields every kind shares from the envelope.
func (e *envelope) base(kind Kind) Event {
	ev := Event{Kind: kind, Action: e.Action, Repo: e.Repository.repo(), Sender: e.Sender.actor()}
	if e.Installation != nil {
		ev.InstallationID = e.Installation.ID
	}
	return ev
}

func (r *ghRepo) repo() Repo {
	if r == nil {
		return Repo{}
	}
	return Repo{
		ID:            r.ID,
		Owner:         r.Owner.Login,
		Name:          r.Name,
		FullName:      r.FullName,
		CloneURL:      r.CloneURL,
		DefaultBranch: r.DefaultBranch,
	}
}

func (u *ghUser) actor() Actor {
	if u == nil {
		return Actor{}
	}
	return Actor{ID: u.ID, Login: u.Login, Type: u.Type}
}

// isBot reports whether an account is a bot: GitHub types App accounts
// "Bot" and gives them logins ending in "[bot]".
func (u *ghUser) isBot() bool {
	return u != nil && (u.Type == "Bot" || strings.HasSuffix(u.Login, "[bot]"))
}

func repoNames(repos []ghRepoName) []string {
	var names []string
	for _, r := range repos {
		names = append(names, r.FullName)
	}
	return names
}

func pullNumbers(prs []ghPullRef) []int {
	var nums []int
	for _, pr := range prs {
		nums = append(nums, pr.Number)
	}
	return nums
}
