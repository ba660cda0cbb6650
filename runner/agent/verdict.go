package agent

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/attractor/safefile"
)

// markerRE finds outcome markers: OUTCOME:SUCCESS, outcome=pass, ...
var markerRE = regexp.MustCompile(`(?i)\bOUTCOME\s*[:=]\s*(FAIL|PASS|SUCCESS)\b`)

// outcomeMarker reads the outcome markers in an agent's final text. Any
// FAIL wins over PASS or SUCCESS, so a text that quotes both does not
// pass by accident.
func outcomeMarker(text string) (attractor.Status, bool) {
	found := false
	for _, m := range markerRE.FindAllStringSubmatch(text, -1) {
		if strings.EqualFold(m[1], "fail") {
			return attractor.StatusFail, true
		}
		found = true
	}
	if found {
		return attractor.StatusSuccess, true
	}
	return "", false
}

// statusFileStatus reports whether the agent wrote a status file and, if it
// parses, the status in it. The engine applies the file itself; the agent
// only needs to know whether one is there (it outranks markers) and whether
// it declares success (the only way past a turn limit besides a marker).
func statusFileStatus(req attractor.AgentRequest) (attractor.Status, bool) {
	for _, p := range []string{req.StageEnv[attractor.EnvStatusPath], req.StageEnv[attractor.EnvStatusFallbackPath]} {
		if p == "" {
			continue
		}
		b, err := safefile.ReadIn(filepath.Dir(p), filepath.Base(p), attractor.StatusFileCap)
		if err != nil {
			continue
		}
		var f struct {
			Status  *string `json:"status"`
			Outcome *string `json:"outcome"`
		}
		if json.Unmarshal(b, &f) != nil {
			return "", true // junk: the engine fails the node saying so
		}
		raw := f.Status
		if raw == nil {
			raw = f.Outcome
		}
		if raw == nil {
			return "", true
		}
		st, _ := attractor.ParseStatus(*raw)
		return st, true
	}
	return "", false
}

// finalVerdict is the outcome of an agent that ended on its own: a status
// file decides (the engine applies it), else an outcome marker, else no
// status, which the engine turns into auto_status or a failure explaining
// how to report one.
func finalVerdict(req attractor.AgentRequest, final string) attractor.Outcome {
	if st, ok := statusFileStatus(req); ok {
		// Mirror the file so the engine's override keeps its own reason.
		return attractor.Outcome{Status: st, Response: final}
	}
	st, ok := outcomeMarker(final)
	if !ok {
		return attractor.Outcome{Response: final}
	}
	o := attractor.Outcome{Status: st, Response: final, Notes: "outcome marker in the agent's final message"}
	if st == attractor.StatusFail {
		o.FailureClass = attractor.ClassDeterministic
		o.FailureReason = "the agent reported OUTCOME:FAIL: " + lastLines(final, 3, 400)
	}
	return o
}

// explicitSuccess reports whether the agent declared success through the
// status file or a marker.
func explicitSuccess(req attractor.AgentRequest, final string) bool {
	if st, ok := statusFileStatus(req); ok {
		return st.Succeeded() // a custom outcome (needs_fix) is a verdict too
	}
	st, ok := outcomeMarker(final)
	return ok && st == attractor.StatusSuccess
}

// lastLines returns the last n non-empty lines of s, at most limit bytes.
func lastLines(s string, n, limit int) string {
	var keep []string
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0 && len(keep) < n; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			keep = append([]string{l}, keep...)
		}
	}
	out := strings.Join(keep, " / ")
	if len(out) > limit {
		out = "…" + out[len(out)-limit:]
	}
	return out
}
