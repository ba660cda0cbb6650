package attractor

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSelectEdge(t *testing.T) {
	cond := func(src string, cls ...Clause) *Condition { return &Condition{Source: src, Any: [][]Clause{cls}} }
	onFail := cond("outcome=fail", Clause{Key: "outcome", Op: OpEq, Value: "fail"})
	onSuccess := cond("outcome=success", Clause{Key: "outcome", Op: OpEq, Value: "success"})
	ctxFlag := cond("context.ready=true", Clause{Key: "context.ready", Op: OpEq, Value: "true"})
	for _, tc := range []struct {
		name  string
		edges []*Edge
		o     Outcome
		ctx   map[string]any
		want  string // "to method", "" for none
	}{
		{"condition beats weight", []*Edge{{To: "a", Weight: 9}, {To: "b", Condition: onSuccess}}, Outcome{Status: StatusSuccess}, nil, "b condition"},
		{"condition on context", []*Edge{{To: "a"}, {To: "b", Condition: ctxFlag}}, Outcome{Status: StatusSuccess}, map[string]any{"ready": true}, "b condition"},
		{"matched conditions by weight", []*Edge{{To: "a", Condition: onSuccess}, {To: "b", Condition: onSuccess, Weight: 2}}, Outcome{Status: StatusSuccess}, nil, "b condition"},
		{"preferred label normalised", []*Edge{{To: "a", Label: "[Y] Yes"}, {To: "b", Label: "No"}}, Outcome{Status: StatusSuccess, PreferredLabel: " yes "}, nil, "a preferred_label"},
		{"suggested ids", []*Edge{{To: "a"}, {To: "b"}}, Outcome{Status: StatusSuccess, SuggestedNextIDs: []string{"x", "b"}}, nil, "b suggested"},
		{"weight", []*Edge{{To: "a", Weight: 1}, {To: "b", Weight: 3}}, Outcome{Status: StatusSuccess}, nil, "b weight"},
		{"lexical", []*Edge{{To: "m"}, {To: "c"}}, Outcome{Status: StatusSuccess}, nil, "c lexical"},
		{"fail ignores unconditional", []*Edge{{To: "a"}, {To: "b", Label: "retry"}}, Outcome{Status: StatusFail, PreferredLabel: "retry"}, nil, ""},
		{"fail takes fail condition", []*Edge{{To: "a"}, {To: "b", Condition: onFail}}, Outcome{Status: StatusFail}, nil, "b condition"},
		{"retry outcome may follow unconditional", []*Edge{{To: "a"}}, Outcome{Status: StatusRetry}, nil, "a weight"},
		{"nothing matches", []*Edge{{To: "a", Condition: onFail}}, Outcome{Status: StatusSuccess}, nil, ""},
		{"fail follows unconditional into a diamond", []*Edge{{To: "a"}, {To: "check_x"}}, Outcome{Status: StatusFail}, nil, "check_x weight"},
		{"fail into diamonds by weight", []*Edge{{To: "check_b"}, {To: "check_a"}, {To: "a", Weight: 5}}, Outcome{Status: StatusFail}, nil, "check_a lexical"},
		{"fail condition beats a diamond", []*Edge{{To: "check_x"}, {To: "b", Condition: onFail}}, Outcome{Status: StatusFail}, nil, "b condition"},
		{"fail ignores preferred label into a non-diamond", []*Edge{{To: "a", Label: "retry"}, {To: "check_x", Weight: -1}}, Outcome{Status: StatusFail, PreferredLabel: "retry"}, nil, "check_x weight"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewContext(tc.ctx)
			isDiamond := func(id string) bool { return strings.HasPrefix(id, "check_") }
			sel, ok := selectEdge(tc.edges, tc.o, CondVars{Outcome: tc.o.Status, PreferredLabel: tc.o.PreferredLabel, Context: c.String}, isDiamond)
			got := ""
			if ok {
				got = sel.edge.To + " " + string(sel.method)
			}
			if got != tc.want {
				t.Errorf("selected %q, want %q", got, tc.want)
			}
		})
	}
}

func TestLabels(t *testing.T) {
	for _, tc := range []struct{ in, norm, key string }{
		{"[Y] Yes, deploy", "yes, deploy", "Y"},
		{"y) Yes", "yes", "Y"},
		{"N - No", "no", "N"},
		{"  Fix it ", "fix it", "F"},
		{"", "", ""},
	} {
		got := []string{normalizeEdgeLabel(tc.in), acceleratorKey(tc.in)}
		if diff := cmp.Diff(got, []string{tc.norm, tc.key}); diff != "" {
			t.Errorf("%q: normalised, key (-got +want):\n%s", tc.in, diff)
		}
	}
}

func TestBackoffDelay(t *testing.T) {
	b := Backoff{Initial: 100 * time.Millisecond, Factor: 2, Max: time.Second, Jitter: 0.5}
	for _, tc := range []struct {
		retry int
		r     float64
		want  time.Duration
	}{
		{1, 0.5, 100 * time.Millisecond},
		{3, 0.5, 400 * time.Millisecond},
		{10, 0.5, time.Second},
		{1, 0, 50 * time.Millisecond},
		{1, 1, 150 * time.Millisecond},
	} {
		if got := b.Delay(tc.retry, tc.r); got != tc.want {
			t.Errorf("Delay(%d, %v) = %v, want %v", tc.retry, tc.r, got, tc.want)
		}
	}
	if got := effectiveBackoff(Backoff{}, Backoff{}); got != defaultBackoff {
		t.Errorf("effectiveBackoff of nothing = %+v, want the default", got)
	}
	noJitter := Backoff{Initial: time.Second, Factor: 2, Max: time.Minute}
	if got := effectiveBackoff(noJitter, b); got != noJitter {
		t.Errorf("effectiveBackoff = %+v, want the node's policy whole (jitter 0 kept)", got)
	}
}
