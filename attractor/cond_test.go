package attractor

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseCondition(t *testing.T) {
	tests := []struct {
		src  string
		want []Clause
	}{
		{"outcome=success", []Clause{{"outcome", OpEq, "success"}}},
		{" outcome = ok ", []Clause{{"outcome", OpEq, "success"}}},
		{"outcome=succeeded", []Clause{{"outcome", OpEq, "success"}}},
		{"outcome=pass", []Clause{{"outcome", OpEq, "success"}}},
		{"outcome=FAILURE", []Clause{{"outcome", OpEq, "fail"}}},
		{"outcome=failed", []Clause{{"outcome", OpEq, "fail"}}},
		{"outcome=error", []Clause{{"outcome", OpEq, "fail"}}},
		{"outcome=skip", []Clause{{"outcome", OpEq, "skipped"}}},
		{"outcome=partial", []Clause{{"outcome", OpEq, "partial_success"}}},
		{"outcome=partial_success", []Clause{{"outcome", OpEq, "partial_success"}}},
		{"outcome=retry", []Clause{{"outcome", OpEq, "retry"}}},
		{"outcome=needs_dod", []Clause{{"outcome", OpEq, "needs_dod"}}},
		{"outcome=Has_DoD2", []Clause{{"outcome", OpEq, "has_dod2"}}},
		{"outcome!=sucess", []Clause{{"outcome", OpNe, "sucess"}}},
		{`outcome!="fail"`, []Clause{{"outcome", OpNe, "fail"}}},
		{`preferred_label="Fix it"`, []Clause{{"preferred_label", OpEq, "Fix it"}}},
		{`preferred_label="a && b"`, []Clause{{"preferred_label", OpEq, "a && b"}}},
		{`context.msg="say \"hi\""`, []Clause{{"context.msg", OpEq, `say "hi"`}}},
		{"outcome=success && context.tests_passed=true", []Clause{
			{"outcome", OpEq, "success"}, {"context.tests_passed", OpEq, "true"}}},
		{"context.loop_state!=exhausted&&context.a.b=1", []Clause{
			{"context.loop_state", OpNe, "exhausted"}, {"context.a.b", OpEq, "1"}}},
		{"context.flag", []Clause{{"context.flag", OpTruthy, ""}}},
		{"tests_passed=true", []Clause{{"tests_passed", OpEq, "true"}}},
		{`context.x=""`, []Clause{{"context.x", OpEq, ""}}},
		{"context.v=1.2.3-rc:1", []Clause{{"context.v", OpEq, "1.2.3-rc:1"}}},
	}
	for _, tt := range tests {
		c, err := ParseCondition(tt.src)
		if err != nil {
			t.Errorf("ParseCondition(%q): %v", tt.src, err)
			continue
		}
		if diff := cmp.Diff(c.Any, [][]Clause{tt.want}); diff != "" {
			t.Errorf("ParseCondition(%q) clauses (-got +want):\n%s", tt.src, diff)
		}
		if c.Source != tt.src {
			t.Errorf("Source = %q, want %q", c.Source, tt.src)
		}
	}
}

func TestParseConditionEmpty(t *testing.T) {
	for _, src := range []string{"", "   "} {
		if c, err := ParseCondition(src); c != nil || err != nil {
			t.Errorf("ParseCondition(%q) = %v, %v; want nil, nil", src, c, err)
		}
	}
}

func TestParseConditionErrors(t *testing.T) {
	tests := []struct {
		src    string
		offset int
		fix    string
	}{
		{"outcome==success", 7, "write = instead of =="},
		{"outcome=success &&", 18, "remove the extra && or add a clause"},
		{"outcome=success ||", 18, "remove the extra || or add a clause"},
		{"(outcome=success || outcome=fail) && context.x", 0, "write alternatives of && clauses, a && b || c (&& binds tighter), or one edge per alternative"},
		{"!success", 1, "write outcome!=success"},
		{"context.x ! y", 10, "! negates a whole clause: write !KEY=VALUE, or KEY!=VALUE"},
		{`context.version matches "^v1"`, 16, relationalFix},
		{"context.n >= 3", 10, relationalFix},
		{"outcom=success", 0, `did you mean "outcome"?`},
		{"tests-passed=true", 0, "use outcome, preferred_label or context.KEY"},
		{`outcome="needs dod"`, 8, "outcome is one of success, partial_success, retry, fail, skipped, or a custom outcome spelled as an identifier such as needs_fix"},
		{`outcome="faild!"`, 8, `did you mean "fail"?`},
		{"success", 0, "write outcome=success"},
		{"context.x=", 10, `write "" to compare with the empty string`},
		{`preferred_label="Fix`, 16, `add the closing "`},
		{"preferred_label=Fix it", 19, `quote the value: "Fix it"`},
		{"context.n>3", 9, relationalFix},
		{"context.=1", 0, "context keys are dotted identifiers like context.tests_passed"},
	}
	for _, tt := range tests {
		_, err := ParseCondition(tt.src)
		var ce *ConditionError
		if !errors.As(err, &ce) {
			t.Errorf("ParseCondition(%q) error = %v, want *ConditionError", tt.src, err)
			continue
		}
		if ce.Offset != tt.offset || ce.Fix != tt.fix {
			t.Errorf("ParseCondition(%q) = offset %d fix %q (%s); want offset %d fix %q", tt.src, ce.Offset, ce.Fix, ce.Msg, tt.offset, tt.fix)
		}
	}
}

func TestConditionEvalAliases(t *testing.T) {
	ctx := map[string]string{"tests_passed": "true", "failure_class": "transient_infra"}
	vars := func(st Status) CondVars {
		return CondVars{Outcome: st, PreferredLabel: "Fix", Context: func(k string) (string, bool) { v, ok := ctx[k]; return v, ok }}
	}
	tests := []struct {
		src  string
		st   Status
		want bool
	}{
		{"outcome=ok", StatusSuccess, true},
		{"outcome=failure", StatusFail, true},
		{"outcome=failure", StatusSuccess, false},
		{"outcome!=success", StatusFail, true},
		{`preferred_label="Fix"`, StatusSuccess, true},
		{"outcome=success && context.tests_passed=true", StatusSuccess, true},
		{"outcome=success && context.tests_passed=false", StatusSuccess, false},
		{"context.missing=x", StatusSuccess, false},
		{`context.missing=""`, StatusSuccess, true},
		{"context.failure_class=transient_infra", StatusFail, true},
		{"context.tests_passed", StatusFail, true},
		{"context.missing", StatusFail, false},
		{"", StatusFail, true},
	}
	for _, tt := range tests {
		c, err := ParseCondition(tt.src)
		if err != nil {
			t.Fatalf("ParseCondition(%q): %v", tt.src, err)
		}
		if got := c.Eval(vars(tt.st)); got != tt.want {
			t.Errorf("%q with outcome %s = %v, want %v", tt.src, tt.st, got, tt.want)
		}
	}
}

func TestConditionCanMatch(t *testing.T) {
	tests := []struct {
		src  string
		want bool
	}{
		{"outcome=fail", true},
		{"outcome!=success", true},
		{"outcome=success", false},
		{"outcome!=fail", false},
		{"context.x=1", true},
		{"outcome=fail && outcome=success", false},
	}
	for _, tt := range tests {
		c, err := ParseCondition(tt.src)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.CanMatch(StatusFail); got != tt.want {
			t.Errorf("%q CanMatch(fail) = %v, want %v", tt.src, got, tt.want)
		}
	}
}
