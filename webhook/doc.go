// Package webhook is kilroy-bot's HTTP ingress for GitHub App deliveries,
// mounted by the composition root at POST /webhooks/github.
//
// The model. A delivery is untrusted bytes until its signature checks out, and
// GitHub waits only seconds for an answer, so the handler does as little as it
// can, in a fixed order:
//
//  1. require X-Hub-Signature-256 (a missing header or a SHA-1-only
//     X-Hub-Signature is 401) and read the body through a cap (413 past it),
//     as its bytes arrive: the buffer never grows to a declared length, and
//     every body reserves what it holds in one budget shared by all bodies
//     in flight (503 past it), so connections that declare large bodies and
//     send nothing cannot exhaust memory;
//  2. verify the HMAC-SHA256 of the raw bytes against every configured secret
//     in constant time (401), before anything parses them;
//  3. require X-GitHub-Event and X-GitHub-Delivery (400), unwrap the payload
//     of a form-encoded delivery, and decode the JSON (400 when malformed);
//  4. classify and extract: a delivery becomes one small Event of our own
//     (a pull request to run, a /kilroy comment command, a re-run or cancel
//     button, an installation change, a ping) or is ignored with a reason
//     (200);
//  5. hand the Event to a Sink, which durably records the delivery id and
//     enqueues the work in one transaction before returning (202), reports a
//     redelivery (200), or fails (503, so the delivery can be redelivered).
//
// The webhook makes no GitHub API call, reads no repository configuration and
// runs nothing: trust, configuration and pipelines are resolved later by a
// worker from the queued job. Event is a plain struct so that the queue side
// never depends on go-github types; decoding uses go-github's payload types for
// fidelity and stops there.
//
// Errors. The request handler returns an error and a single adapter
// (Handler.ServeHTTP) turns it into a status code, a short JSON body and one
// log line. Logs carry the delivery, event, action, installation, repo and pr
// keys and never the body or a secret.
package webhook
