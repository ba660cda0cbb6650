package attractor

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var gateQuestion = Question{Node: "gate", Text: "Ship it?", Choices: []Choice{
	{Key: "A", Label: "[A] Approve", To: "ship"}, {Key: "R", Label: "[R] Request changes", To: "fix"}}}

func TestConsoleInterviewer(t *testing.T) {
	var out bytes.Buffer
	c := NewConsole(strings.NewReader("2\nr\n"), &out)
	var got []string
	for range 3 {
		a, err := c.Ask(context.Background(), gateQuestion)
		if err != nil {
			t.Fatal(err)
		}
		ch, ok := matchChoice(a, gateQuestion.Choices)
		got = append(got, ch.To+" "+map[bool]string{true: "ok", false: "none"}[ok]+" "+map[bool]string{true: "skipped", false: ""}[a.Skipped])
	}
	if diff := cmp.Diff(got, []string{"fix ok ", "fix ok ", " none skipped"}); diff != "" {
		t.Errorf("answers (-got +want):\n%s", diff)
	}
	if !strings.Contains(out.String(), "[?] Ship it?\n  1) [A] Approve\n  2) [R] Request changes\nSelect: ") {
		t.Errorf("console output:\n%s", out.String())
	}
}

// TestConsoleAsksAgain: an answer that names no choice (a typo, an empty
// line) is asked again instead of ending the run at the gate.
func TestConsoleAsksAgain(t *testing.T) {
	for _, tc := range []struct {
		name, input string
		want        Answer
		wantOut     []string
	}{
		{
			name:    "typo then label",
			input:   "aprove\napprove\n",
			want:    Answer{Choice: "approve"},
			wantOut: []string{`"aprove" is none of the choices: type its number (1-2), key or label; did you mean "approve"?`, "Select: "},
		},
		{
			name:    "empty line then number",
			input:   "\n2\n",
			want:    Answer{Choice: "[R] Request changes"},
			wantOut: []string{"type its number (1-2), key or label\n"},
		},
		{
			name:    "out of range then end of input",
			input:   "7\n",
			want:    Answer{Skipped: true},
			wantOut: []string{`"7" is none of the choices`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			got, err := NewConsole(strings.NewReader(tc.input), &out).Ask(context.Background(), gateQuestion)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(got, tc.want); diff != "" {
				t.Errorf("answer (-got +want):\n%s", diff)
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(out.String(), w) {
					t.Errorf("console output does not say %q:\n%s", w, out.String())
				}
			}
			if n := strings.Count(out.String(), "[?] Ship it?"); n != 1 {
				t.Errorf("question printed %d times, want once:\n%s", n, out.String())
			}
		})
	}
}

func TestConsoleChoiceText(t *testing.T) {
	for _, tt := range []struct {
		ch   Choice
		want string
	}{
		{Choice{Key: "A", Label: "[A] Approve"}, "[A] Approve"},
		{Choice{Key: "Y", Label: "Yes"}, "[Y] Yes"},
		{Choice{Key: "f", Label: "fix"}, "[f] fix"},
	} {
		if got := choiceText(tt.ch); got != tt.want {
			t.Errorf("choiceText(%+v) = %q, want %q", tt.ch, got, tt.want)
		}
	}
}

func TestAutoFirstAndQueue(t *testing.T) {
	a, _ := AutoFirst{}.Ask(context.Background(), gateQuestion)
	if ch, _ := matchChoice(a, gateQuestion.Choices); ch.To != "ship" {
		t.Errorf("AutoFirst chose %q, want ship", ch.To)
	}
	q := NewQueue(Answer{Choice: "R"})
	first, _ := q.Ask(context.Background(), gateQuestion)
	second, _ := q.Ask(context.Background(), gateQuestion)
	if first.Choice != "R" || !second.Skipped || len(q.Asked()) != 2 {
		t.Errorf("queue answers %+v, %+v after %d questions", first, second, len(q.Asked()))
	}
}
