package attractor

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestParseStylesheet(t *testing.T) {
	src := `
		* { llm_model: claude-sonnet-4-5; llm_provider: anthropic; }
		/* comment */ box { reasoning_effort: "low" }
		.code { llm_model: 'claude-opus-4-6' }
		#critical_review { llm_model: gpt-5.2; reasoning_effort: high; }`
	got, err := ParseStylesheet(src)
	if err != nil {
		t.Fatal(err)
	}
	want := []StyleRule{
		{Selector: "*", Specificity: 0, Order: 0, Decls: []StyleDecl{{Property: "llm_model", Value: "claude-sonnet-4-5"}, {Property: "llm_provider", Value: "anthropic"}}},
		{Selector: "box", Specificity: 1, Order: 1, Decls: []StyleDecl{{Property: "reasoning_effort", Value: "low"}}},
		{Selector: ".code", Specificity: 2, Order: 2, Decls: []StyleDecl{{Property: "llm_model", Value: "claude-opus-4-6"}}},
		{Selector: "#critical_review", Specificity: 3, Order: 3, Decls: []StyleDecl{{Property: "llm_model", Value: "gpt-5.2"}, {Property: "reasoning_effort", Value: "high"}}},
	}
	ignore := cmpopts.IgnoreFields(StyleRule{}, "Offset")
	ignoreDecl := cmpopts.IgnoreFields(StyleDecl{}, "Offset")
	if diff := cmp.Diff(got, want, ignore, ignoreDecl); diff != "" {
		t.Errorf("ParseStylesheet (-got +want):\n%s", diff)
	}
	if off := got[3].Decls[1].Offset; src[off:off+len("reasoning_effort")] != "reasoning_effort" {
		t.Errorf("decl offset %d points at %q", off, src[off:])
	}
}

func TestParseStylesheetErrors(t *testing.T) {
	tests := []struct {
		src    string
		offset int
		fix    string
	}{
		{"* { llm_modle: x }", 4, `did you mean "llm_model"?`},
		{"boxx { llm_model: x }", 0, `did you mean "box"?`},
		{"* llm_model: x }", 2, "write one selector per rule, then { property: value; }"},
		{"* { llm_model x }", 14, "write llm_model: VALUE;"},
		{"* { llm_model: ; }", 15, "write llm_model: VALUE;"},
		{"* { llm_model: x ", 17, `close the rule with "}"`},
		{". { llm_model: x }", 0, "selectors are *, a shape like box, .class or #node_id"},
		{"box, .code { llm_model: x }", 3, "write one selector per rule, then { property: value; }"},
	}
	for _, tt := range tests {
		_, err := ParseStylesheet(tt.src)
		var se *StylesheetError
		if !errors.As(err, &se) {
			t.Errorf("ParseStylesheet(%q) error = %v, want *StylesheetError", tt.src, err)
			continue
		}
		if se.Offset != tt.offset || se.Fix != tt.fix {
			t.Errorf("ParseStylesheet(%q) = offset %d fix %q (%s); want offset %d fix %q", tt.src, se.Offset, se.Fix, se.Msg, tt.offset, tt.fix)
		}
	}
}
