package policy

import "fmt"

// Request is what asks for a run, for the trust decision.
type Request string

// Requests Decide knows.
const (
	// RequestPullRequest is a pull_request event: a run that would start
	// with nobody's approval.
	RequestPullRequest Request = "pull_request"
	// RequestCommand is a `/kilroy run` or `/kilroy cancel` comment.
	RequestCommand Request = "command"
	// RequestRerun is a check's Re-run or Cancel button.
	RequestRerun Request = "rerun"
)

// TrustInput is everything the trust decision looks at. Permissions are
// the collaborator-permission API's (admin, maintain, write, triage, read,
// none; never author_association, which says nothing about access).
type TrustInput struct {
	Request Request
	// HeadInBaseRepo is true when the pull request's head branch lives in
	// the base repository (not a fork, and the head repository exists).
	HeadInBaseRepo bool
	// AuthorPermission is the pull request author's permission.
	AuthorPermission string
	// Sender and SenderPermission are who commented or pressed the
	// button, for RequestCommand and RequestRerun.
	Sender           string
	SenderPermission string
}

// TrustDecision says whether a request runs and with whose configuration.
type TrustDecision struct {
	// Run is true when runs may start.
	Run bool
	// ConfigFromBase makes a run read its pipelines and configuration from
	// the base branch instead of the head commit: the head of an
	// untrusted pull request could rewrite the very pipeline a writer
	// approved.
	ConfigFromBase bool
	// ActionRequired marks a pull request that waits for a writer's
	// approval: its summary checks end action_required.
	ActionRequired bool
	// Reason says why, for logs, replies and check summaries.
	Reason string
}

// HasWrite reports whether a permission allows pushing: admin, maintain
// or write.
func HasWrite(permission string) bool {
	switch permission {
	case "admin", "maintain", "write":
		return true
	}
	return false
}

// Decide applies DESIGN.md's trust rule. A pull request runs on its own
// only when its head is in the base repository and its author can write;
// otherwise it waits for a writer's `/kilroy run`, which runs with the
// base branch's configuration. A button or command from someone without
// write access does nothing. A re-run of a trusted pull request keeps the
// head's configuration, as its first run had.
func Decide(in TrustInput) TrustDecision {
	trustedPR := in.HeadInBaseRepo && HasWrite(in.AuthorPermission)
	switch in.Request {
	case RequestPullRequest:
		if trustedPR {
			return TrustDecision{Run: true, Reason: "the head is in the base repository and its author has write access"}
		}
		return TrustDecision{ActionRequired: true, Reason: untrustedReason(in)}
	case RequestCommand, RequestRerun:
		if !HasWrite(in.SenderPermission) {
			return TrustDecision{Reason: fmt.Sprintf("@%s has %s access; runs need write access", in.Sender, orNone(in.SenderPermission))}
		}
		// A trusted pull request's own pipelines run, as they do on a push;
		// an untrusted one's never do, whoever asks.
		fromBase := !trustedPR
		return TrustDecision{Run: true, ConfigFromBase: fromBase,
			Reason: fmt.Sprintf("requested by @%s, who has %s access", in.Sender, in.SenderPermission)}
	default:
		return TrustDecision{Reason: fmt.Sprintf("unknown request %q", in.Request)}
	}
}

func untrustedReason(in TrustInput) string {
	if !in.HeadInBaseRepo {
		return "the pull request comes from a fork"
	}
	return fmt.Sprintf("the pull request's author has %s access, not write", orNone(in.AuthorPermission))
}

func orNone(p string) string {
	if p == "" {
		return "no"
	}
	return p
}
