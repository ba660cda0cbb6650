package checks

import (
	"fmt"
	"strings"
)

// LocalReport is the markdown `kilroy-bot run` prints and keeps as
// report.md: the summary check's title, summary and text, then every
// verify node's check with its annotations as `path:line:col` lines, so a
// local run shows exactly what the Check Runs on a pull request would.
func LocalReport(v *RunView, opts RenderOptions) string {
	var b strings.Builder
	title, summary, text := Summary(v, opts)
	fmt.Fprintf(&b, "# kilroy/%s: %s\n\n%s\n", v.Pipeline, title, summary)
	if text != "" {
		fmt.Fprintf(&b, "\n%s\n", text)
	}
	for _, n := range v.Nodes {
		if !n.Verify {
			continue
		}
		writeVerifySection(&b, VerifyCheck(v, n.ID, opts))
	}
	return b.String()
}

func writeVerifySection(b *strings.Builder, rep VerifyReport) {
	fmt.Fprintf(b, "\n## %s: %s\n\n%s\n", rep.Name, conclusionWord(rep), rep.Title)
	if len(rep.Annotations) == 0 {
		return
	}
	b.WriteString("\n```\n")
	for _, a := range rep.Annotations {
		pos := fmt.Sprintf("%s:%d", a.Path, a.StartLine)
		if a.StartColumn > 0 {
			pos += fmt.Sprintf(":%d", a.StartColumn)
		}
		fmt.Fprintf(b, "%s: %s: %s\n", pos, a.Level, firstLineOf(a.Message))
	}
	b.WriteString("```\n")
	if rep.Omitted > 0 {
		fmt.Fprintf(b, "\n%d more not shown.\n", rep.Omitted)
	}
}

func conclusionWord(rep VerifyReport) string {
	if rep.Conclusion != "" {
		return rep.Conclusion
	}
	return rep.Status
}

func firstLineOf(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
