package checks

import (
	"strings"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// Agent usage reaches the summary check (per node and in total), the
// node check of an agent node with verify_command, and the terminal
// summary; a run a budget stopped is budget-limited in the title and the
// summary. Expected numbers are computed from the attempts given.
func TestUsageOnTheChecks(t *testing.T) {
	const src = `digraph fix {
  start [shape=Mdiamond]
  plan [shape=box, prompt="plan it"]
  code [shape=box, prompt="write it", verify_command="make check"]
  done [shape=Msquare]
  start -> plan -> code -> done
}
`
	plan := attractor.Usage{Backend: "api", Model: "m", InputTokens: 1200, OutputTokens: 340, CacheReadTokens: 5000,
		CostUSD: 0.0231, CostSource: attractor.CostPriced}
	code1 := attractor.Usage{Backend: "claude", InputTokens: 800, OutputTokens: 90, CacheWriteTokens: 2048,
		CostUSD: 0.4, CostSource: attractor.CostReported}
	code2 := attractor.Usage{Backend: "codex", InputTokens: 64000, OutputTokens: 1000, CostSource: attractor.CostUnknown}
	budget := attractor.Outcome{Status: attractor.StatusFail, FailureClass: attractor.ClassBudgetExhausted,
		FailureReason: "agent stopped before its next model call: the run's agent cost budget of $0.5000 (limits.max_cost_usd in .kilroy/config.yml) is reached",
		Usage:         &code2, Meta: map[string]any{attractor.MetaBudgetLimited: true}}

	s := newScript(t, src, RunInfo{Pipeline: "fix", RunID: "r1", HeadSHA: sha(1)})
	s.pass("start", sha(2), "plan", 0)
	s.start("plan").attempt("plan", true, attractor.Outcome{Status: attractor.StatusSuccess, Usage: &plan}, time.Second).
		checkpoint("plan", sha(3)).edge("plan", "code")
	s.start("code").attempt("code", false, attractor.Outcome{Status: attractor.StatusFail, FailureClass: attractor.ClassTransientInfra,
		FailureReason: "stream cut", Usage: &code1}, time.Second)
	s.start("code").attempt("code", true, budget, time.Second).checkpoint("code", sha(4))
	v := s.finish(&attractor.RunResult{Status: attractor.StatusFail, FailedNode: "code", FailureReason: budget.FailureReason,
		FailureClass: attractor.ClassBudgetExhausted})

	var codeTotal, all attractor.UsageTotal
	codeTotal.Add(code1)
	codeTotal.Add(code2)
	all.Add(plan)
	all.Add(code1)
	all.Add(code2)
	if got := v.Node("code").Usage; got != codeTotal {
		t.Errorf("code's usage = %+v, want %+v", got, codeTotal)
	}
	if v.Usage != all || !v.BudgetLimited {
		t.Errorf("run usage = %+v (budget-limited %v), want %+v and budget-limited", v.Usage, v.BudgetLimited, all)
	}

	title, summary, _ := Summary(v, githubOpts())
	if !strings.HasPrefix(title, "budget-limited · ") {
		t.Errorf("title %q does not say budget-limited", title)
	}
	for _, want := range []string{
		"### Agent usage",
		"**Budget-limited:**",
		cell("limits.max_cost_usd in .kilroy/config.yml"),
		usageRow(codeCell("plan"), v.Node("plan").Usage),
		usageRow(codeCell("code"), codeTotal),
		usageRow("**Total**", all),
		"1 attempt of unknown cost",
	} {
		if !strings.Contains(summary, want) {
			t.Errorf("the summary lacks %q:\n%s", want, summary)
		}
	}
	// The numbers in the rows are the sums, written out.
	if row := usageRow("**Total**", all); !strings.Contains(row, attractor.Thousands(1200+800+64000)) ||
		!strings.Contains(row, attractor.USD(0.0231+0.4)+" + unknown") {
		t.Errorf("total row %q does not carry the summed input tokens and cost", row)
	}
	rep := VerifyCheck(v, "code", githubOpts())
	if want := "Agent usage: " + codeTotal.String(); !strings.Contains(rep.Summary, want) {
		t.Errorf("code's check lacks %q:\n%s", want, rep.Summary)
	}
	term := TerminalSummary(v, TerminalOptions{})
	for _, want := range []string{"agents used " + all.String(), codeTotal.String(), "budget-limited"} {
		if !strings.Contains(term, want) {
			t.Errorf("the terminal summary lacks %q:\n%s", want, term)
		}
	}
}

// A run whose agents report no usage shows no usage section.
func TestNoUsageNoSection(t *testing.T) {
	s := newScript(t, ciDOT, RunInfo{Pipeline: "ci"})
	s.pass("start", sha(2), "build", 0)
	v := s.r.View()
	if _, summary, _ := Summary(v, RenderOptions{}); strings.Contains(summary, "Agent usage") {
		t.Errorf("a run without agent usage has a usage section:\n%s", summary)
	}
}

// A resumed run's checks count the usage of the nodes it finished before
// it was interrupted, then what it spends after.
func TestUsageSeededOnResume(t *testing.T) {
	const src = `digraph fix {
  start [shape=Mdiamond]
  plan [shape=box, prompt="plan it"]
  code [shape=box, prompt="write it"]
  done [shape=Msquare]
  start -> plan -> code -> done
}
`
	before := attractor.UsageTotal{Attempts: 2, InputTokens: 3000, OutputTokens: 200, CostUSD: 0.05}
	after := attractor.Usage{InputTokens: 700, OutputTokens: 70, CostUSD: 0.01, CostSource: attractor.CostPriced}
	s := newScript(t, src, RunInfo{Pipeline: "fix"})
	s.r.Seed(Prior{Nodes: []PriorNode{{ID: "plan", Visits: 1, Attempts: 2, Outcome: attractor.Outcome{Status: attractor.StatusSuccess}, Usage: before}}})
	s.start("code").attempt("code", true, attractor.Outcome{Status: attractor.StatusSuccess, Usage: &after}, time.Second)
	v := s.r.View()
	want := before
	want.Add(after)
	if v.Usage != want || v.Node("plan").Usage != before {
		t.Errorf("run usage %+v (plan %+v), want %+v (plan %+v)", v.Usage, v.Node("plan").Usage, want, before)
	}
}
