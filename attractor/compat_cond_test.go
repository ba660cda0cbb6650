package attractor

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Fabro's and attractor-kotlin's condition language: ||, ! and contains
// are read as ours, && binding tighter than ||.
func TestParseConditionOtherEngines(t *testing.T) {
	eq := func(k, v string) Clause { return Clause{k, OpEq, v} }
	for _, tt := range []struct {
		src  string
		want [][]Clause
	}{
		{"outcome=succeeded || outcome=partially_succeeded", [][]Clause{{eq("outcome", "success")}, {eq("outcome", "partial_success")}}},
		{"!outcome=succeeded", [][]Clause{{{"outcome", OpNe, "success"}}}},
		{"! outcome!=fail", [][]Clause{{eq("outcome", "fail")}}},
		{"outcome=succeeded && context.ready=true || context.override", [][]Clause{
			{eq("outcome", "success"), eq("context.ready", "true")}, {{"context.override", OpTruthy, ""}}}},
		{"context.a=1 || context.b=2 && !context.c", [][]Clause{
			{eq("context.a", "1")}, {eq("context.b", "2"), {"context.c", OpFalsy, ""}}}},
		{"!!context.flag", [][]Clause{{{"context.flag", OpTruthy, ""}}}},
		{`context.msg contains "build failed"`, [][]Clause{{{"context.msg", OpContains, "build failed"}}}},
		{"context.tags !contains slow", [][]Clause{{{"context.tags", OpNotContains, "slow"}}}},
		{"!context.tags contains slow", [][]Clause{{{"context.tags", OpNotContains, "slow"}}}},
		{`context.msg="a || b" || context.x="contains y"`, [][]Clause{{eq("context.msg", "a || b")}, {eq("context.x", "contains y")}}},
	} {
		c, err := ParseCondition(tt.src)
		if err != nil {
			t.Errorf("ParseCondition(%q): %v", tt.src, err)
			continue
		}
		if diff := cmp.Diff(c.Any, tt.want); diff != "" {
			t.Errorf("ParseCondition(%q) (-got +want):\n%s", tt.src, diff)
		}
	}
}

func TestConditionEvalOtherEngines(t *testing.T) {
	ctx := map[string]string{"ready": "true", "msg": "3 tests failed", "tags": `["slow","net"]`, "word": "slowly"}
	vars := func(st Status, extra ...string) CondVars {
		return CondVars{Outcome: st, Context: func(k string) (string, bool) {
			for i := 0; i+1 < len(extra); i += 2 {
				if extra[i] == k {
					return extra[i+1], true
				}
			}
			v, ok := ctx[k]
			return v, ok
		}}
	}
	for _, tt := range []struct {
		src  string
		vars CondVars
		want bool
	}{
		{"outcome=succeeded || outcome=partially_succeeded", vars(StatusPartialSuccess), true},
		{"outcome=succeeded || outcome=partially_succeeded", vars(StatusFail), false},
		{"!outcome=succeeded", vars(StatusFail), true},
		{"!outcome=succeeded", vars(StatusSuccess), false},
		// && binds tighter: (success && ready) || override.
		{"outcome=success && context.ready=true || context.override", vars(StatusFail), false},
		{"outcome=success && context.ready=true || context.override", vars(StatusFail, "override", "true"), true},
		{"outcome=success && context.ready=true || context.override", vars(StatusSuccess), true},
		{"outcome=success && context.ready=false || context.override", vars(StatusSuccess), false},
		// An unset key is "": it satisfies no alternative by itself.
		{"outcome=success || context.missing", vars(StatusFail), false},
		{"outcome=success || context.missing=yes", vars(StatusFail), false},
		{"outcome=success || context.missing contains yes", vars(StatusFail), false},
		{"!context.missing", vars(StatusFail), true},
		{"context.msg contains failed", vars(StatusFail), true},
		{"context.msg contains passed", vars(StatusFail), false},
		{"context.msg !contains passed", vars(StatusFail), true},
		// A JSON array value: membership, not a substring of its text.
		{"context.tags contains slow", vars(StatusFail), true},
		{"context.tags contains low", vars(StatusFail), false},
		{"context.word contains low", vars(StatusFail), true},
	} {
		c, err := ParseCondition(tt.src)
		if err != nil {
			t.Fatalf("ParseCondition(%q): %v", tt.src, err)
		}
		if got := c.Eval(tt.vars); got != tt.want {
			t.Errorf("%q with outcome %s = %v, want %v", tt.src, tt.vars.Outcome, got, tt.want)
		}
	}
}

func TestConditionCanMatchAlternatives(t *testing.T) {
	for _, tt := range []struct {
		src  string
		want bool
	}{
		{"outcome=success || outcome=fail", true},
		{"outcome=success || outcome=partial_success", false},
		{"!outcome=fail", false},
		{"!outcome=success", true},
		{"outcome=success || context.x=1", true},
	} {
		c, err := ParseCondition(tt.src)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.CanMatch(StatusFail); got != tt.want {
			t.Errorf("%q CanMatch(fail) = %v, want %v", tt.src, got, tt.want)
		}
	}
}

