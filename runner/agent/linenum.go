package agent

import (
	"regexp"
	"strings"
)

// Line-number prefixes as read_file writes them ("  12 | text") and as
// other tools do ("12\ttext"). A number alone at the start of the line,
// then the separator with its spaces: code such as "x := 123 | mask" and
// data such as "1|alice" do not match.
var (
	pipeNumbered = regexp.MustCompile(`^\s*\d+ \|(?: |$)`)
	tabNumbered  = regexp.MustCompile(`^\d+\t`)
)

// stripLineNumbers removes line-number prefixes a model copied from
// read_file output into content it writes. It acts only when most
// non-empty lines carry one, so a file in which a few lines happen to
// start with a number and a pipe is written as given.
func stripLineNumbers(content string) string {
	lines := strings.Split(content, "\n")
	numbered, nonEmpty := 0, 0
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		nonEmpty++
		if pipeNumbered.MatchString(l) || tabNumbered.MatchString(l) {
			numbered++
		}
	}
	if nonEmpty == 0 || numbered*2 <= nonEmpty {
		return content
	}
	for i, l := range lines {
		if loc := pipeNumbered.FindStringIndex(l); loc != nil {
			lines[i] = l[loc[1]:]
		} else if loc := tabNumbered.FindStringIndex(l); loc != nil {
			lines[i] = l[loc[1]:]
		}
	}
	return strings.Join(lines, "\n")
}
