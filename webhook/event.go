package webhook

import "github.com/kilroy-bot/kilroy-bot/runner"

// The webhook decodes deliveries straight into the runner's event model,
// which the queue stores; these aliases keep the webhook's names.
type (
	// Event is what the webhook extracted from an accepted delivery.
	Event = runner.Event
	// Kind says what a delivery asks for.
	Kind               = runner.EventKind
	Repo               = runner.Repo
	PullRequest        = runner.PullRequest
	Actor              = runner.Actor
	CheckRun           = runner.CheckRun
	CheckSuite         = runner.CheckSuite
	InstallationChange = runner.InstallationChange
)

// Kinds of accepted events; see runner.EventKind.
const (
	KindPullRequest    = runner.KindPullRequest
	KindCommentCommand = runner.KindCommentCommand
	KindRerun          = runner.KindRerun
	KindCancel         = runner.KindCancel
	KindInstallation   = runner.KindInstallation
	KindPing           = runner.KindPing
)

// Delivery identifies one webhook delivery, from its headers.
type Delivery struct {
	// ID is X-GitHub-Delivery: the same for a redelivery, the dedupe key.
	ID string `json:"id"`
	// Event is X-GitHub-Event, such as "pull_request" or "installation_repositories".
	Event string `json:"event"`
	// HookID is X-GitHub-Hook-ID, when sent.
	HookID string `json:"hook_id,omitempty"`
}