// Each construct read from another engine's condition language is a
// warning at its position naming the engine and ours.
func TestConditionOtherEnginesWarn(t *testing.T) {
	for _, tc := range []struct {
		cond, want, msg string
	}{
		{`outcome=succeeded`, "dialect_alias@4:35", `outcome "succeeded" is Fabro's spelling of success: read as success`},
		{`outcome=failed`, "dialect_alias@4:35", `outcome "failed" is Fabro's spelling of fail: read as fail`},
		{`outcome=partially_succeeded`, "dialect_alias@4:35", `outcome "partially_succeeded" is Fabro's spelling of partial_success: read as partial_success`},
		{`context.a=1 || context.b=1`, "dialect_alias@4:39", "|| is Fabro's extension of the condition language: read as or, with && binding tighter"},
		{`!context.a`, "dialect_alias@4:27", "! is Fabro's extension of the condition language: read as not"},
		{`context.a contains x`, "dialect_alias@4:37", "contains is Fabro's and attractor-kotlin's extension"},
	} {
		t.Run(tc.cond, func(t *testing.T) {
			src := fmt.Sprintf("digraph G {\nstart [shape=Mdiamond]; done [shape=Msquare]\nstart -> done\nstart -> done [condition=%q]\n}", tc.cond)
			_, ds := load(t, src)
			var got []Diagnostic
			for _, d := range ds {
				if d.Rule == RuleDialectAlias {
					got = append(got, d)
				}
			}
			if len(got) != 1 || rulesOf(got)[0] != tc.want || !strings.Contains(got[0].Message, tc.msg) || got[0].Severity != SeverityWarning {
				t.Errorf("got %v, want one warning %s containing %q", got, tc.want, tc.msg)
			}
			if ds.HasErrors() {
				t.Errorf("errors: %v", ds.Errors())
			}
		})
	}
}

// Runs: a status file in Fabro's spelling routes as the status it means,
// and || routes as or; a failure never takes an alternative written for
// success because a context key is unset.
func TestRunOtherEnginesConditions(t *testing.T) {
	const pipeline = `digraph G {
	start [shape=Mdiamond]; done [shape=Msquare]
	work [shape=parallelogram, tool_command=%q]
	ship [shape=parallelogram, tool_command="true"]
	fix [shape=parallelogram, tool_command="true"]
	start -> work
	work -> ship [condition=%q]
	work -> fix [condition="outcome=failed"]
	ship -> done
	fix -> done
}`
	status := func(s string) string {
		return fmt.Sprintf(`echo '{"status":%q}' > $KILROY_STAGE_STATUS_PATH`, s)
	}
	for _, tc := range []struct {
		name, cmd, cond string
		wantPath        []string
	}{
		{"status file succeeded is success", status("succeeded"), "outcome=success", []string{"start", "work", "ship", "done"}},
		{"status file failed is fail", status("failed"), "outcome=success", []string{"start", "work", "fix", "done"}},
		{"partially_succeeded takes the || alternative", status("partially_succeeded"),
			"outcome=succeeded || outcome=partially_succeeded", []string{"start", "work", "ship", "done"}},
		{"an unset key does not route a failure as success", "exit 1",
			"outcome=succeeded || context.override", []string{"start", "work", "fix", "done"}},
		{"! reads as not", "true", "!outcome=failed", []string{"start", "work", "ship", "done"}},
		{"contains reads the context", `echo '{"status":"success","context_updates":{"log":"all 12 passed"}}' > $KILROY_STAGE_STATUS_PATH`,
			"context.log contains passed", []string{"start", "work", "ship", "done"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			res := h.run(mustLoad(t, fmt.Sprintf(pipeline, tc.cmd, tc.cond)))
			if diff := cmp.Diff(res.Completed, tc.wantPath); diff != "" {
				t.Errorf("path (-got +want):\n%s\n%s %s", diff, res.Status, res.FailureReason)
			}
		})
	}
}

// FuzzConditionNegation: a clause that parses negates with a leading !,
// and the negation holds exactly when the clause does not, whatever the
// outcome and context (an unset key included).
func FuzzConditionNegation(f *testing.F) {
	for _, s := range []string{"outcome=succeeded", "context.x", "context.x contains a", "context.x !contains a",
		`preferred_label!="Fix"`, "context.tags contains slow", "!context.x=1"} {
		f.Add(s, "success", "a")
	}
	f.Fuzz(func(t *testing.T, src, outcome, val string) {
		c, err := ParseCondition(src)
		if err != nil || c == nil || len(c.Any) != 1 || len(c.Any[0]) != 1 {
			return
		}
		n, err := ParseCondition("!" + src)
		if err != nil {
			t.Fatalf("%q parses but !%q does not: %v", src, src, err)
		}
		for _, set := range []bool{false, true} {
			v := CondVars{Outcome: Status(outcome), PreferredLabel: val, Context: func(string) (string, bool) { return val, set }}
			if c.Eval(v) == n.Eval(v) {
				t.Fatalf("%q and !%q both %v (outcome %q, value %q set %v)", src, src, c.Eval(v), outcome, val, set)
			}
		}
	})
}
