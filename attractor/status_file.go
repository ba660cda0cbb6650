package attractor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor/safefile"
)

// The node status contract: a process may write a JSON object to
// $KILROY_STAGE_STATUS_PATH (or, when it cannot write outside the
// workspace, $KILROY_STAGE_STATUS_FALLBACK_PATH); what it writes overrides
// the handler's outcome. Both the Kilroy shape {"status": …} and the
// Attractor shape {"outcome": …, "preferred_label"|"preferred_next_label":
// …} are accepted.

// StatusFallbackName is the workspace-relative fallback status file. The
// engine deletes it before and after every attempt; checkpoints must
// exclude it.
const StatusFallbackName = ".kilroy-status.json"

// Re-reads of a status file that is not valid JSON yet: a process that
// exits right after starting a write may leave it half written briefly.
const (
	statusFileReads   = 3
	statusFileReadGap = 100 * time.Millisecond
)

// StatusFileCap is the largest status file read; a larger one fails the
// node, naming the file and its size.
const StatusFileCap = 1 << 20

// statusFile is the decoded JSON of a status file.
type statusFile struct {
	Status             *string        `json:"status"`
	Outcome            *string        `json:"outcome"`
	PreferredLabel     string         `json:"preferred_label"`
	PreferredNextLabel string         `json:"preferred_next_label"`
	SuggestedNextIDs   []string       `json:"suggested_next_ids"`
	ContextUpdates     map[string]any `json:"context_updates"`
	Notes              string         `json:"notes"`
	FailureReason      string         `json:"failure_reason"`
	FailureClass       string         `json:"failure_class"`
	FailureSignature   string         `json:"failure_signature"`
	Meta               map[string]any `json:"meta"`
	Details            map[string]any `json:"details"`
}

// errNoStatusFile means neither status path was written.
var errNoStatusFile = errors.New("no status file")

// readStatusFile reads the first status file present among paths. A file
// that is empty or not valid JSON is re-read a few times (sleep waits
// between reads) before it is reported as junk.
func readStatusFile(ctx context.Context, sleep func(context.Context, time.Duration) error, paths ...string) (Outcome, string, error) {
	for _, p := range paths {
		if p == "" {
			continue
		}
		b, err := readSettled(ctx, sleep, p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return Outcome{}, p, err
		}
		o, err := decodeStatus(b)
		return o, p, err
	}
	return Outcome{}, "", errNoStatusFile
}

func readSettled(ctx context.Context, sleep func(context.Context, time.Duration) error, path string) ([]byte, error) {
	var lastErr error
	for i := range statusFileReads {
		if i > 0 {
			if err := sleep(ctx, statusFileReadGap); err != nil {
				return nil, err
			}
		}
		// The node may have put anything at its status path: read only a
		// regular file beside it, and at most statusFileCap.
		b, err := safefile.ReadIn(filepath.Dir(path), filepath.Base(path), StatusFileCap)
		if err != nil {
			return nil, err
		}
		if lastErr = validStatusJSON(b); lastErr == nil {
			return b, nil
		}
	}
	return nil, fmt.Errorf("status file is not valid JSON: %w; write one object such as {\"status\":\"success\"}", lastErr)
}

func validStatusJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return errors.New("file is empty")
	}
	var v map[string]json.RawMessage
	return json.Unmarshal(b, &v)
}

// decodeStatus turns a status file into an Outcome. Top-level
// failure_class and failure_signature are promoted into Meta, where they
// take precedence for retries and the cycle breaker.
func decodeStatus(b []byte) (Outcome, error) {
	var f statusFile
	if err := json.Unmarshal(b, &f); err != nil {
		return Outcome{}, fmt.Errorf("status file does not match the status contract: %w", err)
	}
	raw := f.Status
	if raw == nil {
		raw = f.Outcome
	}
	if raw == nil {
		return Outcome{}, errors.New(`status file has neither "status" nor "outcome"; write {"status":"success"} or {"status":"fail","failure_reason":"…"}`)
	}
	st, ok := ParseStatus(*raw)
	if !ok {
		return Outcome{}, fmt.Errorf("status file has unknown status %q; use success, partial_success, retry, fail, skipped, or a custom outcome spelled as an identifier such as needs_fix", *raw)
	}
	o := Outcome{
		Status:           st,
		PreferredLabel:   f.PreferredLabel,
		SuggestedNextIDs: f.SuggestedNextIDs,
		ContextUpdates:   f.ContextUpdates,
		Notes:            f.Notes,
		FailureReason:    f.FailureReason,
		Meta:             f.Meta,
		Details:          f.Details,
	}
	if o.PreferredLabel == "" {
		o.PreferredLabel = f.PreferredNextLabel
	}
	if fst, ok := fabroOutcome(strings.TrimSpace(*raw)); ok {
		o.Notes = strings.TrimSpace(fmt.Sprintf("status file wrote %q, Fabro's spelling of %s: read as %s. %s", *raw, fst, fst, o.Notes))
	}
	o.Meta = promote(o.Meta, "failure_class", f.FailureClass)
	o.Meta = promote(o.Meta, "failure_signature", f.FailureSignature)
	return o, nil
}

func promote(m map[string]any, key, v string) map[string]any {
	if v == "" {
		return m
	}
	if m == nil {
		m = map[string]any{}
	}
	m[key] = v
	return m
}

// overrideWithStatusFile lays a status file's outcome over the handler's:
// the file decides status, routing hints and failure fields; context
// updates and meta are merged with the file's keys winning; the handler's
// details are kept where the file has none.
func overrideWithStatusFile(h, f Outcome) Outcome {
	out := f
	// What the bot measured is the handler's, whatever the file says: the
	// findings the command printed, an agent attempt's usage (budgets and
	// totals count it) and its final text.
	out.Findings, out.Usage, out.Response = h.Findings, h.Usage, h.Response
	out.ContextUpdates = mergeMaps(h.ContextUpdates, f.ContextUpdates)
	out.Meta = mergeMaps(h.Meta, f.Meta)
	out.Details = mergeMaps(h.Details, f.Details)
	if out.Notes == "" {
		out.Notes = h.Notes
	}
	if out.IsFailure() && out.FailureReason == "" {
		out.FailureReason = h.FailureReason
		if out.FailureClass == "" {
			out.FailureClass = h.FailureClass
		}
		if out.FailureReason == "" {
			out.FailureReason = "the status file reported " + string(out.Status) + " without a failure_reason"
		}
	}
	return out
}

func mergeMaps(a, b map[string]any) map[string]any {
	if len(a) == 0 {
		return b
	}
	if len(b) == 0 {
		return a
	}
	m := make(map[string]any, len(a)+len(b))
	for k, v := range a {
		m[k] = v
	}
	for k, v := range b {
		m[k] = v
	}
	return m
}

// removeStale deletes status files left by an earlier attempt, so a
// process that writes nothing cannot be credited with an old verdict.
func removeStale(paths ...string) error {
	for _, p := range paths {
		if p == "" {
			continue
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove stale status file: %w", err)
		}
	}
	return nil
}
