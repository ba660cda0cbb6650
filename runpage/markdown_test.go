package runpage_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/checks"
	"github.com/kilroy-bot/kilroy-bot/runpage"
)

func TestMarkdown(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"heading under the page title", "# kilroy/ci: 2 of 3 nodes passed", "<h2>kilroy/ci: 2 of 3 nodes passed</h2>\n"},
		{"subheading", "### Not run", "<h4>Not run</h4>\n"},
		{"not a heading without a space", "#hash", "<p>#hash</p>\n"},
		{"strong and code", "✅ **Succeeded** at `vet`", "<p>✅ <strong>Succeeded</strong> at <code>vet</code></p>\n"},
		{"emphasis", "_The graph is too large._", "<p><em>The graph is too large.</em></p>\n"},
		{"underscores inside words stay", "a snake_case_name here", "<p>a snake_case_name here</p>\n"},
		{"escapes", `a \_b\_ \*c\* \[d\] \\ e`, `<p>a _b_ *c* [d] \ e</p>` + "\n"},
		{"entities the report wrote read once", "x &lt;script&gt; &amp;amp;", "<p>x &lt;script&gt; &amp;amp;</p>\n"},
		{"raw html is text", "<script>alert(1)</script> <b>x</b>", "<p>&lt;script&gt;alert(1)&lt;/script&gt; &lt;b&gt;x&lt;/b&gt;</p>\n"},
		{"code span with backticks", "``a`b``", "<p><code>a`b</code></p>\n"},
		{"code span keeps markup as text", "`<i>**x**</i>`", "<p><code>&lt;i&gt;**x**&lt;/i&gt;</code></p>\n"},
		{"unclosed code span is text", "`open", "<p>`open</p>\n"},
		{"link", "[run details](https://example.test/runs/1?t=a&b=c)", `<p><a href="https://example.test/runs/1?t=a&amp;b=c">run details</a></p>` + "\n"},
		{"javascript link is its label", "[x](javascript:alert(1))", "<p>x)</p>\n"},
		{"data link is its label", "[x](data:text/html,hi)", "<p>x</p>\n"},
		{"protocol-relative link is its label", "[x](//evil.test/)", "<p>x</p>\n"},
		{"quote in a link stays in the attribute", `[x](https://a.test/"onmouseover="y)`, `<p><a href="https://a.test/&#34;onmouseover=&#34;y">x</a></p>` + "\n"},
		{"paragraph lines", "one\ntwo", "<p>one<br>\ntwo</p>\n"},
		{"list", "- ⏭️ `a`: skipped\n- b", "<ul>\n<li>⏭️ <code>a</code>: skipped</li>\n<li>b</li>\n</ul>\n"},
		{"quote", "> **Note:** read me", "<blockquote><p><strong>Note:</strong> read me</p></blockquote>\n"},
		{"code block", "```text\n<b> **x**\n```", "<pre><code>&lt;b&gt; **x**</code></pre>\n"},
		{"code block with a longer fence", "````\n```\nin\n````\nafter", "<pre><code>```\nin</code></pre>\n<p>after</p>\n"},
		{"unclosed code block runs to the end", "```\na\nb", "<pre><code>a\nb</code></pre>\n"},
		{"mermaid folded", "```mermaid\nflowchart TD\n```", "<details class=\"graph\"><summary>Flowchart (Mermaid source)</summary>\n<pre><code>flowchart TD</code></pre>\n</details>\n"},
		{
			"table", "| Node | Attempts |\n|---|---:|\n| `a\\|b` x | 2 |\n| c \\| d | — |",
			"<table>\n<thead><tr><th>Node</th><th class=\"num\">Attempts</th></tr>\n</thead>\n<tbody>\n" +
				"<tr><td><code>a|b</code> x</td><td class=\"num\">2</td></tr>\n<tr><td>c | d</td><td class=\"num\">—</td></tr>\n</tbody>\n</table>\n",
		},
		{"a pipe line without a delimiter row is text", "| a |\nb", "<p>| a |<br>\nb</p>\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(string(runpage.Markdown(tt.in)), tt.want); diff != "" {
				t.Errorf("Markdown(%q) (-got +want):\n%s", tt.in, diff)
			}
		})
	}
}

