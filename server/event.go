package server

import (
	"strings"
	"time"
)

// EventKind says what a delivery asks for. The worker switches on it.
type EventKind string

// Kinds of events. The webhook decodes deliveries straight into Event;
// the names and JSON keys of Event are the stored format of event jobs.
const (
	// KindPullRequest: a pull request was opened, pushed to, reopened or
	// marked ready for review. Drafts pass through with PR.Draft set.
	KindPullRequest EventKind = "pull_request"
	// KindCommentCommand: a /kilroy comment on a pull request; see Command.
	KindCommentCommand EventKind = "comment_command"
	// KindRerun: a check run or check suite re-run button, or the "rerun"
	// requested action. It re-runs CheckRun.HeadSHA or CheckSuite.HeadSHA.
	KindRerun EventKind = "rerun"
	// KindCancel: the "cancel" requested action of a check run. With
	// Action ActionClosed it is a pull request closed or merged instead:
	// PR is that pull request (PR.Merged set when merged) and every
	// unfinished run of it is cancelled, with no trust check and no
	// comment, since closing is already GitHub's decision.
	KindCancel EventKind = "cancel"
	// KindInstallation: installation and installation_repositories
	// deliveries, recorded so the store knows where the App is installed.
	KindInstallation EventKind = "installation"
	// KindPing: the hook's ping, recorded to show the hook works.
	KindPing EventKind = "ping"
	// KindMergeGroup: the merge queue asks for checks on a merge group
	// (Action checks_requested) or dropped one (destroyed); see MergeGroup.
	KindMergeGroup EventKind = "merge_group"
)

// ActionClosed is the Action of a KindCancel event made from a closed
// pull_request delivery: GitHub's own action name, kept verbatim.
const ActionClosed = "closed"

// Event is an accepted delivery, as the webhook extracted it and as stored
// in its event job. Only the fields that its Kind uses are set.
type Event struct {
	Kind EventKind `json:"kind"`
	// Action is the payload's action ("opened", "created", "rerequested",
	// "requested_action", "added", ...); empty for ping.
	Action         string `json:"action,omitempty"`
	InstallationID int64  `json:"installation_id,omitempty"`
	Repo           Repo   `json:"repo"`
	// PR is the pull request of a pull_request event, and the number and
	// author of the pull request a comment was made on (the worker fetches
	// its head).
	PR     PullRequest `json:"pr"`
	Sender Actor       `json:"sender"`
	// Command and CommentID are set for KindCommentCommand.
	Command   Command `json:"command"`
	CommentID int64   `json:"comment_id,omitempty"`
	// CommentedAt is when the comment was written (GitHub's created_at,
	// whole seconds): `/kilroy run` on an untrusted pull request approves
	// the head that was current then.
	CommentedAt time.Time `json:"commented_at,omitzero"`
	// CheckRun is set for check_run deliveries, CheckSuite for check_run
	// (its suite) and check_suite deliveries.
	CheckRun   CheckRun   `json:"check_run"`
	CheckSuite CheckSuite `json:"check_suite"`
	// PullNumbers are the pull requests GitHub lists for a check run or
	// suite. GitHub leaves the list empty for fork pull requests, so the
	// queue maps head SHA to pull request itself.
	PullNumbers []int `json:"pull_numbers,omitempty"`
	// Installation is set for KindInstallation.
	Installation InstallationChange `json:"installation,omitzero"`
	// MergeGroup is set for KindMergeGroup.
	MergeGroup MergeGroup `json:"merge_group,omitzero"`
}

// Repo is the repository a delivery is about: the base repository of a
// pull request.
type Repo struct {
	ID       int64  `json:"id,omitempty"`
	Owner    string `json:"owner,omitempty"`
	Name     string `json:"name,omitempty"`
	FullName string `json:"full_name,omitempty"`
	// CloneURL is where runs fetch from and push their run branch to.
	CloneURL      string `json:"clone_url,omitempty"`
	DefaultBranch string `json:"default_branch,omitempty"`
}

