package webhook

import "github.com/kilroy-bot/kilroy-bot/server"

// The webhook decodes deliveries straight into the server's event model,
// which the queue stores; these aliases keep the webhook's names.
type (
	// Event is what the webhook extracted from an accepted delivery.
	Event = server.Event
	// Kind says what a delivery asks for.
	Kind               = server.EventKind
	Repo               = server.Repo
	PullRequest        = server.PullRequest
	Actor              = server.Actor
	CheckRun           = server.CheckRun
	CheckSuite         = server.CheckSuite
	InstallationChange = server.InstallationChange
	MergeGroup         = server.MergeGroup
)

// Kinds of accepted events; see server.EventKind.
const (
	KindPullRequest    = server.KindPullRequest
	KindCommentCommand = server.KindCommentCommand
	KindRerun          = server.KindRerun
	KindCancel         = server.KindCancel
	KindInstallation   = server.KindInstallation
	KindPing           = server.KindPing
	KindMergeGroup     = server.KindMergeGroup
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
