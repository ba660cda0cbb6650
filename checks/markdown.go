package checks

import (
	"fmt"
	"strings"
	"time"
)

// cellEscaper keeps text inside one table cell and out of HTML: GitHub
// renders raw HTML in markdown, and a pipe ends a cell.
var cellEscaper = strings.NewReplacer(
	`\`, `\\`, "|", `\|`, "<", "&lt;", ">", "&gt;", "&", "&amp;",
	"\r\n", " ", "\n", " ", "\r", " ", "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`,
)

// cell renders free text for a table cell or a list item: one line, no
// markup of its own.
func cell(s string) string { return cellEscaper.Replace(s) }

// code renders s as an inline code span, choosing a fence longer than any
// run of backticks inside it.
func code(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return ""
	}
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// codeCell is an inline code span for a table cell: GitHub splits cells
// on pipes even inside code spans, unless they are escaped.
func codeCell(s string) string { return strings.ReplaceAll(code(s), "|", `\|`) }

// codeBlock renders s as a fenced block that nothing inside can close.
func codeBlock(s string) string {
	fence := strings.Repeat("`", max(3, longestRun(s, '`')+1))
	return fence + "text\n" + strings.TrimRight(s, "\n") + "\n" + fence + "\n"
}

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	best, cur := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			cur++
			best = max(best, cur)
		} else {
			cur = 0
		}
	}
	return best
}

// link renders a markdown link, or the bare text without a URL.
func link(text, url string) string {
	if url == "" {
		return text
	}
	return "[" + text + "](" + url + ")"
}

// duration renders a node's time for people: tenths of a second under a
// minute, then whole seconds.
func duration(d time.Duration) string {
	switch {
	case d <= 0:
		return "—"
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// plural renders "1 finding", "2 findings".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// stateSymbol marks a state in tables and titles; the word follows, so
// the symbol is never the only signal.
func stateSymbol(s State) string {
	switch s {
	case StatePending:
		return "⏸️"
	case StateRunning:
		return "⏳"
	case StateRetrying:
		return "🔁"
	case StateSuccess:
		return "✅"
	case StatePartial:
		return "🟡"
	case StateFailed:
		return "❌"
	case StateSkipped:
		return "⏭️"
	case StateCancelled:
		return "🚫"
	}
	return "•"
}

// stateCell is a state with its symbol.
func stateCell(s State) string { return stateSymbol(s) + " " + string(s) }
