package checks

import (
	"regexp"
	"strings"
)

// Headline is the one line of a failure reason that goes into titles and
// table rows. A process's reason reads "tool_command exited with status
// 1: " and then the tail of its output, whose first line is whatever the
// cut left (usage text, a retry warning, "Updating crates.io index"), so
// the headline keeps the lead and picks from the output, in this order:
//
//  1. the first line that states an error: a path:line finding, an
//     exception type (AssertionError:), or a line that starts with error,
//     ERROR, FAIL, fatal or panic;
//  2. the first message of npm's error log (npm error / npm ERR!), which
//     prefixes usage and help text the same way;
//  3. the first line that mentions error, failed or FAIL;
//  4. the last non-empty line that is not npm's log noise, else the last.
//
// A one-line reason is its own headline. The result is Clean.
func Headline(reason string) string {
	reason = Clean(reason)
	lead, rest := splitLead(reason)
	var lines []string
	for i, l := range strings.Split(rest, "\n") {
		t := strings.TrimSpace(l)
		if i == 0 && strings.HasPrefix(t, "…") {
			continue // the output was cut inside this line
		}
		if t != "" {
			lines = append(lines, t)
		}
	}
	if len(lines) == 0 || (len(lines) == 1 && !strings.Contains(rest, "\n")) {
		return firstLine(reason)
	}
	pick := pickLine(lines)
	if lead == "" {
		return pick
	}
	return lead + ": " + pick
}

// leadPattern matches the first line of a process failure (attractor's
// processFailure): the lead, then the first line of the output tail.
var leadPattern = regexp.MustCompile(`^(.*?(?:exited with (?:status|code) -?\d+|was killed)(?:: [^:\n]*limit[^:\n]*)?): (.*)`)

// splitLead separates a process failure's lead from its output.
func splitLead(reason string) (lead, rest string) {
	reason = strings.TrimSpace(reason)
	first, more, _ := strings.Cut(reason, "\n")
	m := leadPattern.FindStringSubmatch(first)
	if m == nil {
		return "", reason
	}
	return m[1], m[2] + "\n" + more
}

var (
	// statesError: a line that says what failed.
	statesError = regexp.MustCompile(`^(?:` +
		`[\w./\\-]+\.\w+:\d+(?::\d+)?(?::|\s)` + // path:line[:col] finding
		`|(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception)\b(?::|$)` + // exception type
		`|(?:error|ERROR|Error)(?:\[\w+\])?(?::|!|\s|$)` + // error: …, error[E0425]: …
		`|(?:FAIL|FAILED|--- FAIL)\b` + // go test, pytest
		`|(?:fatal|panic|FATAL|Fatal):)`)
	// npmLog: npm's error log prefix; what follows may be a message or
	// usage text.
	npmLog = regexp.MustCompile(`^npm (?:error|ERR!)(?:\s(.*))?$`)
	// npmNoise: npm error log lines that are not the message.
	npmNoise = regexp.MustCompile(`^(?:\s|$|code |errno |syscall |path |\[|-|[A-Za-z]+:$|Usage:|Options:|aliases:|` +
		`Run "npm help|A complete log|To see |Did you mean|npm |Clean install|Log files|The operation was rejected)`)
	// mentionsError: a line that mentions a failure somewhere.
	mentionsError = regexp.MustCompile(`(?i:\b(?:error|errors|failed|failure)\b)|\bFAIL\b`)
	// banner: a separator line such as pytest's "==== FAILURES ====".
	banner = regexp.MustCompile(`^[=_*#~-]{3,}`)
)

// pickLine chooses the headline among non-empty, trimmed lines.
func pickLine(lines []string) string {
	for _, l := range lines {
		if statesError.MatchString(l) {
			return l
		}
	}
	for _, l := range lines {
		if m := npmLog.FindStringSubmatch(l); m != nil && !npmNoise.MatchString(m[1]) {
			return l
		}
	}
	for _, l := range lines {
		if !banner.MatchString(l) && npmLog.FindString(l) == "" && mentionsError.MatchString(l) {
			return l
		}
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if m := npmLog.FindStringSubmatch(lines[i]); m == nil || !npmNoise.MatchString(m[1]) {
			return lines[i]
		}
	}
	return lines[len(lines)-1]
}