// allowedTag matches every tag Markdown may write.
var allowedTag = regexp.MustCompile(`^</a>|^</?(h[2-7]|p|br|ul|li|blockquote|pre|code|strong|em|table|thead|tbody|tr|th|td|details|summary)( class="(num|graph)")?>|^<a href="(https?://[^"<>]*|/|/[^/"<>][^"<>]*|#[^"<>]*)">`)

// checkTags fails when html holds a tag Markdown does not write.
func checkTags(t *testing.T, in, html string) {
	t.Helper()
	for i := strings.IndexByte(html, '<'); i >= 0; {
		if !allowedTag.MatchString(html[i:]) {
			t.Fatalf("Markdown(%q) wrote a tag of its own at %q", in, html[i:min(len(html), i+40)])
		}
		j := strings.IndexByte(html[i+1:], '<')
		if j < 0 {
			break
		}
		i += 1 + j
	}
}

func FuzzMarkdown(f *testing.F) {
	for _, s := range []string{"# a\n| a | b |\n|---|--:|\n| `x\\|` | [l](https://a) |", "<img src=x onerror=y>", "&lt;a href=x&gt;",
		"```\n</pre><script>\n```", "[a](https://x\"><script>)", "_a **b_ c**", "> q\n- l\n``` mermaid\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		checkTags(t, in, string(runpage.Markdown(in)))
	})
}

// TestMarkdownOfAReport renders the report the checks write for a run and
// checks that none of its Markdown is left as text.
func TestMarkdownOfAReport(t *testing.T) {
	p, _, err := attractor.Load("ci.dot", []byte(`digraph ci {
  goal="Keep <main> green"
  start [shape=Mdiamond]
  build [shape=parallelogram, tool_command="go build", label="Build | all"]
  vet [shape=octagon, command="go vet"]
  done [shape=Msquare]
  start -> build -> vet -> done
}`))
	if err != nil {
		t.Fatal(err)
	}
	rec := checks.NewRecorder(p, checks.RunInfo{Pipeline: "ci", RunID: runID, HeadSHA: sha1})
	ctx := context.Background()
	for _, id := range []string{"start", "build", "vet"} {
		st := attractor.StatusSuccess
		if id == "vet" {
			st = attractor.StatusFail
		}
		must(t, rec.NodeStarted(ctx, attractor.NodeStarted{RunID: runID, Node: p.Node(id), Visit: 1}))
		must(t, rec.AttemptFinished(ctx, attractor.AttemptFinished{RunID: runID, Node: p.Node(id), Attempt: 1, Final: true,
			Outcome: attractor.Outcome{Status: st, FailureReason: "exit 1: x_y <b>"}, Duration: 1500 * time.Millisecond}))
	}
	must(t, rec.RunFinished(ctx, &attractor.RunResult{Status: attractor.StatusFail, FailedNode: "vet", FailureReason: "vet failed"}))
	md := checks.LocalReport(rec.View(), checks.RenderOptions{})
	got := string(runpage.Markdown(md))
	checkTags(t, md, got)
	for _, want := range []string{"<h2>kilroy/ci: ", "<table>", "<th>Node</th>", "<code>build</code> Build | all", "<strong>Failed</strong>", "Keep &lt;main&gt; green"} {
		if !strings.Contains(got, want) {
			t.Errorf("report HTML lacks %q:\n%s", want, got)
		}
	}
	for _, raw := range []string{"|---", "**", "&amp;lt;", "\\|"} {
		if strings.Contains(got, raw) {
			t.Errorf("report HTML still has Markdown %q:\n%s", raw, got)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func BenchmarkMarkdownHostile(b *testing.B) {
	in := strings.Repeat("_a [", 1<<13) + strings.Repeat("``a`", 1<<13)
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		runpage.Markdown(in)
	}
}