// PullRequest is what the server needs to know of a pull request, from an
// event or from the API.
type PullRequest struct {
	Number           int    `json:"number,omitempty"`
	State            string `json:"state,omitempty"` // open, closed; from the API only
	HeadSHA          string `json:"head_sha,omitempty"`
	HeadRef          string `json:"head_ref,omitempty"`
	HeadRepoFullName string `json:"head_repo_full_name,omitempty"`
	BaseRef          string `json:"base_ref,omitempty"`
	BaseSHA          string `json:"base_sha,omitempty"`
	Draft            bool   `json:"draft,omitempty"`
	// Fork is true when the head lives in another repository than the base
	// (or that repository was deleted). A pull request between two branches
	// of a repository that is itself a fork is not a fork pull request.
	Fork        bool   `json:"fork,omitempty"`
	AuthorLogin string `json:"author_login,omitempty"`
	// Merged is set on a closed pull request's event when it was merged,
	// so its cancelled checks can say so.
	Merged bool `json:"merged,omitempty"`
}

// Actor is the account that caused a delivery.
type Actor struct {
	ID    int64  `json:"id,omitempty"`
	Login string `json:"login,omitempty"`
	// Type is GitHub's account type: "User", "Bot" or "Organization".
	Type string `json:"type,omitempty"`
}

// Verb is what a /kilroy comment asks for.
type Verb string

// Verbs of a comment command.
const (
	VerbRun    Verb = "run"
	VerbCancel Verb = "cancel"
	VerbHelp   Verb = "help"
	// VerbAnswer answers a wait.human node a run of the pull request waits
	// at: Node and Choice.
	VerbAnswer Verb = "answer"
	// VerbUnknown: the word after /kilroy is not a command; Unknown holds
	// it and Suggestion the nearest command, if one is near.
	VerbUnknown Verb = "unknown"
	// VerbInvalid: run or cancel named pipelines that are not valid names
	// (listed in Invalid); nothing should run.
	VerbInvalid Verb = "invalid"
)

// Command is a parsed /kilroy comment; the webhook parses it.
type Command struct {
	Verb Verb `json:"verb,omitempty"`
	// Pipelines are the names given to run or cancel, without duplicates;
	// empty means all.
	Pipelines []string `json:"pipelines,omitempty"`
	// SHA is the commit `/kilroy run SHA` approves (7 to 40 hex digits as
	// written): only that commit runs, and only while it is the head.
	SHA string `json:"sha,omitempty"`
	// Invalid are the names that are not pipeline names (VerbInvalid).
	Invalid []string `json:"invalid,omitempty"`
	// Unknown is the unrecognised word as written (VerbUnknown).
	Unknown string `json:"unknown,omitempty"`
	// Suggestion is the command Unknown was probably meant to be, or "".
	Suggestion string `json:"suggestion,omitempty"`
	// Node and Choice are what VerbAnswer answers and with what, as
	// written; either may be empty (the reply then lists what waits).
	Node   string `json:"node,omitempty"`
	Choice string `json:"choice,omitempty"`
}

// CheckRun is the check run whose button was pressed.
type CheckRun struct {
	ID         int64  `json:"id,omitempty"`
	Name       string `json:"name,omitempty"`
	HeadSHA    string `json:"head_sha,omitempty"`
	ExternalID string `json:"external_id,omitempty"`
	// RequestedAction is the identifier of a requested_action button:
	// "rerun" or "cancel".
	RequestedAction string `json:"requested_action,omitempty"`
}

// CheckSuite is the check suite of a re-run request.
type CheckSuite struct {
	ID      int64  `json:"id,omitempty"`
	HeadSHA string `json:"head_sha,omitempty"`
	// QueueBranch is the suite's head branch when it is a merge queue's
	// (gh-readonly-queue/…): the button was pressed on a merge group's check.
	QueueBranch string `json:"queue_branch,omitempty"`
}

// InstallationChange is what an installation delivery changed.
type InstallationChange struct {
	// Account is the login of the user or organization the App is installed on.
	Account string `json:"account,omitempty"`
	AppID   int64  `json:"app_id,omitempty"`
	// Added and Removed are repository full names: the repositories of an
	// installation that was created (Added) or deleted (Removed), or those
	// of an installation_repositories delivery.
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
}

// fork reports whether the pull request's head is outside the base
// repository, whichever way the event or API said it.
func (p PullRequest) fork(base Repo) bool {
	if p.Fork {
		return true
	}
	return p.HeadRepoFullName != "" && !strings.EqualFold(p.HeadRepoFullName, base.FullName)
}
