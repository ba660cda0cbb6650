package agent

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// httpStatus finds the HTTP status a CLI printed about a failed model
// call: Claude Code's "API Error: 500 …", Codex's "unexpected status 401
// Unauthorized", Gemini's {"code":429} or "[429 Too Many Requests]", and
// "status 503" or "HTTP 400" in general.
var httpStatus = regexp.MustCompile(`(?i)(?:api error:?|unexpected status|status(?: code)?[:=]?|http(?:/[0-9.]+)?|"code":|\[)\s*([1-5][0-9]{2})\b`)

// cutStream are the words CLIs use for an answer that broke off.
var cutStream = []string{"stream disconnected", "stream closed", "connection closed", "connection reset", "econnreset",
	"socket hang up", "premature close", "terminated", "fetch failed", "unexpected eof", "overloaded", "error decoding response body"}

// badKey are the words CLIs use for a rejected key when they print no
// status (Claude Code 2.1: "Invalid API key · Fix external API key").
var badKey = []string{"invalid api key", "invalid x-api-key", "api key not valid", "incorrect api key provided"}

// cliFailureClass classes a CLI's failure from what it printed: by the
// HTTP status of the failed model call when it names one (401/403: the
// key is wrong, structural; 408/409/429/5xx: transient; another 4xx: the
// request is wrong and stays wrong, deterministic), else transient when
// the key was rejected in words, transient when the answer broke off, else
// "" to leave it to the engine.
func cliFailureClass(text string) attractor.FailureClass {
	for _, m := range httpStatus.FindAllStringSubmatch(text, -1) {
		code, _ := strconv.Atoi(m[1])
		switch {
		case code == 401 || code == 403:
			return attractor.ClassStructural
		case code == 408 || code == 409 || code == 429 || code >= 500:
			return attractor.ClassTransientInfra
		case code >= 400:
			return attractor.ClassDeterministic
		}
	}
	t := strings.ToLower(text)
	for _, w := range badKey {
		if strings.Contains(t, w) {
			return attractor.ClassStructural
		}
	}
	for _, w := range cutStream {
		if strings.Contains(t, w) {
			return attractor.ClassTransientInfra
		}
	}
	return ""
}
