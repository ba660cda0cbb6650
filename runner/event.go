package runner

import "strings"

// EventKind says what a delivery asks for.
type EventKind string

// Kinds of events. They and every field of Event carry the same names and
// JSON keys as the webhook's decoded event, so the composition root can
// hand one over as JSON without runner importing webhook.
const (
	KindPullRequest    EventKind = "pull_request"
	KindCommentCommand EventKind = "comment_command"
	KindRerun          EventKind = "rerun"
	KindCancel         EventKind = "cancel"
	KindInstallation   EventKind = "installation"
	KindPing           EventKind = "ping"
)

// Event is an accepted delivery, as stored in its event job.
type Event struct {
	Kind           EventKind   `json:"kind"`
	Action         string      `json:"action,omitempty"`
	InstallationID int64       `json:"installation_id,omitempty"`
	Repo           Repo        `json:"repo"`
	PR             PullRequest `json:"pr"`
	Sender         Actor       `json:"sender"`
	Command        Command     `json:"command"`
	CommentID      int64       `json:"comment_id,omitempty"`
	CheckRun       CheckRun    `json:"check_run"`
	CheckSuite     CheckSuite  `json:"check_suite"`
	// PullNumbers are the pull requests GitHub lists for a check run or
	// suite; empty for fork pull requests (the queue maps SHA→PR).
	PullNumbers []int `json:"pull_numbers,omitempty"`
}

// Repo is the base repository of a pull request.
type Repo struct {
	Owner    string `json:"owner,omitempty"`
	Name     string `json:"name,omitempty"`
	FullName string `json:"full_name,omitempty"`
	// CloneURL is where runs fetch from and push their run branch to.
	CloneURL      string `json:"clone_url,omitempty"`
	DefaultBranch string `json:"default_branch,omitempty"`
}

// PullRequest is what runner needs to know of a pull request, from an
// event or from the API.
type PullRequest struct {
	Number           int    `json:"number,omitempty"`
	State            string `json:"state,omitempty"` // open, closed; from the API only
	HeadSHA          string `json:"head_sha,omitempty"`
	HeadRepoFullName string `json:"head_repo_full_name,omitempty"`
	BaseRef          string `json:"base_ref,omitempty"`
	Draft            bool   `json:"draft,omitempty"`
	// Fork is true when the head lives in another repository than the
	// base, or that repository was deleted.
	Fork        bool   `json:"fork,omitempty"`
	AuthorLogin string `json:"author_login,omitempty"`
}

// Actor is the account behind a delivery.
type Actor struct {
	Login string `json:"login,omitempty"`
	Type  string `json:"type,omitempty"` // User, Bot, Organization
}

// Verbs of a comment command.
const (
	VerbRun     = "run"
	VerbCancel  = "cancel"
	VerbHelp    = "help"
	VerbUnknown = "unknown"
	VerbInvalid = "invalid"
)

// Command is a parsed `/kilroy` comment.
type Command struct {
	Verb       string   `json:"verb,omitempty"`
	Pipelines  []string `json:"pipelines,omitempty"` // empty: all
	Invalid    []string `json:"invalid,omitempty"`
	Unknown    string   `json:"unknown,omitempty"`
	Suggestion string   `json:"suggestion,omitempty"`
}

// CheckRun is the check run whose button was pressed.
type CheckRun struct {
	Name            string `json:"name,omitempty"`
	HeadSHA         string `json:"head_sha,omitempty"`
	ExternalID      string `json:"external_id,omitempty"`
	RequestedAction string `json:"requested_action,omitempty"` // rerun, cancel
}

// CheckSuite is the suite of a re-run request.
type CheckSuite struct {
	HeadSHA string `json:"head_sha,omitempty"`
}

// fork reports whether the pull request's head is outside the base
// repository, whichever way the event or API said it.
func (p PullRequest) fork(base Repo) bool {
	if p.Fork {
		return true
	}
	return p.HeadRepoFullName != "" && !strings.EqualFold(p.HeadRepoFullName, base.FullName)
}
